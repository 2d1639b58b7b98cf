// The lookup shared by the row-group and segment readers: the catalog entry, only if DuckDB stores it.
#include "merge/duck_table.hpp"

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/duck_table_entry.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/connection.hpp"

namespace differential {

bool ReadDuckTable(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                   const std::function<void(duckdb::ClientContext &, duckdb::DuckTableEntry &)> &read) {
	bool found = false;
	auto &context = *connection.context;
	context.RunFunctionInTransaction([&]() {
		duckdb::QualifiedName name(duckdb::Identifier(alias), duckdb::Identifier("main"), duckdb::Identifier(table));
		auto entry =
		    duckdb::Catalog::GetEntry<duckdb::TableCatalogEntry>(context, name, duckdb::OnEntryNotFound::RETURN_NULL);
		if (!entry || !entry->IsDuckTable()) {
			return;
		}
		read(context, entry->Cast<duckdb::DuckTableEntry>());
		found = true;
	});
	return found;
}

} // namespace differential
