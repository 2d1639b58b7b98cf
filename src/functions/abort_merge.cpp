// differential_abort_merge(database, operation_id, request_id =>): ends a pending merge request for
// good; replaying it afterwards fails with merge_aborted. Aborting an aborted request is a no-op.
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
	auto operation_id = StringArgument(input, 1, "operation id");
	auto request_id = NamedString(input, "request_id");
	if (request_id) {
		ValidateName("request", *request_id);
	}
	return BindRows(
	    {{"operation_id", LogicalType::VARCHAR},
	     {"request_id", LogicalType::VARCHAR},
	     {"state", LogicalType::VARCHAR},
	     {"snapshot_id", LogicalType::BIGINT}},
	    [=](ClientContext &context) {
		    auto record = CurrentRepository(context)->metadata->merges.AbortMergeRequest(database, operation_id,
		                                                                          request_id.value_or(""));
		    return Rows {{Value(record.operation_id), Value(record.request_id), Value(MergeRequestStateName(record.state)),
		                  OptionalId(record.snapshot_id)}};
	    },
	    types, names);
}

TableFunction AbortMergeFunction() {
	auto function = MakeRowsFunction("differential_abort_merge", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                 TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("request_id", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	return function;
}

} // namespace differential
