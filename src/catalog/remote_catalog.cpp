// Remote attachments are read-only images of one exported snapshot: the refusals live here, so that a
// user sees why (and what to do instead) rather than a generic read-only error.
#include "catalog/remote_catalog.hpp"

#include "catalog/differential_catalog.hpp"
#include "common/duckdb_errors.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/main/attached_database.hpp"

namespace differential {

using namespace duckdb;

RemoteCatalog::RemoteCatalog(AttachedDatabase &db, std::shared_ptr<RemoteImageFile> image_p, std::string locator_p)
    : DuckCatalog(db), locator(std::move(locator_p)), image(std::move(image_p)) {
}

void RemoteCatalog::RefuseWrite() const {
	Translated([&]() {
		Fail(ErrorCode::READ_ONLY, "The attached database " + GetAttached().GetName().GetIdentifierName() +
		                               " is a read-only remote " + "attachment of " + locator +
		                               ". Write to the database where it is exported from.");
	});
	throw InternalException("unreachable");
}

PhysicalOperator &RemoteCatalog::PlanCreateTableAs(ClientContext &, PhysicalPlanGenerator &, LogicalCreateTable &,
                                                   PhysicalOperator &) {
	RefuseWrite();
}
PhysicalOperator &RemoteCatalog::PlanInsert(ClientContext &, PhysicalPlanGenerator &, LogicalInsert &,
                                            optional_ptr<PhysicalOperator>) {
	RefuseWrite();
}
PhysicalOperator &RemoteCatalog::PlanDelete(ClientContext &, PhysicalPlanGenerator &, LogicalDelete &,
                                            PhysicalOperator &) {
	RefuseWrite();
}
PhysicalOperator &RemoteCatalog::PlanUpdate(ClientContext &, PhysicalPlanGenerator &, LogicalUpdate &,
                                            PhysicalOperator &) {
	RefuseWrite();
}
PhysicalOperator &RemoteCatalog::PlanMergeInto(ClientContext &, PhysicalPlanGenerator &, LogicalMergeInto &,
                                               PhysicalOperator &) {
	RefuseWrite();
}
unique_ptr<LogicalOperator> RemoteCatalog::BindCreateIndex(Binder &, CreateStatement &, TableCatalogEntry &,
                                                           unique_ptr<LogicalOperator>) {
	RefuseWrite();
}
ErrorData RemoteCatalog::SupportsCreateSchema(CreateSchemaInfo &) {
	RefuseWrite();
}

CatalogEntryLookup RemoteCatalog::TryLookupEntryInternal(CatalogTransaction transaction,
                                                         const EntryLookupInfo &lookup_info) {
	auto name = lookup_info.GetEntryName();
	auto alias = GetAttached().GetName().GetIdentifierName();
	if (lookup_info.GetAtClause()) {
		return Translated([&]() -> CatalogEntryLookup {
			Fail(ErrorCode::NOT_SUPPORTED,
			     "Time travel (AT) is not available on " + alias + ", a remote attachment of " + locator +
			         ": it holds one exported snapshot and no history. Attach the descriptor of the snapshot you "
			         "want (<data path>descriptors/<sha256>) instead.");
		});
	}
	// The lookup DuckDB's catalog makes without an AT clause: the schema path, then the entry in it.
	auto &path = lookup_info.GetQualifiedName().Path();
	vector<Identifier> schema_path(path.begin(), path.end() - 1);
	auto schema = LookupSchema(transaction, EntryLookupInfo::SchemaLookup(lookup_info, std::move(schema_path)),
	                           OnEntryNotFound::RETURN_NULL);
	if (!schema) {
		return {nullptr, nullptr, ErrorData()};
	}
	auto entry = schema->LookupEntry(transaction, lookup_info);
	if (!entry && lookup_info.GetCatalogType() == CatalogType::TABLE_FUNCTION_ENTRY && IsCatalogFunction(name)) {
		return Translated([&]() -> CatalogEntryLookup {
			Fail(ErrorCode::NOT_SUPPORTED,
			     alias + "." + name + "() is not available on a remote attachment (" + locator +
			         "): it has no repository and no history. Call it on the database in the writer's repository.");
		});
	}
	return {schema, entry, ErrorData()};
}

} // namespace differential
