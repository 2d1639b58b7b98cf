// Merge requests from selection to publication: a request records its inputs before the target is
// checked, every failed attempt leaves it pending with its error, and a retry recomputes from the
// frozen inputs, decisions and settings. Nothing reaches the target before the publishing transaction.
#include "merge/merge_branch.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "merge/ancestry.hpp"
#include "merge/storage_identity.hpp"
#include "storage/branch_lock.hpp"

#include <chrono>
#include <cstdio>

namespace differential {

std::string MergeOptions::Canonical() const {
	std::string out;
	if (schema_mode != SchemaMode::STRICT) {
		out += std::string("|schema_mode=") + SchemaModeName(schema_mode);
	}
	if (!resolution_tables.empty()) {
		out += "|resolution_tables=" + CanonicalMapping(resolution_tables);
	}
	return out;
}

std::string MergeBranchRequest::Canonical() const {
	auto opt = [](const std::optional<int64_t> &v) {
		return v ? std::to_string(*v) : std::string("-");
	};
	return "merge_branch|" + database + "|" + target + "|" + source + "|" + destination + "|" + opt(expected_base) +
	       "|" + opt(expected_ours) + "|" + opt(expected_theirs);
}

std::string MergeSnapshotsRequest::Canonical() const {
	return "merge_snapshots|" + database + "|" + std::to_string(base) + "|" + std::to_string(ours) + "|" +
	       std::to_string(theirs) + "|" + destination;
}

using Clock = std::chrono::steady_clock;

static int64_t MillisSince(Clock::time_point start) {
	return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

static MergeBranchResult FromRecord(const MergeRecord &record) {
	MergeBranchResult result;
	result.branch_name = record.branch_name;
	result.snapshot_id = record.snapshot_id;
	result.merge_action = record.merge_action;
	result.base = record.base_snapshot_id;
	result.ours = record.ours_snapshot_id;
	result.theirs = record.theirs_snapshot_id;
	result.operation_id = record.operation_id;
	result.replayed = true;
	return result;
}

//! What an earlier call with the same request id left: a completed result to return, or a pending
//! request whose frozen inputs a retry reuses. Refuses a request id used with other arguments, and
//! an aborted request.
struct PriorRequest {
	std::optional<MergeBranchResult> completed;
	std::optional<MergeRecord> pending;
};

static PriorRequest LookupRequest(MetadataStore &metadata, const std::string &database,
                                  const std::optional<std::string> &request_id, const std::string &arguments) {
	PriorRequest prior;
	if (!request_id || !metadata.history.FindDatabase(database)) {
		return prior;
	}
	auto done = metadata.merges.FindMergeRequest(database, *request_id);
	if (!done) {
		return prior;
	}
	if (done->arguments != arguments) {
		Fail(ErrorKind::INVALID_INPUT, "merge_request_mismatch",
		     "Request " + QuoteName(*request_id) +
		         " was already used with other arguments; nothing was merged. Use a new request_id for a different "
		         "merge.");
	}
	if (done->state == MergeRequestState::ABORTED) {
		Fail(ErrorKind::INVALID_INPUT, "merge_aborted",
		     "Request " + QuoteName(*request_id) +
		         " was aborted, which is final; nothing was merged. Start the merge again under a new request_id.");
	}
	if (done->state == MergeRequestState::COMPLETE) {
		prior.completed = FromRecord(*done);
	} else {
		prior.pending = *done;
	}
	return prior;
}

static std::string PredictedAction(const MergeBranchResult &inputs, bool create_destination) {
	return create_destination             ? "created_branch"
	       : inputs.base == inputs.theirs ? "already_up_to_date"
	       : inputs.base == inputs.ours   ? "fast_forward"
	                                      : "merged";
}

static bool Trivial(const MergeBranchResult &inputs) {
	return inputs.base == inputs.theirs || inputs.base == inputs.ours;
}

static void RequireDatabase(MetadataStore &metadata, const std::string &database) {
	if (!metadata.history.FindDatabase(database)) {
		Fail(ErrorKind::NOT_FOUND, "database_not_found",
		     "Database " + QuoteName(database) + " does not exist. List databases with differential_databases().");
	}
}

//! The heads of both branches and their base; refuses unknown names and missing or ambiguous bases.
static MergeBranchResult SelectInputs(MetadataStore &metadata, const std::string &database, const std::string &target,
                                      const std::string &source) {
	RequireDatabase(metadata, database);
	MergeBranchResult result;
	for (auto pair : {std::make_pair(&target, &result.ours), std::make_pair(&source, &result.theirs)}) {
		auto branch = metadata.history.FindBranch(database, *pair.first);
		if (!branch) {
			Fail(ErrorKind::NOT_FOUND, "branch_not_found",
			     "Database " + QuoteName(database) + " has no branch " + QuoteName(*pair.first) +
			         ". List branches with differential_branches('" + database + "').");
		}
		if (!branch->head_snapshot_id) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_not_found",
			     "Branch " + QuoteName(*pair.first) +
			         " has no snapshot yet; merges read published snapshots only. Take one with "
			         "differential_create_snapshot() first.");
		}
		*pair.second = *branch->head_snapshot_id;
	}
	auto ancestry = ComputeAncestry(metadata.history.SnapshotParents(database), result.ours, result.theirs);
	if (ancestry.selection == BaseSelection::AMBIGUOUS) {
		Fail(ErrorKind::INVALID, "merge_base_ambiguous",
		     "Multiple best common ancestors; use differential_merge_snapshots with an explicit base (see "
		     "differential_merge_ancestry('" +
		         database + "', " + std::to_string(result.ours) + ", " + std::to_string(result.theirs) + ")).");
	}
	if (ancestry.selection == BaseSelection::UNRELATED) {
		Fail(ErrorKind::INVALID_INPUT, "merge_base_missing",
		     "The heads of " + QuoteName(target) + " and " + QuoteName(source) +
		         " share no recorded ancestor, so there is no base to merge from.");
	}
	result.base = *ancestry.base;
	if (!metadata.history.FindSnapshot(database, result.base)) {
		Fail(ErrorKind::NOT_FOUND, "snapshot_expired",
		     "The merge base, snapshot " + std::to_string(result.base) + " of database " + QuoteName(database) +
		         ", was expired; a merge needs its base kept. Merge with differential_merge_snapshots and a kept "
		         "base instead.");
	}
	return result;
}

