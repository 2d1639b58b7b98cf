// Column segments from TableCatalogEntry::GetColumnSegmentInfo, the call pragma_storage_info makes,
// without the pragma's result set: a merge reads three inputs' layouts and only needs their text.
#include "merge/segment_census.hpp"

#include "duckdb/catalog/catalog_entry/duck_table_entry.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/storage/table_storage_info.hpp"
#include "merge/duck_table.hpp"

#include <algorithm>
#include <tuple>

namespace differential {

static SegmentRecord ToRecord(const duckdb::ColumnSegmentInfo &info, const duckdb::ColumnList &columns) {
	SegmentRecord record;
	record.row_group = static_cast<int64_t>(info.row_group_index);
	record.column_id = static_cast<int64_t>(info.column_id);
	record.column_name =
	    duckdb::StringUtil::Lower(columns.GetColumn(duckdb::PhysicalIndex(info.column_id)).Name().GetIdentifierName());
	record.column_path = info.column_path;
	record.segment_type = info.segment_type;
	record.start = static_cast<int64_t>(info.segment_start);
	record.count = static_cast<int64_t>(info.segment_count);
	record.compression = info.compression_type;
	record.stats = info.segment_stats.ToString();
	record.has_updates = info.has_updates;
	record.persistent = info.persistent;
	if (info.persistent) {
		record.block_id = info.block_id;
		record.block_offset = static_cast<int64_t>(info.block_offset);
		record.additional_blocks.assign(info.additional_blocks.begin(), info.additional_blocks.end());
	}
	return record;
}

bool ListColumnSegments(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                        std::vector<SegmentRecord> &out) {
	out.clear();
	bool found =
	    ReadDuckTable(connection, alias, table, [&](duckdb::ClientContext &context, duckdb::DuckTableEntry &entry) {
		    auto &columns = entry.GetColumns();
		    for (auto &info : entry.GetColumnSegmentInfo(duckdb::QueryContext(context))) {
			    out.push_back(ToRecord(info, columns));
		    }
	    });
	std::sort(out.begin(), out.end(), [](const SegmentRecord &a, const SegmentRecord &b) {
		return std::tie(a.row_group, a.column_id, a.column_path, a.start) <
		       std::tie(b.row_group, b.column_id, b.column_path, b.start);
	});
	return found;
}

} // namespace differential
