// A table's row groups as DuckDB's storage holds them: where each starts, how many rows it spans and
// how many of those are live, read from the row-group tree without scanning a row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duckdb {
class Connection;
}

namespace differential {

struct RowGroupCount {
	//! The group's first rowid; its rows are rowids [start, start + rows).
	int64_t start = 0;
	int64_t rows = 0;
	//! Rows not deleted by a committed transaction.
	int64_t live = 0;
};

//! The row groups of `alias`.main.`table`, in rowid order (the order pragma_storage_info numbers them).
//! False when the table is not a DuckDB table of that catalog.
bool CountRowGroups(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                    std::vector<RowGroupCount> &out);

} // namespace differential
