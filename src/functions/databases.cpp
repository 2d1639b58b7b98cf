// differential_databases(): every database in the current repository.
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"database_uuid", LogicalType::VARCHAR},
	     {"created_at", LogicalType::TIMESTAMP_TZ},
	     {"branch_count", LogicalType::BIGINT},
	     {"snapshot_count", LogicalType::BIGINT}},
	    [](ClientContext &context) {
		    Rows rows;
		    for (auto &db : CurrentRepository(context)->metadata->history.ListDatabases()) {
			    rows.push_back({Value(db.name), Value(db.uuid), TimestampFromMicros(db.created_at_us),
			                    Value::BIGINT(db.branch_count), Value::BIGINT(db.snapshot_count)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction DatabasesFunction() {
	return MakeRowsFunction("differential_databases", {}, TranslatedBind<Bind>);
}

} // namespace differential
