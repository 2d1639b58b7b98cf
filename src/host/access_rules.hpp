// DuckDB's own security settings (enable_external_access, allowed_directories, allowed_paths) applied to
// what differential opens outside DuckDB's file systems: repository directories and object stores.
#pragma once

#include "duckdb/main/client_context.hpp"

#include <string>

namespace differential {

//! Refuses (external_access_denied) a repository directory this session may not reach, before anything
//! in it is opened or created. With external access on, everything is reachable, as for DuckDB's files.
void RequireRepositoryAccess(duckdb::ClientContext &context, const std::string &root);
//! The same for an object store URL (`file:///dir/` or `s3://bucket/prefix/`), checked as DuckDB checks a
//! path of its own file systems.
void RequireStoreAccess(duckdb::ClientContext &context, const std::string &url);

//! DuckDB checks the diff:// path of the database file it opens against the same settings, which know nothing
//! of repositories: once an ATTACH passed the repository's check, its file (and WAL) is allowed by name.
void AllowDatabaseFile(duckdb::ClientContext &context, const std::string &diff_path);

} // namespace differential
