// A merge reads only published snapshots (through private read-only attachments), stages the
// result on a private branch forked from ours, and publishes it with its request record in one
// metadata transaction. Nothing reaches the target before that transaction.
#include "merge/merge_branch.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/process_identity.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/query_result.hpp"
#include "merge/ancestry.hpp"
#include "storage/branch_lock.hpp"

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <regex>
#include <unistd.h>

namespace differential {

using duckdb::Connection;

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

static duckdb::unique_ptr<duckdb::QueryResult> Run(Connection &connection, const std::string &sql) {
	auto result = connection.Query(sql);
	if (result->HasError()) {
		result->ThrowError();
	}
	return result;
}

//! The tables of one attached snapshot, with columns, types and primary keys; refuses what this
//! build cannot merge yet (merge_unsupported names the first such object).
static std::map<std::string, TableShape> Shapes(Connection &connection, const std::string &alias,
                                                const std::string &side) {
	std::map<std::string, TableShape> shapes;
	// Base tables only: views are not compared (a merge keeps ours' view definitions).
	auto columns =
	    Run(connection, "SELECT c.schema_name, c.table_name, c.column_name, c.data_type FROM duckdb_columns() c "
	                    "JOIN duckdb_tables() t USING (database_name, schema_name, table_name) "
	                    "WHERE c.database_name = " +
	                        SqlLiteral(alias) + " ORDER BY c.table_name, c.column_index");
	for (auto &row : *columns) {
		auto schema = row.GetBaseValue(0).ToString();
		auto table = row.GetBaseValue(1).ToString();
		if (schema != "main") {
			Fail(ErrorKind::INVALID_INPUT, "merge_unsupported",
			     "Table " + QuoteName(schema + "." + table) + " in " + side +
			         " is outside the main schema, which this build cannot merge yet. Merge manually with SQL.");
		}
		auto &shape = shapes[table];
		shape.name = table;
		shape.columns.push_back(row.GetBaseValue(2).ToString());
		shape.types.push_back(row.GetBaseValue(3).ToString());
	}
	auto keys = Run(connection, "SELECT table_name, constraint_column_names FROM duckdb_constraints() WHERE "
	                            "database_name = " +
	                                SqlLiteral(alias) + " AND constraint_type = 'PRIMARY KEY'");
	for (auto &row : *keys) {
		auto it = shapes.find(row.GetBaseValue(0).ToString());
		if (it != shapes.end()) {
			// Kept in a variable: GetChildren returns a reference into the value.
			auto key_columns = row.GetBaseValue(1);
			for (auto &k : duckdb::ListValue::GetChildren(key_columns)) {
				it->second.key.push_back(k.ToString());
			}
		}
	}
	return shapes;
}

static void RequireSameShapes(const std::map<std::string, TableShape> &base,
                              const std::map<std::string, TableShape> &ours,
                              const std::map<std::string, TableShape> &theirs) {
	for (auto *side : {&ours, &theirs}) {
		for (auto &entry : *side) {
			auto b = base.find(entry.first);
			if (b == base.end() || b->second.columns != entry.second.columns || b->second.types != entry.second.types ||
			    b->second.key != entry.second.key) {
				Fail(ErrorKind::INVALID_INPUT, "merge_unsupported",
				     "Table " + QuoteName(entry.first) +
				         " was created or changed its columns on one side; this build merges data of tables "
				         "whose definition is the same in base, ours and theirs (schema mode strict). Align the "
				         "definitions on both branches first.");
			}
		}
	}
	for (auto &entry : base) {
		if (!ours.count(entry.first) || !theirs.count(entry.first)) {
			Fail(ErrorKind::INVALID_INPUT, "merge_unsupported",
			     "Table " + QuoteName(entry.first) +
			         " was dropped on one side; this build does not merge table removals yet (schema mode strict).");
		}
		if (entry.second.key.empty()) {
			Fail(ErrorKind::INVALID_INPUT, "merge_unsupported",
			     "Table " + QuoteName(entry.first) +
			         " has no primary key: rows are matched across snapshots by primary key. Add one on all "
			         "branches (ALTER TABLE ... ADD PRIMARY KEY) to merge it.");
		}
	}
}

static constexpr const char *STAGING_PREFIX = "__merge-";

//! Staging branches are named __merge-<pid>-<n>; one whose process is gone belongs to a merge that
//! was interrupted before it published, and holds nothing anyone can see.
static void DropAbandonedStagingBranches(MetadataStore &metadata, const std::string &database) {
	static const std::regex staging_name("__merge-([0-9]+)-[0-9]+");
	for (auto &branch : metadata.ListBranches(database)) {
		std::smatch match;
		// Users cannot create names starting with "__", so only staging branches match.
		if (!std::regex_match(branch.name, match, staging_name)) {
			continue;
		}
		if (!ProcessAlive(std::atoll(match[1].str().c_str()), 0)) {
			metadata.DropBranch(database, branch.name);
		}
	}
}

static std::string Describe(const MergeBranchRequest &r) {
	return "merging branch " + QuoteName(r.source) + " into " + QuoteName(r.target) + " of database " +
	       QuoteName(r.database);
}

static MergeBranchResult FromRecord(const MetadataStore::MergeRecord &record) {
	MergeBranchResult result;
	result.branch_name = record.branch_name;
	result.snapshot_id = record.snapshot_id;
	result.merge_action = record.merge_action;
	result.base = record.base_snapshot_id;
	result.ours = record.ours_snapshot_id;
	result.theirs = record.theirs_snapshot_id;
	result.replayed = true;
	return result;
}

//! What an earlier call with the same request id left: a completed result to return, or a pending
//! request whose frozen inputs a retry reuses. Refuses a request id used with other arguments.
struct PriorRequest {
	std::optional<MergeBranchResult> completed;
	std::optional<MetadataStore::MergeRecord> pending;
};

static PriorRequest LookupRequest(MetadataStore &metadata, const std::string &database,
                                  const std::optional<std::string> &request_id, const std::string &arguments) {
	PriorRequest prior;
	if (!request_id || !metadata.FindDatabase(database)) {
		return prior;
	}
	auto done = metadata.FindMergeRequest(database, *request_id);
	if (!done) {
		return prior;
	}
	if (done->arguments != arguments) {
		Fail(ErrorKind::INVALID_INPUT, "merge_request_mismatch",
		     "Request " + QuoteName(*request_id) +
		         " was already used with other arguments; nothing was merged. Use a new request_id for a different "
		         "merge.");
	}
	if (done->state == "complete") {
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

using Clock = std::chrono::steady_clock;

static int64_t MillisSince(Clock::time_point start) {
	return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

//! The heads of both branches and their base; refuses unknown names and missing or ambiguous bases.
static MergeBranchResult SelectInputs(MetadataStore &metadata, const std::string &database, const std::string &target,
                                      const std::string &source) {
	if (!metadata.FindDatabase(database)) {
		Fail(ErrorKind::NOT_FOUND, "database_not_found",
		     "Database " + QuoteName(database) + " does not exist. List databases with differential_databases().");
	}
	MergeBranchResult result;
	for (auto pair : {std::make_pair(&target, &result.ours), std::make_pair(&source, &result.theirs)}) {
		auto branch = metadata.FindBranch(database, *pair.first);
		if (!branch) {
			Fail(ErrorKind::NOT_FOUND, "branch_not_found",
			     "Database " + QuoteName(database) + " has no branch " + QuoteName(*pair.first) +
			         ". List branches with differential_branches('" + database + "').");
		}
		if (branch->head_snapshot_id < 0) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_not_found",
			     "Branch " + QuoteName(*pair.first) +
			         " has no snapshot yet; merges read published snapshots only. Take one with "
			         "differential_create_snapshot() first.");
		}
		*pair.second = branch->head_snapshot_id;
	}
	auto ancestry = ComputeAncestry(metadata.SnapshotParents(database), result.ours, result.theirs);
	if (ancestry.selection == BaseSelection::AMBIGUOUS) {
		Fail(ErrorKind::INVALID_INPUT, "merge_base_ambiguous",
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
	if (!metadata.FindSnapshot(database, result.base)) {
		Fail(ErrorKind::NOT_FOUND, "snapshot_expired",
		     "The merge base, snapshot " + std::to_string(result.base) + " of database " + QuoteName(database) +
		         ", was expired; a merge needs its base kept. Merge with differential_merge_snapshots and a kept "
		         "base instead.");
	}
	return result;
}

//! Read-only attachments of the three inputs on a private connection, and optionally a staging
//! branch forked from ours that receives the decided changes. Everything is detached, and an
//! unpublished staging branch dropped, when the session ends.
class MergeSession {
public:
	MergeSession(duckdb::DatabaseInstance &instance, MetadataStore &metadata, std::string repository,
	             std::string database, const MergeBranchResult &inputs)
	    : metadata(metadata), repository(std::move(repository)), database(std::move(database)), connection(instance) {
		static std::atomic<int64_t> counter {0};
		tag = std::to_string(getpid()) + "-" + std::to_string(++counter);
		base = "__merge_base@" + tag;
		ours = "__merge_ours@" + tag;
		theirs = "__merge_theirs@" + tag;
		stage = "__merge_stage@" + tag;
		try {
			Attach(base, "SNAPSHOT " + std::to_string(inputs.base) + ", READ_ONLY");
			Attach(ours, "SNAPSHOT " + std::to_string(inputs.ours) + ", READ_ONLY");
			Attach(theirs, "SNAPSHOT " + std::to_string(inputs.theirs) + ", READ_ONLY");
			shapes = Shapes(connection, base, "the base");
			RequireSameShapes(shapes, Shapes(connection, ours, "ours"), Shapes(connection, theirs, "theirs"));
		} catch (...) {
			// The destructor does not run for a constructor that throws: release the inputs here.
			DetachAll();
			throw;
		}
		ours_snapshot = inputs.ours;
	}
	~MergeSession() {
		DetachAll();
		if (!staging.empty() && !published) {
			try {
				metadata.DropBranch(database, staging);
			} catch (...) {
				// A leftover staging branch holds no published data; the next merge drops it.
			}
		}
	}

	//! Compares every table into `tables` (each one before its changes are applied, so a failure
	//! to apply still leaves its counts); with `apply`, stages the decided changes of
	//! conflict-free tables.
	void Compare(bool apply, std::vector<MergeTableResult> &tables) {
		if (apply) {
			DropAbandonedStagingBranches(metadata, database);
			staging = STAGING_PREFIX + tag;
			metadata.CreateBranch(database, staging, ours_snapshot);
			Attach(stage, "BRANCH " + SqlLiteral(staging));
		}
		for (auto &entry : shapes) {
			auto decisions = SqlIdentifier("__merge_decisions@" + tag + "@" + entry.first);
			Run(connection,
			    "CREATE TEMP TABLE " + decisions + " AS " + DecisionQuery(entry.second, base, ours, theirs));
			MergeTableResult table;
			table.table = entry.first;
			int64_t *fields[] = {&table.counts.ours_inserts,   &table.counts.ours_updates,
			                     &table.counts.ours_deletes,   &table.counts.theirs_inserts,
			                     &table.counts.theirs_updates, &table.counts.theirs_deletes,
			                     &table.counts.conflicts};
			auto counts = Run(connection, CountQuery(entry.second, decisions));
			for (auto &row : *counts) {
				for (size_t i = 0; i < 7; i++) {
					*fields[i] = row.GetBaseValue(i).GetValue<int64_t>();
				}
			}
			tables.push_back(table);
			if (apply && table.counts.conflicts == 0) {
				auto start = Clock::now();
				for (auto &sql : ApplyStatements(entry.second, decisions, stage)) {
					Run(connection, sql);
				}
				application_ms += MillisSince(start);
			}
			Run(connection, "DROP TABLE " + decisions);
		}
	}

	//! Makes the staged result durable on the staging branch and closes it.
	void FinishStaging() {
		auto start = Clock::now();
		Run(connection, "CHECKPOINT " + SqlIdentifier(stage));
		DetachAll();
		application_ms += MillisSince(start);
	}

	MetadataStore &metadata;
	std::string repository;
	std::string database;
	std::string staging;
	bool published = false;
	int64_t application_ms = 0;

private:
	void Attach(const std::string &alias, const std::string &options) {
		Run(connection, "ATTACH " + SqlLiteral("differential:" + database) + " AS " + SqlIdentifier(alias) + " (" +
		                    options + ", REPOSITORY " + SqlLiteral(repository) + ")");
		attached.push_back(alias);
	}
	void DetachAll() {
		for (auto &alias : attached) {
			connection.Query("DETACH DATABASE IF EXISTS " + SqlIdentifier(alias));
		}
		attached.clear();
	}

	Connection connection;
	std::string tag, base, ours, theirs, stage;
	std::map<std::string, TableShape> shapes;
	std::vector<std::string> attached;
	int64_t ours_snapshot = -1;
};

static int64_t Conflicts(const std::vector<MergeTableResult> &tables) {
	int64_t total = 0;
	for (auto &t : tables) {
		total += t.counts.conflicts;
	}
	return total;
}

//! Inputs frozen by an earlier failed attempt of the same request; they must still be kept.
static MergeBranchResult FrozenInputs(MetadataStore &metadata, const std::string &database,
                                      const MetadataStore::MergeRecord &pending) {
	MergeBranchResult result;
	result.base = pending.base_snapshot_id;
	result.ours = pending.ours_snapshot_id;
	result.theirs = pending.theirs_snapshot_id;
	for (auto id : {result.base, result.ours, result.theirs}) {
		if (!metadata.FindSnapshot(database, id)) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_expired",
			     "Snapshot " + std::to_string(id) + ", an input frozen by the first attempt of request " +
			         QuoteName(pending.request_id) + ", is gone; the request cannot be retried. Start a new request.");
		}
	}
	return result;
}

MergeBranchResult MergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                              const std::string &repository, const MergeBranchRequest &request) {
	auto selection_start = Clock::now();
	auto prior = LookupRequest(metadata, request.database, request.request_id, request.Canonical());
	if (prior.completed) {
		return *prior.completed;
	}
	bool create_destination = request.destination != request.target;
	// A retry recomputes from the inputs the first attempt selected, not from today's heads.
	auto result = prior.pending ? FrozenInputs(metadata, request.database, *prior.pending)
	                            : SelectInputs(metadata, request.database, request.target, request.source);
	MetadataStore::MergeRecord record;
	record.request_id = request.request_id.value_or("");
	record.arguments = request.Canonical();
	record.base_snapshot_id = result.base;
	record.ours_snapshot_id = result.ours;
	record.theirs_snapshot_id = result.theirs;
	record.branch_name = request.destination;
	record.merge_action = PredictedAction(result, create_destination);
	try {
		if (create_destination && metadata.FindBranch(request.database, request.destination)) {
			Fail(ErrorKind::INVALID_INPUT, "invalid_argument",
			     "The destination " + QuoteName(request.destination) +
			         " is an existing branch other than the target: merge into the target itself, or into a new "
			         "branch name.");
		}
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
			RequireBranchClosed(repository, request.database, request.target);
			bool has_wal = false;
			if (metadata.HasUnsnapshottedChanges(request.database, request.target, has_wal)) {
				Fail(ErrorKind::CONFLICT, "merge_target_dirty",
				     "Branch " + QuoteName(request.target) + " has " +
				         (has_wal ? std::string("uncheckpointed commits") : std::string("committed writes")) +
				         " after its latest snapshot " + std::to_string(result.ours) +
				         "; a merge built from that snapshot would drop them. Create a snapshot, detach, and merge.");
			}
			target_lock = LockClosedBranch(repository, request.database, request.target);
			// Checked again under the lock: another process may have written or snapshotted the target
			// between the checks above and taking the lock.
			auto head = metadata.FindBranch(request.database, request.target);
			if (!head || head->head_snapshot_id != result.ours ||
			    metadata.HasUnsnapshottedChanges(request.database, request.target, has_wal)) {
				Fail(ErrorKind::CONFLICT, "merge_inputs_changed",
				     "Branch " + QuoteName(request.target) + " is no longer at the merge's ours snapshot " +
				         std::to_string(result.ours) + "; nothing was merged. Use a new request for the new state.");
			}
		}
		result.timings.target_check_ms = MillisSince(check_start);
		result.branch_name = request.destination;
		auto publication_start = Clock::now();
		if (result.base == result.theirs || result.base == result.ours) {
			record.snapshot_id = result.base == result.theirs ? result.ours : result.theirs;
			metadata.PublishExistingSnapshot(request.database, request.destination, create_destination, record);
			result.snapshot_id = record.snapshot_id;
			result.merge_action = record.merge_action;
			result.timings.publication_ms = MillisSince(publication_start);
			return result;
		}
		// Both sides changed since the base: stage the merge on a private branch forked from ours.
		StageAndPublish(instance, metadata, repository, request.database, request.destination, create_destination,
		                Describe(request), record, result);
		return result;
	} catch (DifferentialError &error) {
		if (request.request_id) {
			try {
				metadata.RecordPendingMerge(request.database, record, error.code, error.what());
			} catch (...) {
				// The refusal itself is what the caller must see.
			}
		}
		throw;
	}
}

