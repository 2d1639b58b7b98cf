// Finds the differential catalog behind an attached database name, for functions that act on a
// live attachment (a snapshot needs the attachment's own checkpoint).
#pragma once

#include "catalog/differential_catalog.hpp"

#include <optional>

namespace differential {

//! The attached differential database `name`; refuses names that are not attached or not ours.
DifferentialCatalog &AttachedDifferentialCatalog(duckdb::ClientContext &context, const std::string &name);
//! The name under which this session sees `branch` of `database` in `repository` attached as a branch (not a
//! snapshot); refuses when it is not attached. `use` completes "attach it first to ...".
std::string AttachedBranchName(duckdb::ClientContext &context, const Repository &repository,
                               const std::string &database, const std::string &branch, const std::string &use);
//! The repository named by SET differential_repository.
std::shared_ptr<Repository> CurrentRepository(duckdb::ClientContext &context);
//! `snapshot` when given, else the newest snapshot of the database's main branch; refuses a
//! missing database, or a database without snapshots (`purpose` completes "no snapshot on main to ...").
int64_t SnapshotOrLatest(MetadataStore &metadata, const std::string &database, std::optional<int64_t> snapshot,
                         const std::string &purpose);

} // namespace differential
