// The catalog of a remote (S3 export) attachment: DuckDB's own catalog over a read-only remote image,
// which refuses writes, time travel and catalog-scoped functions with differential's errors.
#pragma once

#include "duckdb/catalog/duck_catalog.hpp"
#include "storage/remote_file.hpp"

namespace differential {

class RemoteCatalog : public duckdb::DuckCatalog {
public:
	RemoteCatalog(duckdb::AttachedDatabase &db, std::shared_ptr<RemoteImageFile> image, std::string locator);

	//! True so that an AT clause reaches this catalog and is refused with a differential error.
	bool SupportsTimeTravel() const override {
		return true;
	}

	duckdb::PhysicalOperator &PlanCreateTableAs(duckdb::ClientContext &context, duckdb::PhysicalPlanGenerator &planner,
	                                            duckdb::LogicalCreateTable &op,
	                                            duckdb::PhysicalOperator &plan) override;
	duckdb::PhysicalOperator &PlanInsert(duckdb::ClientContext &context, duckdb::PhysicalPlanGenerator &planner,
	                                     duckdb::LogicalInsert &op,
	                                     duckdb::optional_ptr<duckdb::PhysicalOperator> plan) override;
	duckdb::PhysicalOperator &PlanDelete(duckdb::ClientContext &context, duckdb::PhysicalPlanGenerator &planner,
	                                     duckdb::LogicalDelete &op, duckdb::PhysicalOperator &plan) override;
	duckdb::PhysicalOperator &PlanUpdate(duckdb::ClientContext &context, duckdb::PhysicalPlanGenerator &planner,
	                                     duckdb::LogicalUpdate &op, duckdb::PhysicalOperator &plan) override;
	duckdb::PhysicalOperator &PlanMergeInto(duckdb::ClientContext &context, duckdb::PhysicalPlanGenerator &planner,
	                                        duckdb::LogicalMergeInto &op, duckdb::PhysicalOperator &plan) override;
	duckdb::unique_ptr<duckdb::LogicalOperator>
	BindCreateIndex(duckdb::Binder &binder, duckdb::CreateStatement &stmt, duckdb::TableCatalogEntry &table,
	                duckdb::unique_ptr<duckdb::LogicalOperator> plan) override;
	duckdb::ErrorData SupportsCreateSchema(duckdb::CreateSchemaInfo &info) override;

	//! What was attached, for messages: `s3://bucket/prefix/heads/orders/main`.
	const std::string locator;

private:
	duckdb::CatalogEntryLookup TryLookupEntryInternal(duckdb::CatalogTransaction transaction,
	                                                  const duckdb::EntryLookupInfo &lookup_info) override;
	[[noreturn]] void RefuseWrite() const;

	//! Keeps the image's diff:// path resolvable for as long as the attachment lives.
	std::shared_ptr<RemoteImageFile> image;
};

} // namespace differential