void StageAndPublish(duckdb::DatabaseInstance &instance, MetadataStore &metadata, const std::string &repository,
                     const std::string &database, const std::string &destination, bool create_destination,
                     const std::string &description, MetadataStore::MergeRecord record, MergeBranchResult &result) {
	MergeSession session(instance, metadata, repository, database, result);
	auto comparison_start = Clock::now();
	try {
		session.Compare(true, result.tables);
	} catch (duckdb::Exception &e) {
		// Errors of queries run on a connection come back as a plain Exception carrying their type.
		if (duckdb::ErrorData(e).Type() != duckdb::ExceptionType::CONSTRAINT) {
			throw;
		}
		Fail(ErrorKind::CONFLICT, "merge_validation_failed",
		     "The merged result of " + description + " violates a constraint (" + std::string(e.what()) +
		         "), though each side alone satisfies it; nothing was merged. Preview it with validate => true and "
		         "reconcile the rows on one branch.");
	}
	auto conflicts = Conflicts(result.tables);
	if (conflicts > 0) {
		Fail(ErrorKind::INVALID_INPUT, "merge_conflict",
		     std::to_string(conflicts) + " conflicting row" + (conflicts == 1 ? "" : "s") + " when " + description +
		         "; nothing was merged. Resolution tables are not in this build yet: reconcile the rows on one "
		         "branch, snapshot it, and merge again.");
	}
	session.FinishStaging();
	result.timings.application_ms = session.application_ms;
	result.timings.comparison_ms = MillisSince(comparison_start) - session.application_ms;
	auto publication_start = Clock::now();
	result.snapshot_id = metadata.PublishMerge(database, session.staging, destination, create_destination, record);
	session.published = true;
	result.branch_name = destination;
	result.merge_action = record.merge_action;
	result.timings.publication_ms = MillisSince(publication_start);
}

