// Finds the differential catalog behind an attached database name, for functions that act on a
// live attachment (a snapshot needs the attachment's own checkpoint).
#pragma once

#include "catalog/differential_catalog.hpp"

namespace differential {

//! The attached differential database `name`; refuses names that are not attached or not ours.
DifferentialCatalog &AttachedDifferentialCatalog(duckdb::ClientContext &context, const std::string &name);
//! The repository named by SET differential_repository.
std::shared_ptr<Repository> CurrentRepository(duckdb::ClientContext &context);

} // namespace differential
