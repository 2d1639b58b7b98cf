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

} // namespace differential
