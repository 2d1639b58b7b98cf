// Opening an export from SQL: the locator checked, the store opened with the session's credentials, the export
// resolved; remote ATTACH and shared writers use it alike.
#pragma once

#include "duckdb/main/client_context.hpp"
#include "remote/export_reader.hpp"
#include "storage/object_store.hpp"

#include <memory>
#include <string>

namespace differential {

//! An export resolved from a locator, with the store it lives in (opened with the session's credentials).
struct OpenedExport {
	std::shared_ptr<ObjectStore> store;
	RemoteLocator locator;
	ResolvedExport resolved;
};

//! The locator `path` names (`<data path>heads/<database>/<branch>` or `<data path>descriptors/<sha256>`);
//! refuses (invalid_locator) anything else.
RemoteLocator ParseLocator(const std::string &path);

//! Checks the locator (invalid_locator; nothing is fetched for a refused one), then resolves it as a remote
//! ATTACH does (ReadExport's refusals).
OpenedExport OpenExport(duckdb::ClientContext &context, const std::string &path);

} // namespace differential
