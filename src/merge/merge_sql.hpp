// Running the SQL a merge composes on its private connection: errors surface as exceptions, and a
// refusal our own code raised inside the statement surfaces as itself (DifferentialError), fields intact.
#pragma once

#include "common/duckdb_errors.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/error_data.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/query_result.hpp"

#include <string>

namespace differential {

//! Throws a failed statement's error: the DifferentialError our code raised inside the statement
//! (an input's ATTACH, a read of its file) when there is one, otherwise DuckDB's own.
[[noreturn]] inline void ThrowStatementError(const duckdb::ErrorData &error) {
	if (auto raised = RaisedInside(error)) {
		throw *raised;
	}
	error.Throw();
}

inline duckdb::unique_ptr<duckdb::QueryResult> RunSql(duckdb::Connection &connection, const std::string &sql) {
	auto result = connection.Query(sql);
	if (result->HasError()) {
		ThrowStatementError(result->GetErrorObject());
	}
	return result;
}

//! A query's rows for a range-for: the result lives as long as the loop (a range-for over
//! `*RunSql(...)` would iterate a result already destroyed).
struct SqlRows {
	duckdb::unique_ptr<duckdb::QueryResult> result;
	duckdb::QueryResult::iterator begin() {
		return result->begin();
	}
	duckdb::QueryResult::iterator end() {
		return result->end();
	}
};

inline SqlRows QueryRows(duckdb::Connection &connection, const std::string &sql) {
	return SqlRows {RunSql(connection, sql)};
}

//! The first column of a one-value query as an integer (NULL and no row read as 0).
inline int64_t ScalarInt(duckdb::Connection &connection, const std::string &sql) {
	int64_t value = 0;
	for (auto &row : QueryRows(connection, sql)) {
		value = row.GetBaseValue(0).IsNull() ? 0 : row.GetBaseValue(0).GetValue<int64_t>();
	}
	return value;
}

//! The size of the attached database `alias`'s file, and its block size.
//! Attaches database `database` of `repository` as `alias` with the ATTACH options `options` (a snapshot, read-only).
inline void AttachInput(duckdb::Connection &connection, const std::string &repository, const std::string &database,
                        const std::string &alias, const std::string &options) {
	RunSql(connection, "ATTACH " + SqlLiteral("differential:" + database) + " AS " + SqlIdentifier(alias) + " (" +
	                       options + ", REPOSITORY " + SqlLiteral(repository) + ")");
}

inline int64_t DatabaseBytes(duckdb::Connection &connection, const std::string &alias) {
	return ScalarInt(connection, "SELECT total_blocks * block_size FROM pragma_database_size() WHERE database_name = " +
	                                 SqlLiteral(alias));
}
inline int64_t DatabaseBlockSize(duckdb::Connection &connection, const std::string &alias) {
	return ScalarInt(connection,
	                 "SELECT block_size FROM pragma_database_size() WHERE database_name = " + SqlLiteral(alias));
}

} // namespace differential
