// Lookups with an AT clause are answered from the snapshot's hidden attachment; lookups of a
// registered catalog function are answered with a per-catalog function entry.
#include "catalog/differential_catalog.hpp"

#include "catalog/snapshot_attachments.hpp"
#include "common/duckdb_errors.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/database_manager.hpp"
#include "duckdb/parser/parsed_data/create_table_function_info.hpp"
#include "storage/diff_path.hpp"

namespace differential {

using namespace duckdb;

static std::mutex registered_lock;
static std::map<std::string, TableFunction> &RegisteredFunctions() {
	static auto *functions = new std::map<std::string, TableFunction>();
	return *functions;
}

void RegisterCatalogFunction(const std::string &name, TableFunction function) {
	std::lock_guard<std::mutex> guard(registered_lock);
	RegisteredFunctions().emplace(name, std::move(function));
}

bool IsCatalogFunction(const std::string &name) {
	std::lock_guard<std::mutex> guard(registered_lock);
	return RegisteredFunctions().count(StringUtil::Lower(name)) > 0;
}

DifferentialCatalog::DifferentialCatalog(AttachedDatabase &db, std::shared_ptr<Repository> repository_p,
                                         std::string database, std::string branch, int64_t snapshot_id_p)
    : DuckCatalog(db), repository(std::move(repository_p)), database_name(std::move(database)),
      branch_name(std::move(branch)), snapshot_id(snapshot_id_p) {
}

std::string DifferentialCatalog::OwnerKey() const {
	FileAddress address;
	address.repository = repository->root;
	address.database = database_name;
	address.branch = branch_name;
	address.snapshot_id = snapshot_id;
	return address.OwnerKey();
}

void DifferentialCatalog::FinalizeLoad(optional_ptr<ClientContext> context) {
	DuckCatalog::FinalizeLoad(context);
	reserved_lock.reset();
	Translated([&]() {
		auto &metadata = *repository->metadata;
		if (adopt_data_path) {
			metadata.remote.SetDataPath(database_name, *adopt_data_path);
		}
		if (adopt_shipping) {
			metadata.shipping.SetSettings(database_name, adopt_shipping->mode, adopt_shipping->interval_s,
			                              adopt_shipping->writer);
		}
		if (adopt_shared) {
			metadata.shared.SetSettings(database_name, *adopt_shared);
		}
	});
	adopt_data_path.reset();
	adopt_shipping.reset();
	adopt_shared.reset();
}

void DifferentialCatalog::OnDetach(ClientContext &context) {
	DuckCatalog::OnDetach(context);
	if (IsSnapshotAttachmentName(GetAttached().GetName().GetIdentifierName())) {
		return;
	}
	// This attachment is already gone from the list; hidden snapshots stay while another one of
	// the same database (a branch, or a user's SNAPSHOT attachment) may still time travel.
	for (auto &attached : DatabaseManager::Get(context).GetDatabases()) {
		auto other = dynamic_cast<DifferentialCatalog *>(&attached->GetCatalog());
		if (other && other != this && other->repository->root == repository->root &&
		    other->database_name == database_name &&
		    !IsSnapshotAttachmentName(attached->GetName().GetIdentifierName())) {
			return;
		}
	}
	ReleaseSnapshotAttachments(context, repository->root, database_name);
}

CatalogEntryLookup DifferentialCatalog::LookupInCatalog(Catalog &catalog, CatalogTransaction transaction,
                                                        const EntryLookupInfo &lookup_info) {
	auto &path = lookup_info.GetQualifiedName().Path();
	vector<Identifier> schema_path(path.begin(), path.end() - 1);
	EntryLookupInfo plain(lookup_info.GetCatalogType(), lookup_info.GetQualifiedName(), nullptr,
	                      lookup_info.GetErrorContext());
	auto schema = catalog.LookupSchema(transaction, EntryLookupInfo::SchemaLookup(plain, std::move(schema_path)),
	                                   OnEntryNotFound::RETURN_NULL);
	if (!schema) {
		return {nullptr, nullptr, ErrorData()};
	}
	auto entry = schema->LookupEntry(transaction, plain);
	if (!entry && lookup_info.GetCatalogType() == CatalogType::TABLE_FUNCTION_ENTRY) {
		entry = CatalogFunction(transaction, *schema, lookup_info.GetEntryName());
	}
	return {schema, entry, ErrorData()};
}

CatalogEntryLookup DifferentialCatalog::TryLookupEntryInternal(CatalogTransaction transaction,
                                                               const EntryLookupInfo &lookup_info) {
	auto at = lookup_info.GetAtClause();
	if (!at) {
		return LookupInCatalog(*this, transaction, lookup_info);
	}
	return Translated([&]() {
		auto &context = transaction.GetContext();
		auto id = ResolveAtClause(*repository->metadata, database_name, *at);
		auto &snapshot = SnapshotCatalog(context, *repository, database_name, id);
		return LookupInCatalog(snapshot, CatalogTransaction(snapshot, context), lookup_info);
	});
}

optional_ptr<CatalogEntry> DifferentialCatalog::CatalogFunction(CatalogTransaction transaction,
                                                                SchemaCatalogEntry &schema, const std::string &name) {
	TableFunction function;
	{
		std::lock_guard<std::mutex> guard(registered_lock);
		auto it = RegisteredFunctions().find(StringUtil::Lower(name));
		if (it == RegisteredFunctions().end()) {
			return nullptr;
		}
		function = it->second;
	}
	std::lock_guard<std::mutex> guard(function_lock);
	auto key = StringUtil::Lower(name);
	auto existing = function_entries.find(key);
	if (existing != function_entries.end()) {
		return existing->second.get();
	}
	auto info = make_shared_ptr<CatalogFunctionInfo>();
	info->repository = repository->root;
	info->database = database_name;
	info->branch = branch_name;
	function.function_info = info;
	CreateTableFunctionInfo create(function);
	create.internal = true;
	create.temporary = true;
	auto entry = make_uniq<TableFunctionCatalogEntry>(*this, schema, create);
	auto result = entry.get();
	function_entries[key] = std::move(entry);
	return result;
}

} // namespace differential
