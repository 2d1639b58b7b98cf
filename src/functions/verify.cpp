// differential_verify(): one row per check; a clean repository has problems = 0 on every row.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "maintenance/repository_verifier.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> BindFor(std::string database, vector<LogicalType> &types, vector<Identifier> &names) {
	return BindRows(
	    {{"check_name", LogicalType::VARCHAR},
	     {"objects_checked", LogicalType::BIGINT},
	     {"problems", LogicalType::BIGINT},
	     {"detail", LogicalType::VARCHAR}},
	    [database](ClientContext &context) {
		    Rows rows;
		    auto repository = CurrentRepository(context);
		    if (!database.empty() && !repository->metadata->history.FindDatabase(database)) {
			    Fail(ErrorCode::DATABASE_NOT_FOUND,
			         "Database " + QuoteName(database) +
			             " does not exist. List databases with differential_databases().");
		    }
		    for (auto &check : VerifyRepository(*repository, database)) {
			    rows.push_back({Value(check.check), Value::BIGINT(check.objects_checked), Value::BIGINT(check.problems),
			                    check.detail.empty() ? Value(LogicalType::VARCHAR) : Value(check.detail)});
		    }
		    return rows;
	    },
	    types, names);
}

static unique_ptr<FunctionData> BindAll(ClientContext &, TableFunctionBindInput &, vector<LogicalType> &types,
                                        vector<Identifier> &names) {
	return BindFor("", types, names);
}

static unique_ptr<FunctionData> BindOne(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                        vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	return BindFor(database, types, names);
}

TableFunctionSet VerifyFunctions() {
	TableFunctionSet set(Identifier("differential_verify"));
	set.AddFunction(MakeRowsFunction("differential_verify", {}, TranslatedBind<BindAll>));
	set.AddFunction(MakeRowsFunction("differential_verify", {LogicalType::VARCHAR}, TranslatedBind<BindOne>));
	return set;
}

} // namespace differential
