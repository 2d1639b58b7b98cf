// A table's column segments as DuckDB's storage lists them (what pragma_storage_info shows), read from
// the catalog entry directly: the pragma converts each segment's statistics to a VARIANT, most of its cost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace duckdb {
class Connection;
}

namespace differential {

struct SegmentRecord {
	int64_t row_group = 0;
	int64_t column_id = 0;
	//! The table column's name, lower-cased (DuckDB's names are case-insensitive).
	std::string column_name;
	//! The path within a nested column, as pragma_storage_info writes it ("[0]", "[0, 0]", ...).
	std::string column_path;
	std::string segment_type;
	int64_t start = 0;
	int64_t count = 0;
	std::string compression;
	//! The segment's statistics (min, max, null flags), as text.
	std::string stats;
	bool has_updates = false;
	bool persistent = false;
	//! -1 when not persistent.
	int64_t block_id = -1;
	int64_t block_offset = 0;
	std::vector<int64_t> additional_blocks;
};

//! The segments of `alias`.main.`table` ordered by row group, column, path and start. False when the
//! table is not a DuckDB table of that catalog.
bool ListColumnSegments(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                        std::vector<SegmentRecord> &out);

} // namespace differential