//! Inputs frozen by an earlier failed attempt of the same request; they must still be kept.
static MergeBranchResult FrozenInputs(MetadataStore &metadata, const std::string &database,
                                      const MergeRecord &pending) {
	MergeBranchResult result;
	result.base = pending.base_snapshot_id;
	result.ours = pending.ours_snapshot_id;
	result.theirs = pending.theirs_snapshot_id;
	for (auto id : {result.base, result.ours, result.theirs}) {
		if (!metadata.history.FindSnapshot(database, id)) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_expired",
			     "Snapshot " + std::to_string(id) + ", an input frozen by the first attempt of request " +
			         QuoteName(pending.request_id) + ", is gone; the request cannot be retried. Start a new request.");
		}
	}
	return result;
}

static void RequireKeptInputs(MetadataStore &metadata, const std::string &database,
                              const std::vector<int64_t> &snapshots) {
	auto graph = metadata.history.SnapshotParents(database);
	for (auto id : snapshots) {
		if (!metadata.history.FindSnapshot(database, id)) {
			Fail(ErrorKind::NOT_FOUND, graph.count(id) ? "snapshot_expired" : "snapshot_not_found",
			     "Snapshot " + std::to_string(id) + " of database " + QuoteName(database) +
			         (graph.count(id) ? " was expired" : " does not exist") +
			         "; a merge needs all three inputs kept. List them with differential_snapshots('" + database +
			         "').");
		}
	}
}

static SessionSettings Settings(const MergeOptions &options, const std::string &time_zone,
                                const std::string &calendar) {
	SessionSettings settings;
	settings.schema_mode = options.schema_mode;
	settings.time_zone = time_zone;
	settings.calendar = calendar;
	settings.conflict_limit = options.conflict_limit;
	settings.conflict_offset = options.conflict_offset;
	settings.skip_unchanged = options.skip_unchanged;
	return settings;
}