MergeBranchResult MergeSnapshots(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                 const std::string &repository, const MergeSnapshotsRequest &request) {
	auto selection_start = Clock::now();
	if (!metadata.FindDatabase(request.database)) {
		Fail(ErrorKind::NOT_FOUND, "database_not_found",
		     "Database " + QuoteName(request.database) +
		         " does not exist. List databases with differential_databases().");
	}
	auto prior = LookupRequest(metadata, request.database, request.request_id, request.Canonical());
	if (prior.completed) {
		return *prior.completed;
	}
	auto graph = metadata.SnapshotParents(request.database);
	for (auto id : {request.base, request.ours, request.theirs}) {
		if (!metadata.FindSnapshot(request.database, id)) {
			Fail(ErrorKind::NOT_FOUND, graph.count(id) ? "snapshot_expired" : "snapshot_not_found",
			     "Snapshot " + std::to_string(id) + " of database " + QuoteName(request.database) +
			         (graph.count(id) ? " was expired" : " does not exist") +
			         "; a merge needs all three inputs kept. List them with differential_snapshots('" +
			         request.database + "').");
		}
	}
	// Any kept snapshot may serve as the base: the caller chose it (the specification merges a
	// criss-cross history with one side's merge snapshot as base, which is no common ancestor).
	if (metadata.FindBranch(request.database, request.destination)) {
		Fail(ErrorKind::CONFLICT, "branch_exists",
		     "Branch " + QuoteName(request.destination) +
		         " already exists; differential_merge_snapshots always writes a new branch. Choose a new name.");
	}
	MergeBranchResult result;
	result.base = request.base;
	result.ours = request.ours;
	result.theirs = request.theirs;
	result.timings.selection_ms = MillisSince(selection_start);
	MetadataStore::MergeRecord record;
	record.request_id = request.request_id.value_or("");
	record.arguments = request.Canonical();
	record.base_snapshot_id = result.base;
	record.ours_snapshot_id = result.ours;
	record.theirs_snapshot_id = result.theirs;
	record.branch_name = request.destination;
	record.merge_action = "created_branch";
	StageAndPublish(instance, metadata, repository, request.database, request.destination, true,
	                "merging snapshot " + std::to_string(request.theirs) + " into snapshot " +
	                    std::to_string(request.ours) + " of database " + QuoteName(request.database),
	                record, result);
	return result;
}

