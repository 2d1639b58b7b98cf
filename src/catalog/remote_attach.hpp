// ATTACH 'differential:<data path>heads/<database>/<branch>' (or `.../descriptors/<sha256>`): a read-only
// attachment of one exported snapshot, read from the object store without any repository.
#pragma once

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/parser/parsed_data/attach_info.hpp"
#include "remote/export_reader.hpp"

#include <cstdint>
#include <string>

namespace differential {

//! Whether an ATTACH path names a remote locator (`<scheme>://...`) rather than a local database name.
bool IsRemoteLocatorPath(const std::string &path);

//! Resolves the locator (head → descriptor → index pages), registers the image under a diff:// path
//! (written to `info.path`), forces the attachment read-only and returns its RemoteCatalog.
duckdb::unique_ptr<duckdb::Catalog> AttachRemote(duckdb::ClientContext &context, duckdb::AttachedDatabase &db,
                                                 duckdb::AttachInfo &info, duckdb::AttachOptions &options);

//! An export resolved from a locator, with the store it lives in (opened with the session's credentials).
struct OpenedExport {
	std::shared_ptr<ObjectStore> store;
	RemoteLocator locator;
	ResolvedExport resolved;
};

//! Checks the locator (invalid_locator; nothing is fetched for a refused one), then resolves it as a remote
//! ATTACH does (ReadExport's refusals).
OpenedExport OpenExport(duckdb::ClientContext &context, const std::string &path);

//! `differential_remote_cache_size`: bytes as a plain number or with a unit ('1GB', '512MiB'); 0 is off.
//! Throws invalid_argument for anything else.
uint64_t ParseRemoteCacheSize(const std::string &text);

} // namespace differential
