// The `differential` storage extension: ATTACH 'differential:<name>' resolves the repository,
// database and branch, points DuckDB's native storage at a diff:// path and returns our catalog.
#pragma once

#include "duckdb/storage/storage_extension.hpp"

namespace differential {

duckdb::shared_ptr<duckdb::StorageExtension> CreateDifferentialStorageExtension();

} // namespace differential
