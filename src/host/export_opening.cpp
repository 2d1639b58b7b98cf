// Opening an export from SQL: the locator checked, the store opened with the session's credentials, the export
// resolved; remote ATTACH and shared writers use it alike.
#include "host/export_opening.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "host/object_store_access.hpp"
#include "host/session_settings.hpp"

namespace differential {

using namespace duckdb;

RemoteLocator ParseLocator(const std::string &path) {
	RemoteLocator locator;
	std::string why;
	auto slash = path.rfind('/');
	auto parent = path.rfind('/', slash == std::string::npos || slash == 0 ? 0 : slash - 1);
	if (slash != std::string::npos && parent != std::string::npos &&
	    path.compare(parent + 1, slash - parent - 1, "descriptors") == 0 && !ParseRemoteLocator(path, locator, why)) {
		Fail(ErrorCode::INVALID_LOCATOR,
		     "'" + path.substr(slash + 1) + "' in " + path +
		         " is not a descriptor's SHA-256 (64 hexadecimal digits). Copy the locator as the export printed it.");
	}
	if (!ParseRemoteLocator(path, locator, why)) {
		Fail(ErrorCode::INVALID_LOCATOR, "Cannot attach '" + path + "': " + why + ".");
	}
	if (locator.kind == RemoteLocator::Kind::HEAD) {
		ValidateName("database", locator.database);
		ValidateName("branch", locator.branch);
	}
	return locator;
}

OpenedExport OpenExport(ClientContext &context, const std::string &path) {
	OpenedExport opened;
	opened.locator = ParseLocator(path);
	DuckDBLogScope log(context);
	opened.store = OpenObjectStore(context, opened.locator.store_url);
	opened.resolved = ReadExport(*opened.store, opened.locator, *RemoteCacheFor(context));
	return opened;
}

} // namespace differential
