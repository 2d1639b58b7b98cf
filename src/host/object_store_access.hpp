// How SQL reaches object stores: the `TYPE s3` secret (registered when no other extension has) and the
// store for a URL, with credentials resolved from DuckDB's secrets by scope or from the AWS chain.
#pragma once

#include "duckdb/main/client_context.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "storage/object_store.hpp"

#include <memory>
#include <string>

namespace differential {

//! Registers the `s3` secret type with the providers `config` (the default) and `credential_chain`, and
//! httpfs's parameter names, unless another extension (httpfs) has registered the type or is installed
//! to be autoloaded for it. docs/S3.md §4 says what that means for load order.
void RegisterS3SecretType(duckdb::ExtensionLoader &loader);

//! The store `url` (`s3://bucket/prefix/` or `file:///dir/`) names, with the credentials of the best
//! matching `TYPE s3` secret (longest scope) or, without one, the AWS default credential chain. Stores
//! are shared in the process by URL and credentials. Throws invalid_data_path for a malformed URL.
std::shared_ptr<ObjectStore> OpenObjectStore(duckdb::ClientContext &context, const std::string &url);

} // namespace differential
