// differential_merge_requests(database): every merge request of a database, completed or pending
// (a failed attempt whose frozen inputs a retry with the same arguments reuses).
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindRows(
	    {{"request_id", LogicalType::VARCHAR},
	     {"state", LogicalType::VARCHAR},
	     {"merge_action", LogicalType::VARCHAR},
	     {"destination", LogicalType::VARCHAR},
	     {"base_snapshot_id", LogicalType::BIGINT},
	     {"ours_snapshot_id", LogicalType::BIGINT},
	     {"theirs_snapshot_id", LogicalType::BIGINT},
	     {"result_snapshot_id", LogicalType::BIGINT},
	     {"attempts", LogicalType::BIGINT},
	     {"last_error_code", LogicalType::VARCHAR},
	     {"created_at", LogicalType::TIMESTAMP_TZ},
	     {"completed_at", LogicalType::TIMESTAMP_TZ}},
	    [database](ClientContext &context) {
		    Rows rows;
		    for (auto &r : CurrentRepository(context)->metadata->ListMergeRequests(database)) {
			    rows.push_back({Value(r.request_id), Value(r.state), Value(r.merge_action), Value(r.branch_name),
			                    OptionalId(r.base_snapshot_id), OptionalId(r.ours_snapshot_id),
			                    OptionalId(r.theirs_snapshot_id), OptionalId(r.snapshot_id), Value::BIGINT(r.attempts),
			                    r.last_error_code.empty() ? Value(LogicalType::VARCHAR) : Value(r.last_error_code),
			                    TimestampFromMicros(r.created_at_us),
			                    r.completed_at_us >= 0 ? TimestampFromMicros(r.completed_at_us)
			                                           : Value(LogicalType::TIMESTAMP_TZ)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction MergeRequestsFunction() {
	return MakeRowsFunction("differential_merge_requests", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
}

} // namespace differential
