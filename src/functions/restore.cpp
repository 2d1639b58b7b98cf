// differential_restore(database, snapshot, branch => 'main'): points a closed branch at a
// snapshot's state. The replaced state is kept as a snapshot first when it was never snapshotted.
#include "catalog/branch_access.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/database_export.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	if (input.inputs[1].IsNull()) {
		Fail(ErrorCode::INVALID_ARGUMENT, "The snapshot to restore must not be NULL.");
	}
	auto snapshot_id = input.inputs[1].GetValue<int64_t>();
	auto branch = NamedString(input, "branch").value_or("main");
	ValidateName("branch", branch);
	return BindRows(
	    {{"snapshot_id", LogicalType::BIGINT},
	     {"preserved_snapshot_id", LogicalType::BIGINT},
	     {"branch_name", LogicalType::VARCHAR},
	     {"restored_snapshot_id", LogicalType::BIGINT}},
	    [=](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    auto &metadata = *repository->metadata;
		    if (!metadata.history.FindBranch(database, branch)) {
			    Fail(metadata.history.FindDatabase(database) ? ErrorCode::BRANCH_NOT_FOUND
			                                                 : ErrorCode::DATABASE_NOT_FOUND,
			         "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
			             " does not exist. List branches with differential_branches('" + database + "').");
		    }
		    if (!metadata.history.FindSnapshot(database, snapshot_id)) {
			    Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
			         "Database " + QuoteName(database) + " has no snapshot " + std::to_string(snapshot_id) +
			             ". List its snapshots with differential_snapshots('" + database + "').");
		    }
		    RequireBranchClosed(repository->root, database, branch);
		    bool has_wal = false;
		    if (metadata.history.HasUnsnapshottedChanges(database, branch, has_wal) && has_wal) {
			    // Folding the WAL into the database file changes no data; it attaches the branch, so it
			    // takes (and gives back) the branch lock itself, refusing if another process writes it.
			    CheckpointClosedBranch(context, *repository, database, branch);
		    }
		    // Everything that changes history happens under the lock, after every check passed.
		    auto lock = LockClosedBranch(repository->root, database, branch);
		    Value preserved(LogicalType::BIGINT);
		    if (metadata.history.HasUnsnapshottedChanges(database, branch, has_wal)) {
			    if (has_wal) {
				    Fail(ErrorCode::BRANCH_CHANGED,
				         "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
				             " was written while the restore prepared it. Retry once nothing writes it.");
			    }
			    SnapshotRequest request;
			    request.message = "state before restoring snapshot " + std::to_string(snapshot_id);
			    preserved = Value::BIGINT(metadata.history.CreateSnapshot(database, branch, request).snapshot_id);
		    }
		    auto restored = metadata.lifecycle.RestoreBranch(database, branch, snapshot_id);
		    ExportDatabase(context, *repository, database);
		    return Rows {{Value::BIGINT(restored.snapshot_id), preserved, Value(branch), Value::BIGINT(snapshot_id)}};
	    },
	    types, names);
}

TableFunction RestoreFunction() {
	auto function =
	    MakeRowsFunction("differential_restore", {LogicalType::VARCHAR, LogicalType::BIGINT}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("branch", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	return function;
}

} // namespace differential
