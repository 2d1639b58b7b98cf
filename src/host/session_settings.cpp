// The differential settings of a session as the layers above read them: the repository, and the remote cache.
#include "host/session_settings.hpp"

#include "common/errors.hpp"
#include "duckdb/common/string_util.hpp"

#include <cstdlib>

namespace differential {

using namespace duckdb;

std::string RepositorySetting(ClientContext &context) {
	Value value;
	if (!context.TryGetCurrentSetting("differential_repository", value) || value.IsNull() || value.ToString().empty()) {
		Fail(ErrorCode::REPOSITORY_NOT_SET,
		     "No repository is set. Run SET differential_repository = '/absolute/path' first (the directory is "
		     "created if needed).");
	}
	return value.ToString();
}

uint64_t ParseRemoteCacheSize(const std::string &text) {
	if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos && text.size() < 20) {
		return std::stoull(text);
	}
	idx_t bytes = 0;
	auto error = text.empty() ? std::string("it is empty") : StringUtil::TryParseFormattedBytes(text, bytes);
	if (!error.empty()) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "differential_remote_cache_size must be a number of bytes or a size such as '1GB' or '512MiB' (0 turns "
		     "the disk cache off), got '" +
		         text + "': " + error + ".");
	}
	return bytes;
}

//! Where the disk cache lives: inside the repository when one is set (shared by the processes that use
//! it), else under the user's cache directory.
static std::string CacheDirectory(ClientContext &context) {
	Value repository;
	if (context.TryGetCurrentSetting("differential_repository", repository) && !repository.IsNull() &&
	    !repository.ToString().empty()) {
		return repository.ToString() + "/remote-cache";
	}
	auto xdg = std::getenv("XDG_CACHE_HOME");
	if (xdg && *xdg == '/') {
		return std::string(xdg) + "/differential/remote-cache";
	}
	auto home = std::getenv("HOME");
	if (home && *home == '/') {
		return std::string(home) + "/.cache/differential/remote-cache";
	}
	Fail(ErrorCode::REMOTE_CACHE_UNAVAILABLE,
	     "differential_remote_cache_size is set, but there is no directory for the cache: set "
	     "differential_repository (the cache goes to its remote-cache/ directory), or HOME.");
}

std::shared_ptr<ContentCache> RemoteCacheFor(ClientContext &context) {
	Value setting;
	uint64_t bytes = 0;
	if (context.TryGetCurrentSetting("differential_remote_cache_size", setting) && !setting.IsNull()) {
		bytes = ParseRemoteCacheSize(setting.ToString());
	}
	auto disk = bytes ? DiskContentCache::Open(CacheDirectory(context), bytes) : nullptr;
	return std::make_shared<RemoteCache>(MemoryContentCache::Process(), std::move(disk));
}

} // namespace differential
