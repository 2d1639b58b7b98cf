// differential_io_counters(): the process's counts of extension file system calls and metadata statements, for
// benchmarks and diagnosis (take the difference of two reads around what you measure).
#include "common/counters.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	return BindRows(
	    {{"counter", LogicalType::VARCHAR}, {"value", LogicalType::UBIGINT}},
	    [](ClientContext &) {
		    Rows rows;
		    for (auto &entry : CounterValues()) {
			    rows.push_back({Value(entry.first), Value::UBIGINT(entry.second)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction IoCountersFunction() {
	return MakeRowsFunction("differential_io_counters", {}, TranslatedBind<Bind>);
}

} // namespace differential
