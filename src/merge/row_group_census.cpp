// Live rows per row group from the version info DuckDB keeps beside each group: a merge input is a
// read-only snapshot, so every delete it holds is committed and this equals count(*) over the group.
#include "merge/row_group_census.hpp"

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/duck_table_entry.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/storage/data_table.hpp"
#include "duckdb/storage/table/row_group.hpp"
#include "duckdb/storage/table/row_group_collection.hpp"
#include "duckdb/storage/table/row_group_segment_tree.hpp"

namespace differential {

bool CountRowGroups(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                    std::vector<RowGroupCount> &out) {
	out.clear();
	bool found = false;
	auto &context = *connection.context;
	context.RunFunctionInTransaction([&]() {
		duckdb::QualifiedName name(duckdb::Identifier(alias), duckdb::Identifier("main"), duckdb::Identifier(table));
		auto entry =
		    duckdb::Catalog::GetEntry<duckdb::TableCatalogEntry>(context, name, duckdb::OnEntryNotFound::RETURN_NULL);
		if (!entry || !entry->IsDuckTable()) {
			return;
		}
		auto groups = entry->Cast<duckdb::DuckTableEntry>().GetStorage().GetRowGroupCollection()->GetRowGroups();
		for (auto node = groups->GetRootSegment(); node; node = groups->GetNextSegment(*node)) {
			RowGroupCount count;
			count.start = static_cast<int64_t>(node->GetRowStart());
			count.rows = static_cast<int64_t>(node->GetCount());
			count.live = static_cast<int64_t>(node->GetNode().GetCommittedRowCount());
			out.push_back(count);
		}
		found = true;
	});
	return found;
}

} // namespace differential
