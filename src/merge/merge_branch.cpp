// A merge reads only published snapshots (through private read-only attachments), stages the
// result on a private branch forked from ours, and publishes it with its request record in one
// metadata transaction. Nothing reaches the target before that transaction.
#include "merge/merge_branch.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/process_identity.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/query_result.hpp"
#include "merge/ancestry.hpp"
#include "storage/branch_lock.hpp"

#include <atomic>
#include <cstdlib>
#include <map>
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
	auto columns = Run(connection, "SELECT schema_name, table_name, column_name, data_type FROM duckdb_columns() "
	                               "WHERE database_name = " +
	                                   SqlLiteral(alias) + " ORDER BY table_name, column_index");
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
	for (auto &branch : metadata.ListBranches(database)) {
		if (branch.name.rfind(STAGING_PREFIX, 0) != 0) {
			continue;
		}
		auto pid = std::atoll(branch.name.c_str() + std::string(STAGING_PREFIX).size());
		if (!ProcessAlive(pid, 0)) {
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

MergeBranchResult MergeBranch(duckdb::DatabaseInstance &instance, MetadataStore &metadata,
                              const std::string &repository, const MergeBranchRequest &request) {
	if (!metadata.FindDatabase(request.database)) {
		Fail(ErrorKind::NOT_FOUND, "database_not_found",
		     "Database " + QuoteName(request.database) +
		         " does not exist. List databases with differential_databases().");
	}
	if (request.request_id) {
		if (auto done = metadata.FindMergeRequest(request.database, *request.request_id)) {
			if (done->arguments != request.Canonical()) {
				Fail(ErrorKind::INVALID_INPUT, "merge_request_mismatch",
				     "Request " + QuoteName(*request.request_id) +
				         " was already used with other arguments; nothing was merged. Use a new request_id for a "
				         "different merge.");
			}
			return FromRecord(*done);
		}
	}
	auto target = metadata.FindBranch(request.database, request.target);
	auto source = metadata.FindBranch(request.database, request.source);
	for (auto &pair : {std::make_pair(&target, &request.target), std::make_pair(&source, &request.source)}) {
		if (!*pair.first) {
			Fail(ErrorKind::NOT_FOUND, "branch_not_found",
			     "Database " + QuoteName(request.database) + " has no branch " + QuoteName(*pair.second) +
			         ". List branches with differential_branches('" + request.database + "').");
		}
	}
	bool create_destination = request.destination != request.target;
	if (create_destination && metadata.FindBranch(request.database, request.destination)) {
		Fail(ErrorKind::INVALID_INPUT, "invalid_argument",
		     "The destination " + QuoteName(request.destination) +
		         " is an existing branch other than the target: merge into the target itself, or into a new "
		         "branch name.");
	}
	for (auto &pair : {std::make_pair(&target, &request.target), std::make_pair(&source, &request.source)}) {
		if ((*pair.first)->head_snapshot_id < 0) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_not_found",
			     "Branch " + QuoteName(*pair.second) +
			         " has no snapshot yet; merges read published snapshots only. Take one with "
			         "differential_create_snapshot() first.");
		}
	}
	MergeBranchResult result;
	result.ours = target->head_snapshot_id;
	result.theirs = source->head_snapshot_id;
	auto ancestry = ComputeAncestry(metadata.SnapshotParents(request.database), result.ours, result.theirs);
	if (ancestry.selection == BaseSelection::AMBIGUOUS) {
		Fail(ErrorKind::INVALID_INPUT, "merge_base_ambiguous",
		     "Multiple best common ancestors; use differential_merge_snapshots with an explicit base (see "
		     "differential_merge_ancestry('" +
		         request.database + "', " + std::to_string(result.ours) + ", " + std::to_string(result.theirs) + ")).");
	}
	if (ancestry.selection == BaseSelection::UNRELATED) {
		Fail(ErrorKind::INVALID_INPUT, "merge_base_missing",
		     "The heads of " + QuoteName(request.target) + " and " + QuoteName(request.source) +
		         " share no recorded ancestor, so there is no base to merge from.");
	}
	result.base = *ancestry.base;
	if ((request.expected_base && *request.expected_base != result.base) ||
	    (request.expected_ours && *request.expected_ours != result.ours) ||
	    (request.expected_theirs && *request.expected_theirs != result.theirs)) {
		Fail(ErrorKind::CONFLICT, "merge_inputs_changed",
		     "The merge inputs are base " + std::to_string(result.base) + ", ours " + std::to_string(result.ours) +
		         ", theirs " + std::to_string(result.theirs) +
		         ", not the expected ones; nothing was merged. Review the new inputs and retry with their ids.");
	}
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
	}
	MetadataStore::MergeRecord record;
	record.request_id = request.request_id.value_or("");
	record.arguments = request.Canonical();
	record.base_snapshot_id = result.base;
	record.ours_snapshot_id = result.ours;
	record.theirs_snapshot_id = result.theirs;
	record.branch_name = request.destination;
	result.branch_name = request.destination;
	if (result.base == result.theirs || result.base == result.ours) {
		bool up_to_date = result.base == result.theirs;
		record.snapshot_id = up_to_date ? result.ours : result.theirs;
		record.merge_action = create_destination ? "created_branch"
		                      : up_to_date       ? "already_up_to_date"
		                                         : "fast_forward";
		metadata.PublishExistingSnapshot(request.database, request.destination, create_destination, record);
		result.snapshot_id = record.snapshot_id;
		result.merge_action = record.merge_action;
		return result;
	}

	// Both sides changed since the base: stage the merge on a private branch forked from ours.
	DropAbandonedStagingBranches(metadata, request.database);
	static std::atomic<int64_t> counter {0};
	auto tag = std::to_string(getpid()) + "-" + std::to_string(++counter);
	auto staging = STAGING_PREFIX + tag;
	metadata.CreateBranch(request.database, staging, result.ours);
	Connection connection(instance);
	std::vector<std::string> attached;
	auto cleanup = [&]() {
		for (auto &alias : attached) {
			connection.Query("DETACH DATABASE IF EXISTS " + SqlIdentifier(alias));
		}
		attached.clear();
	};
	try {
		auto attach = [&](const std::string &alias, const std::string &options) {
			Run(connection, "ATTACH " + SqlLiteral("differential:" + request.database) + " AS " + SqlIdentifier(alias) +
			                    " (" + options + ", REPOSITORY " + SqlLiteral(repository) + ")");
			attached.push_back(alias);
		};
		auto base = "__merge_base@" + tag, ours = "__merge_ours@" + tag, theirs = "__merge_theirs@" + tag,
		     stage = "__merge_stage@" + tag;
		attach(base, "SNAPSHOT " + std::to_string(result.base) + ", READ_ONLY");
		attach(ours, "SNAPSHOT " + std::to_string(result.ours) + ", READ_ONLY");
		attach(theirs, "SNAPSHOT " + std::to_string(result.theirs) + ", READ_ONLY");
		auto base_shapes = Shapes(connection, base, "the base");
		auto ours_shapes = Shapes(connection, ours, "ours");
		auto theirs_shapes = Shapes(connection, theirs, "theirs");
		RequireSameShapes(base_shapes, ours_shapes, theirs_shapes);
		attach(stage, "BRANCH " + SqlLiteral(staging));
		int64_t conflicts = 0;
		for (auto &entry : base_shapes) {
			auto decisions = SqlIdentifier("__merge_decisions@" + tag + "@" + entry.first);
			Run(connection,
			    "CREATE TEMP TABLE " + decisions + " AS " + DecisionQuery(entry.second, base, ours, theirs));
			auto counts = Run(connection, CountQuery(entry.second, decisions));
			MergeTableResult table;
			table.table = entry.first;
			int64_t *fields[] = {&table.counts.ours_inserts,   &table.counts.ours_updates,
			                     &table.counts.ours_deletes,   &table.counts.theirs_inserts,
			                     &table.counts.theirs_updates, &table.counts.theirs_deletes,
			                     &table.counts.conflicts};
			for (auto &row : *counts) {
				for (size_t i = 0; i < 7; i++) {
					*fields[i] = row.GetBaseValue(i).GetValue<int64_t>();
				}
			}
			conflicts += table.counts.conflicts;
			if (table.counts.conflicts == 0) {
				for (auto &sql : ApplyStatements(entry.second, decisions, stage)) {
					Run(connection, sql);
				}
			}
			Run(connection, "DROP TABLE " + decisions);
			result.tables.push_back(table);
		}
		if (conflicts > 0) {
			Fail(ErrorKind::INVALID_INPUT, "merge_conflict",
			     std::to_string(conflicts) + " conflicting row" + (conflicts == 1 ? "" : "s") + " when " +
			         Describe(request) +
			         "; nothing was merged. Resolution tables are not in this build yet: reconcile the rows on one "
			         "branch, snapshot it, and merge again.");
		}
		Run(connection, "CHECKPOINT " + SqlIdentifier(stage));
		cleanup();
		record.merge_action = create_destination ? "created_branch" : "merged";
		result.snapshot_id =
		    metadata.PublishMerge(request.database, staging, request.destination, create_destination, record);
		result.merge_action = record.merge_action;
		return result;
	} catch (...) {
		cleanup();
		try {
			metadata.DropBranch(request.database, staging);
		} catch (...) {
			// A leftover staging branch holds no published data; dropping it later is harmless.
		}
		throw;
	}
}

} // namespace differential
