// How SQL reaches object stores: the store for a URL, with credentials resolved from DuckDB's `TYPE s3` secrets
// by scope (whichever extension registered the type: host/s3_secret_type.hpp) or from the AWS chain.
#pragma once

#include "duckdb/main/client_context.hpp"
#include "storage/object_store.hpp"

#include <functional>
#include <memory>
#include <string>

namespace differential {

//! The store `url` (`s3://bucket/prefix/` or `file:///dir/`) names, with the credentials of the best
//! matching `TYPE s3` secret (longest scope) or, without one, the AWS default credential chain. Stores
//! are shared in the process by URL and credentials. Throws invalid_data_path for a malformed URL.
std::shared_ptr<ObjectStore> OpenObjectStore(duckdb::ClientContext &context, const std::string &url);

//! Checks access and resolves the credentials now, as OpenObjectStore does, and opens the store when called:
//! an S3 store's first opening in a process sets up the CRT and a TLS context (tens of milliseconds), which
//! only some uses need. The credentials stay in the function's memory until it is destroyed.
std::function<std::shared_ptr<ObjectStore>()> ObjectStoreOpener(duckdb::ClientContext &context, const std::string &url);

} // namespace differential
