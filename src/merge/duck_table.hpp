// A merge input's table as DuckDB's storage holds it, looked up in the input's catalog within a transaction,
// for the readers of its row groups and segments.
#pragma once

#include <functional>
#include <string>

namespace duckdb {
class ClientContext;
class Connection;
class DuckTableEntry;
} // namespace duckdb

namespace differential {

//! Runs `read` on `alias`.main.`table` in a transaction of the connection; false (without running it) when
//! the table is not a DuckDB table of that catalog.
bool ReadDuckTable(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                   const std::function<void(duckdb::ClientContext &, duckdb::DuckTableEntry &)> &read);

} // namespace differential
