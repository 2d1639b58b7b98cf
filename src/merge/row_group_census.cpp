// Live rows per row group from the version info DuckDB keeps beside each group: a merge input is a
// read-only snapshot, so every delete it holds is committed and this equals count(*) over the group.
#include "merge/row_group_census.hpp"

#include "duckdb/catalog/catalog_entry/duck_table_entry.hpp"
#include "duckdb/storage/data_table.hpp"
#include "duckdb/storage/table/row_group.hpp"
#include "duckdb/storage/table/row_group_collection.hpp"
#include "duckdb/storage/table/row_group_segment_tree.hpp"
#include "merge/duck_table.hpp"

namespace differential {

bool CountRowGroups(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                    std::vector<RowGroupCount> &out) {
	out.clear();
	return ReadDuckTable(connection, alias, table, [&](duckdb::ClientContext &, duckdb::DuckTableEntry &entry) {
		auto groups = entry.GetStorage().GetRowGroupCollection()->GetRowGroups();
		for (auto node = groups->GetRootSegment(); node; node = groups->GetNextSegment(*node)) {
			RowGroupCount count;
			count.start = static_cast<int64_t>(node->GetRowStart());
			count.rows = static_cast<int64_t>(node->GetCount());
			count.live = static_cast<int64_t>(node->GetNode().GetCommittedRowCount());
			out.push_back(count);
		}
	});
}

} // namespace differential