static MergeInputs Inputs(const MergeBranchResult &result) {
	return MergeInputs {result.base, result.ours, result.theirs};
}

//! The request's decisions: frozen by its first attempt whose decisions were valid, or read now
//! (`fresh` tells that they still need freezing).
static std::vector<FrozenResolution> Resolutions(MetadataStore &metadata, MergeSession &session,
                                                 const std::string &database, const std::string &request_id,
                                                 const ResolutionMapping &mapping, bool &fresh) {
	std::vector<FrozenResolution> resolutions;
	fresh = false;
	if (!request_id.empty()) {
		for (auto &frozen : metadata.merges.FrozenResolutions(database, request_id)) {
			resolutions.push_back(DeserializeResolution(frozen.first, frozen.second));
		}
		if (!resolutions.empty()) {
			return resolutions;
		}
	}
	if (mapping.empty()) {
		return resolutions;
	}
	fresh = true;
	return ReadResolutionTables(session.Connection(), mapping, session.ComparedTables());
}

//! Freezes decisions that passed validation: a retry uses exactly these, even if the tables change.
static void Freeze(MetadataStore &metadata, const std::string &database, const std::string &request_id,
                   const std::vector<FrozenResolution> &resolutions) {
	if (request_id.empty() || resolutions.empty()) {
		return;
	}
	std::vector<std::pair<std::string, std::string>> blobs;
	for (auto &resolution : resolutions) {
		blobs.emplace_back(resolution.table, SerializeResolution(resolution));
	}
	metadata.merges.FreezeResolutions(database, request_id, blobs);
}

static std::string ConflictingRows(int64_t conflicts) {
	return std::to_string(conflicts) + " conflicting row" + (conflicts == 1 ? "" : "s");
}

static int64_t ConflictCount(const MergeBranchResult &result) {
	int64_t total = 0;
	for (auto &object : result.objects) {
		total += object.counts.conflicts;
	}
	return total;
}

static std::string JsonText(const std::string &text) {
	std::string out = "\"";
	for (char c : text) {
		if (c == '"' || c == '\\') {
			out += '\\';
		}
		if (static_cast<unsigned char>(c) < 0x20) {
			char escaped[8];
			snprintf(escaped, sizeof(escaped), "\\u%04x", c);
			out += escaped;
			continue;
		}
		out += c;
	}
	return out + "\"";
}

//! The merge snapshot's commit_extra_info: the algorithm, the operation and the three inputs with
//! their content roots, so a result always tells where it came from.
static std::string Provenance(MetadataStore &metadata, const std::string &repository, const std::string &database,
                              const MergeOptions &options, const MergeRecord &record) {
	auto input = [&](const char *name, int64_t id) {
		return JsonText(name) + ": {\"snapshot_id\": " + std::to_string(id) +
		       ", \"content_root\": " + JsonText(SnapshotContentRoot(metadata, repository, database, id)) + "}";
	};
	auto operation = record.arguments.substr(0, record.arguments.find('|'));
	return "{\"algorithm\": \"differential-three-way-cell-1\", \"operation\": " + JsonText(operation) +
	       ", \"request_id\": " + (record.request_id.empty() ? std::string("null") : JsonText(record.request_id)) +
	       ", \"schema_mode\": " + JsonText(SchemaModeName(options.schema_mode)) + ", " +
	       input("base", record.base_snapshot_id) + ", " + input("ours", record.ours_snapshot_id) + ", " +
	       input("theirs", record.theirs_snapshot_id) + "}";
}