MergePreview PreviewMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                const std::string &repository, const std::string &database, const std::string &target,
                                const std::string &source, bool validate) {
	MergePreview preview;
	preview.inputs = SelectInputs(metadata, database, target, source);
	auto &inputs = preview.inputs;
	if (inputs.base == inputs.theirs || inputs.base == inputs.ours) {
		// Nothing to combine: no table differs between the result and one of the sides.
		preview.validation_state = "not_checked";
		return preview;
	}
	MergeSession session(instance, metadata, repository, database, inputs);
	if (!validate) {
		session.Compare(false, preview.inputs.tables);
		preview.validation_state = "not_checked";
		return preview;
	}
	try {
		session.Compare(true, preview.inputs.tables);
		if (Conflicts(preview.inputs.tables) > 0) {
			preview.validation_state = "not_checked";
			return preview;
		}
		session.FinishStaging();
		preview.validation_state = "valid";
	} catch (duckdb::Exception &e) {
		if (duckdb::ErrorData(e).Type() != duckdb::ExceptionType::CONSTRAINT) {
			throw;
		}
		preview.validation_state = "invalid";
		preview.validation_error = e.what();
	}
	return preview;
}

MergePreflight PreflightMergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                                    const std::string &repository, const MergeBranchRequest &request) {
	MergePreflight preflight;
	bool create_destination = request.destination != request.target;
	auto record_issue = [&](const DifferentialError &error) {
		if (preflight.issue.empty()) {
			preflight.issue = error.code + ": " + error.what();
		}
	};
	preflight.inputs = SelectInputs(metadata, request.database, request.target, request.source);
	auto &in = preflight.inputs;
	if (create_destination) {
		preflight.target_state = metadata.FindBranch(request.database, request.destination) ? "exists" : "new";
		if (preflight.target_state == "exists") {
			preflight.issue = "invalid_argument: the destination is an existing branch other than the target";
		}
	} else {
		try {
			RequireBranchClosed(repository, request.database, request.target);
			BranchLock probe(FileAddress {repository, request.database, request.target, -1, MAIN_FILE_NAME});
			bool has_wal = false;
			preflight.target_state =
			    metadata.HasUnsnapshottedChanges(request.database, request.target, has_wal) ? "dirty" : "clean";
			if (preflight.target_state == "dirty") {
				preflight.issue = "merge_target_dirty: the target has writes after its latest snapshot";
			}
		} catch (DifferentialError &error) {
			preflight.target_state = error.code == "branch_locked" ? "locked" : "attached";
			record_issue(error);
		}
	}
	bool trivial = in.base == in.theirs || in.base == in.ours;
	preflight.merge_action = create_destination     ? "created_branch"
	                         : in.base == in.theirs ? "already_up_to_date"
	                         : in.base == in.ours   ? "fast_forward"
	                                                : "merged";
	if (trivial) {
		preflight.validation_state = "not_checked";
	} else {
		try {
			auto preview = PreviewMergeBranch(instance, metadata, repository, request.database, request.target,
			                                  request.source, true);
			preflight.validation_state = preview.validation_state;
			in.tables = preview.inputs.tables;
			int64_t conflicts = 0;
			for (auto &t : in.tables) {
				conflicts += t.counts.conflicts;
			}
			if (conflicts > 0 && preflight.issue.empty()) {
				preflight.issue = "merge_conflict: " + std::to_string(conflicts) + " conflicting rows";
			}
			if (preview.validation_state == "invalid" && preflight.issue.empty()) {
				preflight.issue = "merge_validation_failed: " + preview.validation_error;
			}
		} catch (DifferentialError &error) {
			preflight.validation_state = "not_checked";
			record_issue(error);
		}
	}
	preflight.ready = preflight.issue.empty();
	return preflight;
}

} // namespace differential
