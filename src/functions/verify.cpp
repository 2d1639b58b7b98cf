// differential_verify(): one row per check; a clean repository has problems = 0 on every row.
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "maintenance/repository_verifier.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	return BindRows(
	    {{"check_name", LogicalType::VARCHAR},
	     {"objects_checked", LogicalType::BIGINT},
	     {"problems", LogicalType::BIGINT},
	     {"detail", LogicalType::VARCHAR}},
	    [](ClientContext &context) {
		    Rows rows;
		    for (auto &check : VerifyRepository(*CurrentRepository(context))) {
			    rows.push_back({Value(check.check), Value::BIGINT(check.objects_checked), Value::BIGINT(check.problems),
			                    check.detail.empty() ? Value(LogicalType::VARCHAR) : Value(check.detail)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction VerifyFunction() {
	return MakeRowsFunction("differential_verify", {}, TranslatedBind<Bind>);
}

} // namespace differential
