// The merges: check the target, then publish the result (an existing snapshot, or a merged one built
// on a staging branch) in one transaction. Nothing reaches the target before that transaction.
#include "merge/merge_branch.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "merge/merge_steps.hpp"
#include "merge/storage_identity.hpp"
#include "storage/branch_lock.hpp"

#include <chrono>
#include <cstdio>

namespace differential {

using Clock = std::chrono::steady_clock;

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
                              const char *operation, const MergeOptions &options, const MergeRecord &record,
                              const std::vector<int64_t> &bases) {
	auto snapshot = [&](int64_t id) {
		auto root = BlockIdentity::ContentRoot(metadata.files, SnapshotDatabaseFile(repository, database, id));
		return "{\"snapshot_id\": " + std::to_string(id) + ", \"content_root\": " + JsonText(root) + "}";
	};
	// A virtual base is no snapshot: its best common ancestors stand for it, each with its content root.
	auto base = "\"base\": " + (bases.empty() ? snapshot(record.base_snapshot_id) : std::string("null"));
	for (size_t i = 0; i < bases.size(); i++) {
		base += (i == 0 ? ", \"virtual_base\": [" : ", ") + snapshot(bases[i]) + (i + 1 == bases.size() ? "]" : "");
	}
	return "{\"algorithm\": \"differential-three-way-cell-1\", \"operation\": " + JsonText(operation) +
	       ", \"request_id\": " + (record.request_id.empty() ? std::string("null") : JsonText(record.request_id)) +
	       ", \"schema_mode\": " + JsonText(ToString(options.schema_mode)) +
	       ", \"nested\": " + JsonText(ToString(options.nested_mode)) + ", " + base +
	       ", \"ours\": " + snapshot(record.ours_snapshot_id) + ", \"theirs\": " + snapshot(record.theirs_snapshot_id) +
	       "}";
}

//! Compares and stages; refuses what cannot be published (a violated constraint, a schema conflict,
//! conflicting rows).
static void CompareAndStage(MergeSession &session, MetadataStore &metadata, const std::string &database,
                            const MergeOptions &options, const MergeRecord &record, MergeBranchResult &result) {
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
		Fail(ErrorCode::MERGE_VALIDATION_FAILED,
		     "The merged result violates a constraint (" + duckdb::ErrorData(e).RawMessage() +
		         "), though each side alone satisfies it; nothing was merged. Preview it with validate => true and "
		         "reconcile the rows on one branch.");
	}
	if (auto conflict = session.FirstSchemaConflict()) {
		Fail(conflict->kind,
		     "Schema conflict: " + conflict->message +
		         "; nothing was merged. Decisions cannot resolve schema conflicts: align the object on one branch, "
		         "snapshot it, and merge again (preview with schema_mode to see every conflict).");
	}
	auto conflicts = ConflictCount(result);
	if (conflicts > 0) {
		Fail(ErrorCode::MERGE_CONFLICT,
		     ConflictingRows(conflicts) + "; use differential_merge_snapshots_preview('" + database + "', " +
		         (result.bases.empty() ? std::to_string(result.base) : std::string("NULL")) + ", " +
		         std::to_string(result.ours) + ", " + std::to_string(result.theirs) +
		         (result.bases.empty() ? "" : ", base => 'virtual'") +
		         ") to page through conflict_details, then pass decisions with resolution_tables => under a new "
		         "request_id. Nothing was merged.");
	}
	session.FinishStaging();
}

//! Compares, stages and publishes a merge whose both sides changed since the base (on S3, in the
//! durable steps, from the destination's head as it was before anything was compared).
static void StageAndPublish(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                            const std::string &database, const std::string &destination, bool create_destination,
                            const char *operation_name, const MergeOptions &options, MergeRecord record,
                            MergeBranchResult &result, MergeOperation &operation) {
	std::optional<PublishedHead> start;
	if (options.publisher && !create_destination) {
		start = options.publisher->StartHead(destination);
	}
	auto planning_start = Clock::now();
	MergeSession session(instance, metadata, repository, database, Inputs(result),
	                     Settings(options, record.time_zone, record.calendar), operation);
	result.timings.planning_ms = MillisSince(planning_start);
	auto comparison_start = Clock::now();
	CompareAndStage(session, metadata, database, options, record, result);
	LogTimer provenance;
	record.extra_info = Provenance(metadata, repository, database, operation_name, options, record, result.bases);
	LogEvent("provenance_hashed", provenance.ElapsedMs(), "database " + database);
	result.timings.application_ms = session.application_ms;
	result.timings.comparison_ms = MillisSince(comparison_start) - session.application_ms;
	operation.Phase(MergePhase::PUBLICATION);
	auto publication_start = Clock::now();
	if (options.publisher) {
		result.snapshot_id =
		    PublishStagedOnS3(metadata, *options.publisher, database, session, create_destination, record, start);
	} else {
		result.snapshot_id =
		    metadata.merges.PublishMerge(database, session.staging, destination, create_destination, record);
		session.published = true;
	}
	result.branch_name = destination;
	result.merge_action = ParseMergeAction(record.merge_action);
	result.timings.publication_ms = MillisSince(publication_start);
}

