// Running the SQL a merge composes on its private connection: errors surface as exceptions.
#pragma once

#include "duckdb/main/connection.hpp"
#include "duckdb/main/query_result.hpp"

#include <string>

namespace differential {

inline duckdb::unique_ptr<duckdb::QueryResult> RunSql(duckdb::Connection &connection, const std::string &sql) {
	auto result = connection.Query(sql);
	if (result->HasError()) {
		result->ThrowError();
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

} // namespace differential