//! Compares, stages and publishes a merge whose both sides changed since the base.
static void StageAndPublish(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                            const std::string &database, const std::string &destination, bool create_destination,
                            const MergeOptions &options, MergeRecord record, MergeBranchResult &result,
                            MergeOperation &operation) {
	auto planning_start = Clock::now();
	MergeSession session(instance, metadata, repository, database, Inputs(result),
	                     Settings(options, record.time_zone, record.calendar), operation);
	result.timings.planning_ms = MillisSince(planning_start);
	auto comparison_start = Clock::now();
	bool fresh = false;
	auto resolutions = Resolutions(metadata, session, database, record.request_id, options.resolution_tables, fresh);
	try {
		session.Run(true, false, resolutions, result.objects);
		if (fresh) {
			Freeze(metadata, database, record.request_id, resolutions);
		}
	} catch (duckdb::Exception &e) {
		// Errors of queries run on a connection come back as a plain Exception carrying their type.
		if (duckdb::ErrorData(e).Type() != duckdb::ExceptionType::CONSTRAINT) {
			throw;
		}
		Fail(ErrorKind::CONFLICT, "merge_validation_failed",
		     "The merged result violates a constraint (" + duckdb::ErrorData(e).RawMessage() +
		         "), though each side alone satisfies it; nothing was merged. Preview it with validate => true and "
		         "reconcile the rows on one branch.");
	}
	if (auto conflict = session.FirstSchemaConflict()) {
		Fail(ErrorKind::INVALID_INPUT, conflict->kind,
		     "Schema conflict: " + conflict->message +
		         "; nothing was merged. Decisions cannot resolve schema conflicts: align the object on one branch, "
		         "snapshot it, and merge again (preview with schema_mode to see every conflict).");
	}
	auto conflicts = ConflictCount(result);
	if (conflicts > 0) {
		Fail(ErrorKind::INVALID_INPUT, "merge_conflict",
		     ConflictingRows(conflicts) + "; use differential_merge_snapshots_preview('" + database + "', " +
		         std::to_string(result.base) + ", " + std::to_string(result.ours) + ", " +
		         std::to_string(result.theirs) +
		         ") to page through conflict_details, then pass decisions with resolution_tables => under a new "
		         "request_id. Nothing was merged.");
	}
	session.FinishStaging();
	record.extra_info = Provenance(metadata, repository, database, options, record);
	result.timings.application_ms = session.application_ms;
	result.timings.comparison_ms = MillisSince(comparison_start) - session.application_ms;
	operation.Phase("publication", 95);
	auto publication_start = Clock::now();
	result.snapshot_id = metadata.merges.PublishMerge(database, session.staging, destination, create_destination, record);
	session.published = true;
	result.branch_name = destination;
	result.merge_action = record.merge_action;
	result.timings.publication_ms = MillisSince(publication_start);
}

static MergeRecord NewRecord(const std::optional<std::string> &request_id, const std::string &arguments,
                                            const MergeBranchResult &inputs, const std::string &destination,
                                            const std::string &action) {
	MergeRecord record;
	record.request_id = request_id.value_or("");
	record.arguments = arguments;
	record.base_snapshot_id = inputs.base;
	record.ours_snapshot_id = inputs.ours;
	record.theirs_snapshot_id = inputs.theirs;
	record.branch_name = destination;
	record.merge_action = action;
	return record;
}

//! The code of a refusal raised inside the merge's own connection (e.g. by its ATTACH of an input),
//! which reaches us as a DuckDB error carrying the "[differential:<code>]" text.
static std::string ErrorCodeIn(const std::string &message) {
	static const std::string marker = "[differential:";
	auto at = message.find(marker);
	if (at == std::string::npos) {
		return "internal";
	}
	auto end = message.find(']', at);
	return message.substr(at + marker.size(), end == std::string::npos ? std::string::npos : end - at - marker.size());
}

//! Runs one attempt of a request: records its start, and a failure as the request's latest error.
template <class ATTEMPT>
static void Attempt(MetadataStore &metadata, const std::string &database, MergeRecord &record,
                    MergeBranchResult &result, MergeOperation &operation, ATTEMPT attempt) {
	if (!record.request_id.empty()) {
		result.operation_id = metadata.merges.BeginMergeAttempt(database, record);
		operation.SetOperationId(result.operation_id);
	}
	try {
		attempt();
	} catch (std::exception &error) {
		if (!record.request_id.empty()) {
			auto *known = dynamic_cast<DifferentialError *>(&error);
			auto *engine = dynamic_cast<duckdb::Exception *>(&error);
			auto message = known    ? std::string(known->what())
			               : engine ? duckdb::ErrorData(*engine).RawMessage()
			                        : std::string(error.what());
			try {
				metadata.merges.RecordPendingMerge(database, record, known ? known->code : ErrorCodeIn(message), message);
			} catch (...) {
				// The failure itself is what the caller must see.
			}
		}
		throw;
	}
}

