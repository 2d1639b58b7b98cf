// differential_merge_requests(database, request_id =>): every merge request of a database, completed,
// pending (a failed attempt whose frozen inputs a retry with the same arguments reuses) or aborted.
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
	auto only = NamedString(input, "request_id");
	if (only) {
		ValidateName("request", *only);
	}
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
	     {"last_error", LogicalType::VARCHAR},
	     {"operation_id", LogicalType::VARCHAR},
	     {"time_zone", LogicalType::VARCHAR},
	     {"calendar", LogicalType::VARCHAR},
	     {"aborted_by", LogicalType::VARCHAR},
	     {"created_at", LogicalType::TIMESTAMP_TZ},
	     {"completed_at", LogicalType::TIMESTAMP_TZ}},
	    [database, only](ClientContext &context) {
		    Rows rows;
		    for (auto &r : CurrentRepository(context)->metadata->merges.ListMergeRequests(database)) {
			    if (only && r.request_id != *only) {
				    continue;
			    }
			    rows.push_back({Value(r.request_id), Value(MergeRequestStateName(r.state)), Value(r.merge_action), Value(r.branch_name),
			                    OptionalId(r.base_snapshot_id), OptionalId(r.ours_snapshot_id),
			                    OptionalId(r.theirs_snapshot_id), OptionalId(r.snapshot_id), Value::BIGINT(r.attempts),
			                    OptionalText(!r.last_error_code.empty(), r.last_error_code),
			                    OptionalText(!r.last_error.empty(), r.last_error),
			                    OptionalText(!r.operation_id.empty(), r.operation_id),
			                    OptionalText(!r.time_zone.empty(), r.time_zone),
			                    OptionalText(!r.calendar.empty(), r.calendar),
			                    OptionalText(!r.aborted_by.empty(), r.aborted_by), TimestampFromMicros(r.created_at_us),
			                    r.completed_at_us >= 0 ? TimestampFromMicros(r.completed_at_us)
			                                           : Value(LogicalType::TIMESTAMP_TZ)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction MergeRequestsFunction() {
	auto function = MakeRowsFunction("differential_merge_requests", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("request_id", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	return function;
}

} // namespace differential
