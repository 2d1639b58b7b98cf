// Access checks made where differential opens a repository or a store: DBConfig::CanAccessFile, the
// rule DuckDB's OpenerFileSystem applies to its own files, so a locked-down session reaches no more
// through differential than through DuckDB.
#include "host/access_rules.hpp"

#include "common/errors.hpp"
#include "duckdb/main/config.hpp"
#include "export/data_path.hpp"

namespace differential {

using namespace duckdb;

static std::string AllowedList(DBConfig &config) {
	std::string list;
	for (auto &directory : config.GetAllowedDirectories()) {
		list += (list.empty() ? "" : ", ") + directory;
	}
	return list.empty() ? "none" : list;
}

static void Require(ClientContext &context, const std::string &what, const std::string &path, FileType type) {
	auto &config = DBConfig::GetConfig(context);
	if (config.CanAccessFile(path, type)) {
		return;
	}
	Fail(ErrorCode::EXTERNAL_ACCESS_DENIED,
	     "The " + what + " " + path +
	         " is outside what this DuckDB session may access (enable_external_access is false, and it is not under "
	         "allowed_directories: " +
	         AllowedList(config) +
	         "). Nothing was opened or created. Use a location under an allowed directory, or allow it with SET "
	         "allowed_directories before external access is turned off.");
}

void RequireRepositoryAccess(ClientContext &context, const std::string &root) {
	Require(context, "repository", root, FileType::FILE_TYPE_DIR);
}

void RequireStoreAccess(ClientContext &context, const std::string &url) {
	auto parsed = ParseDataPath(url);
	if (parsed.kind == ObjectStoreUrl::Kind::FILE) {
		Require(context, "object store directory", parsed.path, FileType::FILE_TYPE_DIR);
		return;
	}
	Require(context, "object store", FormatObjectStoreUrl(parsed), FileType::FILE_TYPE_DIR);
}

void AllowDatabaseFile(ClientContext &context, const std::string &diff_path) {
	auto &config = DBConfig::GetConfig(context);
	if (!config.CanAccessFile(diff_path, FileType::FILE_TYPE_REGULAR)) {
		config.AddAllowedDatabasePath(diff_path);
	}
}

} // namespace differential