MergeBranchResult MergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                              const std::string &repository, const MergeBranchRequest &request,
                              const MergeOptions &options) {
	auto selection_start = Clock::now();
	auto arguments = request.Canonical() + options.Canonical();
	auto prior = LookupRequest(metadata, request.database, request.request_id, arguments);
	if (prior.completed) {
		return *prior.completed;
	}
	// A replay above needs no slot; everything below counts against the concurrency limit.
	MergeOperation operation(request.database, request.request_id.value_or(""), options.max_concurrent, options.limits,
	                         options.progress);
	bool create_destination = request.destination != request.target;
	if (create_destination && metadata.history.FindBranch(request.database, request.destination)) {
		Fail(ErrorKind::CONFLICT, "branch_exists",
		     "The destination " + QuoteName(request.destination) +
		         " is an existing branch other than the target; nothing was merged. Merge into the target itself, "
		         "or into a new branch name.");
	}
	// A retry recomputes from the inputs the first attempt selected, not from today's heads.
	auto result = prior.pending ? FrozenInputs(metadata, request.database, *prior.pending)
	                            : SelectInputs(metadata, request.database, request.target, request.source);
	auto record = NewRecord(request.request_id, arguments, result, request.destination,
	                        PredictedAction(result, create_destination));
	record.time_zone = prior.pending ? prior.pending->time_zone : options.time_zone;
	record.calendar = prior.pending ? prior.pending->calendar : options.calendar;
	Attempt(metadata, request.database, record, result, operation, [&]() {
		if ((request.expected_base && *request.expected_base != result.base) ||
		    (request.expected_ours && *request.expected_ours != result.ours) ||
		    (request.expected_theirs && *request.expected_theirs != result.theirs)) {
			Fail(ErrorKind::CONFLICT, "merge_inputs_changed",
			     "The merge inputs are base " + std::to_string(result.base) + ", ours " + std::to_string(result.ours) +
			         ", theirs " + std::to_string(result.theirs) +
			         ", not the expected ones; nothing was merged. Review the new inputs and retry with their ids.");
		}
		result.timings.selection_ms = MillisSince(selection_start);
		auto check_start = Clock::now();
		std::unique_ptr<BranchLock> target_lock;
		if (!create_destination) {
			try {
				RequireBranchClosed(repository, request.database, request.target);
			} catch (DifferentialError &error) {
				if (error.code != "active_attachment_or_transaction") {
					throw;
				}
				Fail(ErrorKind::INVALID, error.code,
				     "Merge target must be detached with no transaction holding it: branch " +
				         QuoteName(request.target) +
				         " is attached in this process, or a transaction still holds it after DETACH; nothing was "
				         "merged. DETACH it, let open transactions finish, then retry.");
			}
			bool has_wal = false;
			if (metadata.history.HasUnsnapshottedChanges(request.database, request.target, has_wal)) {
				Fail(ErrorKind::CONFLICT, "merge_target_dirty",
				     "Branch " + QuoteName(request.target) + " has " +
				         (has_wal ? std::string("uncheckpointed commits") : std::string("committed writes")) +
				         " after its latest snapshot " + std::to_string(result.ours) +
				         "; a merge built from that snapshot would drop them. Create a snapshot, detach, and merge.");
			}
			target_lock = LockClosedBranch(repository, request.database, request.target);
			// Checked again under the lock: another process may have written or snapshotted the target
			// between the checks above and taking the lock.
			auto head = metadata.history.FindBranch(request.database, request.target);
			if (!head || head->head_snapshot_id != result.ours ||
			    metadata.history.HasUnsnapshottedChanges(request.database, request.target, has_wal)) {
				Fail(ErrorKind::CONFLICT, "merge_inputs_changed",
				     "Branch " + QuoteName(request.target) + " is no longer at the merge's ours snapshot " +
				         std::to_string(result.ours) + "; nothing was merged. Use a new request for the new state.");
			}
		}
		result.timings.target_check_ms = MillisSince(check_start);
		result.branch_name = request.destination;
		if (Trivial(result)) {
			// Fast-forwards and no-ops still check that the inputs are inside the supported scope.
			MergeSession session(instance, metadata, repository, request.database, Inputs(result),
			                     Settings(options, record.time_zone, record.calendar), operation);
			operation.Phase("publication", 95);
			auto publication_start = Clock::now();
			record.snapshot_id = result.base == result.theirs ? result.ours : result.theirs;
			metadata.merges.PublishExistingSnapshot(request.database, request.destination, create_destination, record);
			result.snapshot_id = record.snapshot_id;
			result.merge_action = record.merge_action;
			result.timings.publication_ms = MillisSince(publication_start);
			return;
		}
		StageAndPublish(instance, metadata, repository, request.database, request.destination, create_destination,
		                options, record, result, operation);
	});
	return result;
}

