// Time travel: resolves AT (VERSION | TIMESTAMP) to a snapshot and opens it as a hidden,
// read-only attachment that later lookups of the same snapshot reuse.
#pragma once

#include "duckdb/main/client_context.hpp"
#include "duckdb/planner/tableref/bound_at_clause.hpp"
#include "repository/repository.hpp"

namespace differential {

int64_t ResolveAtClause(MetadataStore &metadata, const std::string &database, const duckdb::BoundAtClause &at);
//! The catalog of snapshot `snapshot_id` of `database`, attached hidden and read-only on first use.
duckdb::Catalog &SnapshotCatalog(duckdb::ClientContext &context, const Repository &repository,
                                 const std::string &database, int64_t snapshot_id);
//! True for the names of the hidden attachments made here.
bool IsSnapshotAttachmentName(const std::string &name);
//! Detaches this instance's hidden snapshot attachments of `database`.
void ReleaseSnapshotAttachments(duckdb::ClientContext &context, const std::string &repository,
                                const std::string &database);

} // namespace differential