//! A fast-forward or no-op: the destination points at an input as it is. The inputs are still
//! attached and read, so the result too is inside the supported scope.
static void PublishExisting(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                            const std::string &database, const std::string &destination, bool create_destination,
                            const MergeOptions &options, MergeRecord &record, MergeBranchResult &result,
                            MergeOperation &operation) {
	MergeSession session(instance, metadata, repository, database, Inputs(result),
	                     Settings(options, record.time_zone, record.calendar), operation);
	operation.Phase(MergePhase::PUBLICATION);
	auto publication_start = Clock::now();
	record.snapshot_id = result.base == result.theirs ? result.ours : result.theirs;
	metadata.merges.PublishExistingSnapshot(database, destination, create_destination, record);
	result.snapshot_id = record.snapshot_id;
	result.merge_action = ParseMergeAction(record.merge_action);
	result.timings.publication_ms = MillisSince(publication_start);
}

//! The target branch must be closed, with nothing written after its latest snapshot (ours); the
//! returned lock keeps it so until the merge has published.
static std::unique_ptr<BranchLock> LockCleanTarget(MetadataStore &metadata, const std::string &repository,
                                                   const std::string &database, const std::string &target,
                                                   int64_t ours) {
	try {
		RequireBranchClosed(repository, database, target);
	} catch (DifferentialError &error) {
		if (error.code != ErrorCode::ACTIVE_ATTACHMENT_OR_TRANSACTION) {
			throw;
		}
		Fail(ErrorKind::INVALID, error.code,
		     "Merge target must be detached with no transaction holding it: branch " + QuoteName(target) +
		         " is attached in this process, or a transaction still holds it after DETACH; nothing was "
		         "merged. DETACH it, let open transactions finish, then retry.");
	}
	bool has_wal = false;
	if (metadata.history.HasUnsnapshottedChanges(database, target, has_wal)) {
		Fail(ErrorCode::MERGE_TARGET_DIRTY,
		     "Branch " + QuoteName(target) + " has " +
		         (has_wal ? std::string("uncheckpointed commits") : std::string("committed writes")) +
		         " after its latest snapshot " + std::to_string(ours) +
		         "; a merge built from that snapshot would drop them. Create a snapshot, detach, and merge.");
	}
	auto lock = LockClosedBranch(repository, database, target);
	// Checked again under the lock: another process may have written or snapshotted the target
	// between the checks above and taking the lock.
	auto head = metadata.history.FindBranch(database, target);
	if (!head || head->head_snapshot_id != ours ||
	    metadata.history.HasUnsnapshottedChanges(database, target, has_wal)) {
		Fail(ErrorCode::MERGE_INPUTS_CHANGED, "Branch " + QuoteName(target) +
		                                          " is no longer at the merge's ours snapshot " + std::to_string(ours) +
		                                          "; nothing was merged. Use a new request for the new state.");
	}
	return lock;
}

//! A request an earlier attempt prepared on S3: its result is kept, so nothing is recomputed (its
//! inputs may even have expired since); the publication continues from the recorded step.
static MergeBranchResult ResumePrepared(MetadataStore &metadata, const std::string &repository,
                                        const std::string &database, MergeRecord record, bool create_destination,
                                        const MergeOptions &options, MergeOperation &operation) {
	if (!options.publisher) {
		Fail(ErrorCode::DATA_PATH_MISMATCH, "Merge request " + QuoteName(record.request_id) +
		                                        " was prepared for S3, but database " + QuoteName(database) +
		                                        " has no DATA_PATH now; nothing was published. Abort the request.");
	}
	MergeBranchResult result;
	result.branch_name = record.branch_name;
	result.merge_action = ParseMergeAction(record.merge_action);
	result.base = record.base_snapshot_id;
	result.ours = record.ours_snapshot_id;
	result.theirs = record.theirs_snapshot_id;
	Attempt(metadata, database, record, result, operation, [&]() {
		std::unique_ptr<BranchLock> target_lock;
		if (!create_destination) {
			target_lock = LockCleanTarget(metadata, repository, database, record.branch_name, result.ours);
		}
		operation.Phase(MergePhase::PUBLICATION);
		auto publication_start = Clock::now();
		result.snapshot_id = ResumePublication(metadata, *options.publisher, database, record);
		result.timings.publication_ms = MillisSince(publication_start);
	});
	return result;
}

//! The time this merge spent reading evicted inputs back from S3.
static void Materialization(const MergeOptions &options, int64_t before, MergeBranchResult &result) {
	if (options.publisher) {
		result.timings.materialization_ms = options.publisher->MaterializationMs() - before;
	}
}

//! A merge call's start: the operation that counts against the concurrency limit (a replay, which
//! returns before, needs none).
static MergeOperation StartOperation(const std::string &database, const std::optional<std::string> &request_id,
                                     const MergeOptions &options) {
	return MergeOperation(database, request_id.value_or(""), options.max_concurrent, options.limits, options.progress);
}