MergeBranchResult MergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                 const std::string &repository, const MergeSnapshotsRequest &request,
                                 const MergeOptions &options) {
	auto selection_start = Clock::now();
	RequireDatabase(metadata, request.database);
	auto arguments = request.Canonical() + options.Canonical();
	auto prior = LookupRequest(metadata, request.database, request.request_id, arguments);
	if (prior.completed) {
		return *prior.completed;
	}
	MergeOperation operation(request.database, request.request_id.value_or(""), options.max_concurrent, options.limits,
	                         options.progress);
	RequireKeptInputs(metadata, request.database, {request.base, request.ours, request.theirs});
	// Any kept snapshot may serve as the base: the caller chose it (the specification merges a
	// criss-cross history with one side's merge snapshot as base, which is no common ancestor).
	if (metadata.history.FindBranch(request.database, request.destination)) {
		Fail(ErrorKind::CONFLICT, "branch_exists",
		     "Branch " + QuoteName(request.destination) +
		         " already exists; differential_merge_snapshots always writes a new branch. Choose a new name.");
	}
	MergeBranchResult result;
	result.base = request.base;
	result.ours = request.ours;
	result.theirs = request.theirs;
	result.timings.selection_ms = MillisSince(selection_start);
	auto record = NewRecord(request.request_id, arguments, result, request.destination, "created_branch");
	record.time_zone = prior.pending ? prior.pending->time_zone : options.time_zone;
	record.calendar = prior.pending ? prior.pending->calendar : options.calendar;
	Attempt(metadata, request.database, record, result, operation, [&]() {
		StageAndPublish(instance, metadata, repository, request.database, request.destination, true, options, record,
		                result, operation);
	});
	return result;
}

static MergePreview Preview(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                            const std::string &database, MergeBranchResult inputs, const MergeOptions &options) {
	MergeOperation operation(database, "", options.max_concurrent, options.limits, options.progress);
	MergePreview preview;
	preview.inputs = inputs;
	preview.validation_state = "not_checked";
	MergeSession session(instance, metadata, repository, database, Inputs(inputs),
	                     Settings(options, options.time_zone, options.calendar), operation);
	// With nothing to combine, the result is one of the inputs as it is: no row can conflict (so no
	// decision applies), its catalog is that input's own, and there is nothing to validate.
	bool trivial = Trivial(inputs);
	bool fresh = false;
	auto resolutions = trivial ? std::vector<FrozenResolution>()
	                           : Resolutions(metadata, session, database, "", options.resolution_tables, fresh);
	try {
		session.Run(options.validate && !trivial, true, resolutions, preview.inputs.objects);
		if (trivial) {
			for (auto &object : preview.inputs.objects) {
				object.schema_conflicts.clear();
			}
		}
		if (session.staged) {
			session.FinishStaging();
			preview.validation_state = "valid";
		} else if (options.validate && !trivial && ConflictCount(preview.inputs) == 0 &&
		           session.FirstSchemaConflict()) {
			preview.validation_state = "invalid";
			preview.validation_code = session.FirstSchemaConflict()->kind;
			preview.validation_error = session.FirstSchemaConflict()->message;
		}
	} catch (duckdb::Exception &e) {
		if (duckdb::ErrorData(e).Type() != duckdb::ExceptionType::CONSTRAINT) {
			throw;
		}
		preview.validation_state = "invalid";
		preview.validation_code = "merge_validation_failed";
		preview.validation_error = duckdb::ErrorData(e).RawMessage();
	}
	return preview;
}

