// What each SQL function may do under differential_sql_functions: a session set to 'read_only' (the review
// server's sandbox) keeps the reads of what it has attached and loses every function that writes a repository.
#pragma once

#include "duckdb/function/function_set.hpp"
#include "duckdb/function/table_function.hpp"
#include "duckdb/main/client_context.hpp"

#include <string>

namespace differential {

enum class FunctionAccess { READS, WRITES };

//! `function` with its bind checked first: a WRITES function refuses with function_not_allowed under 'read_only'.
//! Declared once at registration, so no function can forget the check.
duckdb::TableFunction Guarded(duckdb::TableFunction function, FunctionAccess access);
duckdb::TableFunctionSet Guarded(duckdb::TableFunctionSet set, FunctionAccess access);

//! Whether differential_sql_functions is 'read_only' in this session.
bool SqlFunctionsReadOnly(duckdb::ClientContext &context);
//! Whether a process-wide listing may show `database` here: always, unless the session is 'read_only', where only
//! databases attached in this DuckDB instance are shown (other instances of the process are not this session's).
bool MayListDatabase(duckdb::ClientContext &context, const std::string &database);
//! Refuses a differential_sql_functions value other than 'all' and 'read_only', and going back from 'read_only'.
void CheckSqlFunctionsSetting(duckdb::ClientContext &context, const duckdb::Value &parameter);

} // namespace differential
