// The bind wrapper behind differential_sql_functions: one check for every registered function.
#include "functions/function_access.hpp"

#include "catalog/differential_catalog.hpp"
#include "common/duckdb_errors.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/database_manager.hpp"

namespace differential {

using namespace duckdb;

static constexpr const char *SETTING = "differential_sql_functions";

//! The function's own bind and what it does, carried by the function itself (a bind is a plain pointer).
struct GuardInfo : public TableFunctionInfo {
	GuardInfo(std::string name, table_function_bind_t bind, FunctionAccess access)
	    : name(std::move(name)), bind(bind), access(access) {
	}
	std::string name;
	table_function_bind_t bind;
	FunctionAccess access;
};

bool SqlFunctionsReadOnly(ClientContext &context) {
	Value value;
	return context.TryGetCurrentSetting(SETTING, value) && !value.IsNull() &&
	       StringUtil::Lower(value.ToString()) == "read_only";
}

bool MayListDatabase(ClientContext &context, const std::string &database) {
	if (!SqlFunctionsReadOnly(context)) {
		return true;
	}
	for (auto &attached : DatabaseManager::Get(context).GetDatabases(context)) {
		auto catalog = dynamic_cast<DifferentialCatalog *>(&attached->GetCatalog());
		if (catalog && catalog->database_name == database) {
			return true;
		}
	}
	return false;
}

void CheckSqlFunctionsSetting(ClientContext &context, const Value &parameter) {
	auto mode = parameter.IsNull() ? std::string() : StringUtil::Lower(parameter.ToString());
	Translated([&]() {
		if (mode != "all" && mode != "read_only") {
			Fail(ErrorCode::INVALID_ARGUMENT,
			     "differential_sql_functions takes 'all' (default: every function) or 'read_only' (functions that "
			     "write a repository are refused); got " +
			         parameter.ToString() + ". Nothing was changed.");
		}
		// A sandbox sets 'read_only' before it locks the configuration; going back is refused as well, so the
		// lock is not the only thing standing between a session and the writers.
		if (mode == "all" && SqlFunctionsReadOnly(context)) {
			Fail(ErrorCode::FUNCTION_NOT_ALLOWED,
			     "differential_sql_functions is 'read_only' in this DuckDB instance and stays so. Open another "
			     "instance to call functions that write a repository.");
		}
	});
}

static unique_ptr<FunctionData> CheckedBind(ClientContext &context, TableFunctionBindInput &input,
                                            vector<LogicalType> &types, vector<Identifier> &names) {
	auto &guard = input.info->Cast<GuardInfo>();
	if (guard.access == FunctionAccess::WRITES && SqlFunctionsReadOnly(context)) {
		Translated([&]() {
			Fail(ErrorCode::FUNCTION_NOT_ALLOWED,
			     guard.name + " writes a repository, and differential_sql_functions is 'read_only' here. Ask whoever "
			                  "owns the repository (e.g. the review server's API) to do it; reads such as "
			                  "differential_snapshots() stay available.");
		});
	}
	return guard.bind(context, input, types, names);
}

TableFunction Guarded(TableFunction function, FunctionAccess access) {
	function.function_info = make_shared_ptr<GuardInfo>(function.name.GetIdentifierName(), function.bind, access);
	function.bind = CheckedBind;
	return function;
}

TableFunctionSet Guarded(TableFunctionSet set, FunctionAccess access) {
	TableFunctionSet guarded(set.name);
	for (auto &function : set.functions) {
		guarded.AddFunction(Guarded(TableFunction(*function), access));
	}
	return guarded;
}

} // namespace differential
