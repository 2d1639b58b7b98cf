// differential_create_branch(database, branch, snapshot =>): a writable continuation of a
// snapshot (by default the newest snapshot of main). Copies a chunk map, never data.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	auto branch = StringArgument(input, 1, "branch name");
	ValidateName("database", database);
	ValidateNewBranchName(branch);
	auto snapshot = NamedInteger(input, "snapshot");
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"branch_name", LogicalType::VARCHAR},
	     {"snapshot_id", LogicalType::BIGINT}},
	    [database, branch, snapshot](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    auto &metadata = *repository->metadata;
		    auto from = SnapshotOrLatest(metadata, database, snapshot, "branch from");
		    auto record = metadata.history.CreateBranch(database, branch, from);
		    return Rows {{Value(database), Value(record.name), Value::BIGINT(from)}};
	    },
	    types, names);
}

TableFunction CreateBranchFunction() {
	auto function = MakeRowsFunction("differential_create_branch", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                 TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("snapshot", LogicalType::BIGINT, Value(LogicalType::BIGINT));
	return function;
}

} // namespace differential
