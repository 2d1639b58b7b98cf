// DifferentialCatalog: DuckDB's own catalog (native storage runs unchanged) plus time travel
// through hidden snapshot attachments and catalog-scoped functions such as analytics.snapshots().
#pragma once

#include "duckdb/catalog/catalog_entry/table_function_catalog_entry.hpp"
#include "duckdb/catalog/duck_catalog.hpp"
#include "duckdb/function/table_function.hpp"
#include "metadata/shared_writer_store.hpp"
#include "metadata/shipping_store.hpp"
#include "repository/repository.hpp"

#include <map>
#include <mutex>

namespace differential {

//! Handed to catalog-scoped functions: which database (and branch) `<alias>.fn()` was called on.
struct CatalogFunctionInfo : public duckdb::TableFunctionInfo {
	std::string repository;
	std::string database;
	std::string branch;
};

//! Registers a table function that each differential catalog answers as `<alias>.<name>()`.
void RegisterCatalogFunction(const std::string &name, duckdb::TableFunction function);
//! Whether `name` (any case) is one of them: remote attachments refuse these by name.
bool IsCatalogFunction(const std::string &name);

class DifferentialCatalog : public duckdb::DuckCatalog {
public:
	DifferentialCatalog(duckdb::AttachedDatabase &db, std::shared_ptr<Repository> repository, std::string database,
	                    std::string branch, int64_t snapshot_id);

	bool SupportsTimeTravel() const override {
		return true;
	}
	//! Releases the hidden snapshot attachments of this database once no attachment of it is left.
	void OnDetach(duckdb::ClientContext &context) override;
	//! Records the settings the ATTACH gave (DATA_PATH, SHIP_WAL, WRITERS), now that its storage opened: an
	//! ATTACH that DuckDB refuses after the hook leaves the database as it was. Hands the branch lock over.
	void FinalizeLoad(duckdb::optional_ptr<duckdb::ClientContext> context) override;

	//! The canonical DATA_PATH to record at FinalizeLoad, if the ATTACH adopts one.
	std::optional<std::string> adopt_data_path;
	//! SHIP_WAL / SHIP_INTERVAL settings to record at FinalizeLoad, when the ATTACH gave any.
	std::optional<ShipSettings> adopt_shipping;
	//! WRITERS / ON_CONFLICT settings to record at FinalizeLoad, when the ATTACH gave any.
	std::optional<SharedWriterSettings> adopt_shared;
	//! The branch lock ATTACH took before writing anything; the open of the branch's file adopts it, and
	//! FinalizeLoad lets go of this reference (the open file keeps the lock).
	std::shared_ptr<void> reserved_lock;
	//! The WAL shipper of a writable attachment of a shipping database (replication/wal_shipper.hpp);
	//! it stops, after shipping what is pending, when the catalog goes.
	std::shared_ptr<void> wal_shipper;
	//! A shared writer's background fetch of its evicted chunks (replication/imported_chunk_fetch.hpp); it stops
	//! when the catalog goes.
	std::shared_ptr<void> chunk_fetch;

	const std::shared_ptr<Repository> repository;
	const std::string database_name;
	//! Empty for a snapshot attachment.
	const std::string branch_name;
	const int64_t snapshot_id;

	//! The file-system key of this attachment's files, for open-handle counts.
	std::string OwnerKey() const;

private:
	duckdb::CatalogEntryLookup TryLookupEntryInternal(duckdb::CatalogTransaction transaction,
	                                                  const duckdb::EntryLookupInfo &lookup_info) override;
	duckdb::CatalogEntryLookup LookupInCatalog(duckdb::Catalog &catalog, duckdb::CatalogTransaction transaction,
	                                           const duckdb::EntryLookupInfo &lookup_info);
	duckdb::optional_ptr<duckdb::CatalogEntry> CatalogFunction(duckdb::CatalogTransaction transaction,
	                                                           duckdb::SchemaCatalogEntry &schema,
	                                                           const std::string &name);

	std::mutex function_lock;
	std::map<std::string, duckdb::unique_ptr<duckdb::TableFunctionCatalogEntry>> function_entries;
};

} // namespace differential