MergePreview PreviewMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                const std::string &repository, const std::string &database, const std::string &target,
                                const std::string &source, const MergeOptions &options) {
	return Preview(instance, metadata, repository, database, SelectInputs(metadata, database, target, source), options);
}

MergePreview PreviewMergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                   const std::string &repository, const std::string &database, int64_t base,
                                   int64_t ours, int64_t theirs, const MergeOptions &options) {
	RequireDatabase(metadata, database);
	RequireKeptInputs(metadata, database, {base, ours, theirs});
	MergeBranchResult inputs;
	inputs.base = base;
	inputs.ours = ours;
	inputs.theirs = theirs;
	return Preview(instance, metadata, repository, database, inputs, options);
}

MergePreflight PreflightMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                    const std::string &repository, const MergeBranchRequest &request,
                                    const MergeOptions &options) {
	MergePreflight preflight;
	bool create_destination = request.destination != request.target;
	auto issue = [&](const std::string &code, const std::string &message) {
		// Refusals carry their own "[differential:<code>] " prefix; the issue line names the code once.
		auto prefix = "[differential:" + code + "] ";
		auto text = message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
		preflight.issues.push_back(code + ": " + text);
	};
	preflight.inputs = SelectInputs(metadata, request.database, request.target, request.source);
	auto &in = preflight.inputs;
	if ((request.expected_base && *request.expected_base != in.base) ||
	    (request.expected_ours && *request.expected_ours != in.ours) ||
	    (request.expected_theirs && *request.expected_theirs != in.theirs)) {
		issue("merge_inputs_changed", "the inputs are not the expected snapshot ids");
	}
	if (create_destination) {
		preflight.target_state = metadata.history.FindBranch(request.database, request.destination) ? "exists" : "new";
		if (preflight.target_state == "exists") {
			issue("branch_exists", "the destination is an existing branch other than the target");
		}
	} else {
		try {
			RequireBranchClosed(repository, request.database, request.target);
			BranchLock probe(FileAddress {repository, request.database, request.target, -1, MAIN_FILE_NAME});
			bool has_wal = false;
			preflight.target_state =
			    metadata.history.HasUnsnapshottedChanges(request.database, request.target, has_wal) ? "dirty" : "clean";
			if (preflight.target_state == "dirty") {
				issue("merge_target_dirty", "the target has writes after its latest snapshot");
			}
		} catch (DifferentialError &error) {
			preflight.target_state = error.code == "branch_locked"                      ? "locked"
			                         : error.code == "active_attachment_or_transaction" ? "attached"
			                                                                            : "unknown";
			issue(error.code, error.what());
		}
	}
	preflight.merge_action = PredictedAction(in, create_destination);
	try {
		auto validating = options;
		validating.validate = true;
		auto preview = Preview(instance, metadata, repository, request.database, in, validating);
		preflight.validation_state = preview.validation_state;
		in.objects = preview.inputs.objects;
		for (auto &object : in.objects) {
			for (auto &conflict : object.schema_conflicts) {
				issue(conflict.kind, conflict.message);
			}
		}
		auto conflicts = ConflictCount(in);
		if (conflicts > 0) {
			issue("merge_conflict", ConflictingRows(conflicts));
		}
		// A schema conflict found while building the result is already listed with its object.
		if (preview.validation_state == "invalid" && preview.validation_code == "merge_validation_failed") {
			issue(preview.validation_code, preview.validation_error);
		}
	} catch (DifferentialError &error) {
		preflight.validation_state = "not_checked";
		issue(error.code, error.what());
	} catch (duckdb::Exception &error) {
		// A refusal from the preview's own connection (an input's ATTACH, say) keeps its code.
		auto message = duckdb::ErrorData(error).RawMessage();
		preflight.validation_state = "not_checked";
		issue(ErrorCodeIn(message), message);
	}
	preflight.ready = preflight.issues.empty();
	return preflight;
}

} // namespace differential