MergeBranchResult MergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                              const std::string &repository, const MergeBranchRequest &request,
                              const MergeOptions &options) {
	auto selection_start = Clock::now();
	auto arguments = request.Canonical() + options.Canonical();
	RequireRequestForS3(options, request.request_id, request.database);
	auto prior = LookupRequest(metadata, request.database, request.request_id, arguments);
	if (prior.completed) {
		return *prior.completed;
	}
	auto operation = StartOperation(request.database, request.request_id, options);
	bool create_destination = request.destination != request.target;
	if (prior.pending && IsPrepared(prior.pending->state)) {
		return ResumePrepared(metadata, repository, request.database, *prior.pending, create_destination, options,
		                      operation);
	}
	auto evicted_before = options.publisher ? options.publisher->MaterializationMs() : 0;
	if (create_destination && metadata.history.FindBranch(request.database, request.destination)) {
		Fail(ErrorCode::BRANCH_EXISTS,
		     "The destination " + QuoteName(request.destination) +
		         " is an existing branch other than the target; nothing was merged. Merge into the target itself, "
		         "or into a new branch name.");
	}
	// A retry recomputes from the inputs the first attempt selected, not from today's heads.
	auto result = prior.pending
	                  ? FrozenInputs(metadata, request.database, *prior.pending)
	                  : SelectInputs(metadata, request.database, request.target, request.source, options.base_mode);
	auto record = NewRecord(request.request_id, arguments, result, request.destination,
	                        PredictedAction(result, create_destination));
	TakeFrozenSettings(record, prior, options);
	Attempt(metadata, request.database, record, result, operation, [&]() {
		if (!ExpectedInputs(request, result)) {
			Fail(ErrorCode::MERGE_INPUTS_CHANGED,
			     "The merge inputs are base " +
			         (result.bases.empty() ? std::to_string(result.base) : std::string("virtual")) + ", ours " +
			         std::to_string(result.ours) + ", theirs " + std::to_string(result.theirs) +
			         ", not the expected ones; nothing was merged. Review the new inputs and retry with their ids.");
		}
		result.timings.selection_ms = MillisSince(selection_start);
		auto check_start = Clock::now();
		std::unique_ptr<BranchLock> target_lock;
		if (!create_destination) {
			target_lock = LockCleanTarget(metadata, repository, request.database, request.target, result.ours);
		}
		result.timings.target_check_ms = MillisSince(check_start);
		result.branch_name = request.destination;
		if (Trivial(result)) {
			PublishExisting(instance, metadata, repository, request.database, request.destination, create_destination,
			                options, record, result, operation);
		} else {
			StageAndPublish(instance, metadata, repository, request.database, request.destination, create_destination,
			                MERGE_BRANCH_OPERATION, options, record, result, operation);
		}
	});
	Materialization(options, evicted_before, result);
	return result;
}

MergeBranchResult MergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                 const std::string &repository, const MergeSnapshotsRequest &request,
                                 const MergeOptions &options) {
	auto selection_start = Clock::now();
	RequireDatabase(metadata, request.database);
	RequireRequestForS3(options, request.request_id, request.database);
	auto arguments = request.Canonical() + options.Canonical();
	auto prior = LookupRequest(metadata, request.database, request.request_id, arguments);
	if (prior.completed) {
		return *prior.completed;
	}
	auto operation = StartOperation(request.database, request.request_id, options);
	if (prior.pending && IsPrepared(prior.pending->state)) {
		return ResumePrepared(metadata, repository, request.database, *prior.pending, true, options, operation);
	}
	auto evicted_before = options.publisher ? options.publisher->MaterializationMs() : 0;
	auto virtual_base = options.base_mode == BaseMode::VIRTUAL;
	if (!virtual_base) {
		RequireKeptInputs(metadata, request.database, {request.base, request.ours, request.theirs});
	}
	// Any kept snapshot may serve as the base: the caller chose it (a documented walkthrough merges a
	// criss-cross history with one side's merge snapshot as base, which is no common ancestor).
	if (metadata.history.FindBranch(request.database, request.destination)) {
		Fail(ErrorCode::BRANCH_EXISTS,
		     "Branch " + QuoteName(request.destination) +
		         " already exists; differential_merge_snapshots always writes a new branch. Choose a new name.");
	}
	MergeBranchResult result;
	if (virtual_base) {
		// A retry recomputes the same bases from the same ours and theirs (FrozenInputs).
		result = VirtualInputs(metadata, request.database, request.ours, request.theirs);
	} else {
		result.base = request.base;
		result.ours = request.ours;
		result.theirs = request.theirs;
	}
	result.timings.selection_ms = MillisSince(selection_start);
	auto record = NewRecord(request.request_id, arguments, result, request.destination, MergeAction::CREATED_BRANCH);
	TakeFrozenSettings(record, prior, options);
	Attempt(metadata, request.database, record, result, operation, [&]() {
		StageAndPublish(instance, metadata, repository, request.database, request.destination, true,
		                MERGE_SNAPSHOTS_OPERATION, options, record, result, operation);
	});
	Materialization(options, evicted_before, result);
	return result;
}

} // namespace differential
