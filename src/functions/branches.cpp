// differential_branches(database): the branches of a database and where they stand.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "storage/diff_file_system.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindRows(
	    {{"branch_name", LogicalType::VARCHAR},
	     {"base_snapshot_id", LogicalType::BIGINT},
	     {"head_snapshot_id", LogicalType::BIGINT},
	     {"created_at", LogicalType::TIMESTAMP_TZ},
	     {"open_in_process", LogicalType::BOOLEAN}},
	    [database](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    Rows rows;
		    for (auto &branch : repository->metadata->history.ListBranches(database)) {
			    FileAddress address;
			    address.repository = repository->root;
			    address.database = database;
			    address.branch = branch.name;
			    bool open = DiffFileSystem::OpenHandleCount(address.OwnerKey()) > 0;
			    rows.push_back({Value(branch.name), OptionalId(branch.base_snapshot_id),
			                    OptionalId(branch.head_snapshot_id), TimestampFromMicros(branch.created_at_us),
			                    Value::BOOLEAN(open)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction BranchesFunction() {
	return MakeRowsFunction("differential_branches", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
}

} // namespace differential
