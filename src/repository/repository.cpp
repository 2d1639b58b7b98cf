// The composition root: creates a repository's directory layout, wires its metadata stores and its
// storage together, and keeps the process-wide registry of open repositories.
#include "repository/repository.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "repository/evicted_chunk_reader.hpp"
#include "storage/remote_cache.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sys/stat.h>

namespace differential {

std::string NormalizeRepositoryPath(const std::string &path) {
	if (path.empty() || path[0] != '/') {
		Fail(ErrorCode::INVALID_REPOSITORY,
		     "The repository path " + QuoteName(path) +
		         " is not absolute. Set it to an absolute directory, e.g. SET differential_repository = "
		         "'/home/me/differential'.");
	}
	for (unsigned char c : path) {
		if (c < 0x20 || c == 0x7f) {
			Fail(ErrorCode::INVALID_REPOSITORY,
			     "The repository path " + QuoteName(path) + " contains a control character. Use a plain path.");
		}
	}
	std::string out;
	for (size_t i = 0; i < path.size(); i++) {
		if (path[i] == '/' && !out.empty() && out.back() == '/') {
			continue;
		}
		out += path[i];
	}
	while (out.size() > 1 && out.back() == '/') {
		out.pop_back();
	}
	return out;
}

static void MakeDirectories(const std::string &path) {
	for (size_t pos = 1; pos <= path.size(); pos++) {
		if (pos == path.size() || path[pos] == '/') {
			auto prefix = path.substr(0, pos);
			if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
				Fail(ErrorKind::IO, ErrorCode::INVALID_REPOSITORY,
				     "Cannot create the repository directory " + prefix + ": " + std::strerror(errno) +
				         ". Choose a directory you can write to.");
			}
		}
	}
}

bool RepositoryExists(const std::string &root) {
	struct stat info;
	return stat((NormalizeRepositoryPath(root) + "/metadata.sqlite").c_str(), &info) == 0;
}

std::shared_ptr<Repository> OpenRepository(const std::string &root_p) {
	auto requested = NormalizeRepositoryPath(root_p);
	static std::mutex lock;
	// Kept for the life of the process: one metadata connection and one segment writer per repository.
	static auto *open = new std::map<std::string, std::shared_ptr<Repository>>();
	std::lock_guard<std::mutex> guard(lock);
	MakeDirectories(requested + "/segments");
	char resolved[PATH_MAX];
	if (!realpath(requested.c_str(), resolved)) {
		Fail(ErrorKind::IO, ErrorCode::INVALID_REPOSITORY,
		     "Cannot resolve the repository path " + requested + ": " + std::strerror(errno) + ".");
	}
	std::string root = resolved;
	auto it = open->find(root);
	if (it != open->end()) {
		return it->second;
	}
	auto repo = std::make_shared<Repository>();
	repo->root = root;
	repo->metadata = std::make_shared<MetadataStore>(root);
	// Storage sees only the file catalog it declares; the alias keeps the whole metadata alive with it.
	// Evicted chunks share the process's memory cache with remote attachments (both keyed by SHA-256).
	auto evicted = std::make_shared<EvictedChunkReader>(
	    repo->metadata, std::make_shared<RemoteCache>(MemoryContentCache::Process(), nullptr));
	repo->storage = std::make_shared<RepositoryStorage>(
	    root, std::shared_ptr<FileCatalog>(repo->metadata, &repo->metadata->files), std::move(evicted));
	(*open)[root] = repo;
	return repo;
}

} // namespace differential
