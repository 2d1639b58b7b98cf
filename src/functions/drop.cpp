// differential_drop_branch(database, branch) and differential_drop_database(database). Snapshots
// outlive a dropped branch; a dropped database's data is reclaimed by the next cleanup.
#include "catalog/branch_access.hpp"
#include "catalog/snapshot_attachments.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "storage/diff_file_system.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> BindDropBranch(ClientContext &, TableFunctionBindInput &input,
                                               vector<LogicalType> &types, vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	auto branch = StringArgument(input, 1, "branch name");
	ValidateName("database", database);
	ValidateName("branch", branch);
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR}, {"branch_name", LogicalType::VARCHAR}},
	    [=](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    if (branch == "main" || !repository->metadata->history.FindBranch(database, branch)) {
			    // DropBranch refuses main and unknown names before it writes anything; asking it
			    // first keeps those refusals independent of whether the branch is attached.
			    repository->metadata->lifecycle.DropBranch(database, branch);
		    }
		    auto lock = LockClosedBranch(repository->root, database, branch);
		    repository->metadata->lifecycle.DropBranch(database, branch);
		    return Rows {{Value(database), Value(branch)}};
	    },
	    types, names);
}

static unique_ptr<FunctionData> BindDropDatabase(ClientContext &, TableFunctionBindInput &input,
                                                 vector<LogicalType> &types, vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"branches_dropped", LogicalType::BIGINT},
	     {"snapshots_dropped", LogicalType::BIGINT}},
	    [=](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    auto &metadata = *repository->metadata;
		    auto record = metadata.history.FindDatabase(database, true);
		    if (!record) {
			    Fail(ErrorCode::DATABASE_NOT_FOUND,
			         "Database " + QuoteName(database) +
			             " does not exist. List databases with differential_databases().");
		    }
		    // This instance's time-travel attachments are ours to close; anything else must be.
		    ReleaseSnapshotAttachments(context, repository->root, database);
		    std::vector<std::unique_ptr<BranchLock>> locks;
		    for (auto &branch : metadata.history.ListBranches(database)) {
			    locks.push_back(LockClosedBranch(repository->root, database, branch.name));
		    }
		    metadata.lifecycle.DropDatabase(database);
		    return Rows {{Value(database), Value::BIGINT(record->branch_count), Value::BIGINT(record->snapshot_count)}};
	    },
	    types, names);
}

TableFunction DropBranchFunction() {
	return MakeRowsFunction("differential_drop_branch", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                        TranslatedBind<BindDropBranch>);
}

TableFunction DropDatabaseFunction() {
	return MakeRowsFunction("differential_drop_database", {LogicalType::VARCHAR}, TranslatedBind<BindDropDatabase>);
}

} // namespace differential
