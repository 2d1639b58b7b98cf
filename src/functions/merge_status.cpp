// differential_merge_status(): the merges this process runs right now, one row per merge and table,
// with the phase, the progress and the table's counters so far.
#include "functions/function_access.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/merge_progress.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	return BindRows(
	    {{"operation_id", LogicalType::VARCHAR},
	     {"request_id", LogicalType::VARCHAR},
	     {"database_name", LogicalType::VARCHAR},
	     {"phase", LogicalType::VARCHAR},
	     {"progress", LogicalType::DOUBLE},
	     {"started_at", LogicalType::TIMESTAMP_TZ},
	     {"elapsed_ms", LogicalType::BIGINT},
	     {"table_name", LogicalType::VARCHAR},
	     {"table_state", LogicalType::VARCHAR},
	     {"ours_changes", LogicalType::BIGINT},
	     {"theirs_changes", LogicalType::BIGINT},
	     {"conflicts", LogicalType::BIGINT},
	     {"resolved_conflicts", LogicalType::BIGINT}},
	    [](ClientContext &context) {
		    Rows rows;
		    for (auto &merge : RunningMerges()) {
			    // The process may host other instances (a server's sessions): a 'read_only' session sees its own.
			    if (!MayListDatabase(context, merge.database)) {
				    continue;
			    }
			    vector<Value> head {OptionalText(!merge.operation_id.empty(), merge.operation_id),
			                        OptionalText(!merge.request_id.empty(), merge.request_id),
			                        Value(merge.database),
			                        Value(ToString(merge.phase)),
			                        Value::DOUBLE(merge.progress),
			                        TimestampFromMicros(merge.started_at_us),
			                        Value::BIGINT(merge.elapsed_ms)};
			    if (merge.tables.empty()) {
				    auto row = head;
				    for (size_t i = 0; i < 6; i++) {
					    row.push_back(i < 2 ? Value(LogicalType::VARCHAR) : Value(LogicalType::BIGINT));
				    }
				    rows.push_back(row);
			    }
			    for (auto &table : merge.tables) {
				    auto row = head;
				    auto &c = table.counts;
				    row.push_back(Value(table.table));
				    row.push_back(Value(ToString(table.state)));
				    row.push_back(Value::BIGINT(c.ours_inserts + c.ours_updates + c.ours_deletes));
				    row.push_back(Value::BIGINT(c.theirs_inserts + c.theirs_updates + c.theirs_deletes));
				    row.push_back(Value::BIGINT(c.conflicts));
				    row.push_back(Value::BIGINT(c.resolved_conflicts));
				    rows.push_back(row);
			    }
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction MergeStatusFunction() {
	return MakeRowsFunction("differential_merge_status", {}, TranslatedBind<Bind>);
}

} // namespace differential
