// The differential settings of a session as the layers above read them: the repository, and the remote cache.
#pragma once

#include "duckdb/main/client_context.hpp"
#include "storage/remote_cache.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace differential {

//! Reads SET differential_repository, refusing (repository_not_set) when it is unset.
std::string RepositorySetting(duckdb::ClientContext &context);

//! `differential_remote_cache_size`: bytes as a plain number or with a unit ('1GB', '512MiB'); 0 is off.
//! Throws invalid_argument for anything else.
uint64_t ParseRemoteCacheSize(const std::string &text);

//! The chunk cache for a remote read: the process's memory cache, over a disk cache when
//! differential_remote_cache_size asks for one.
std::shared_ptr<ContentCache> RemoteCacheFor(duckdb::ClientContext &context);

} // namespace differential
