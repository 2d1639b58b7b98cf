// Which exported chunks may go: those of the store, minus what databases outside that store reach, since
// their reads (and their exports elsewhere) must never depend on a store they do not use.
#include "repository/eviction.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "storage/index_page.hpp"

#include <unordered_set>

namespace differential {

EvictionCounts EvictExported(Repository &repository, const std::string &database) {
	auto &remote = repository.metadata->remote;
	if (!repository.metadata->history.FindDatabase(database)) {
		Fail(ErrorKind::NOT_FOUND, "database_not_found",
		     "Database " + QuoteName(database) +
		         " does not exist in this repository. List databases with differential_databases().");
	}
	auto data_path = remote.DataPath(database);
	if (!data_path) {
		Fail(ErrorKind::INVALID_INPUT, "no_data_path",
		     "Database " + QuoteName(database) +
		         " has no DATA_PATH, so nothing of it is exported and nothing can be evicted. Give it one with "
		         "ATTACH 'differential:" +
		         database + "' (DATA_PATH 's3://bucket/prefix/').");
	}
	std::unordered_set<Hash256, Hash256Hasher> kept;
	for (auto &pages : remote.RootsOutside(data_path->store_url)) {
		for (auto &page : pages) {
			for (auto &slot : DecodeIndexPage(repository.metadata->files.LoadIndexPage(page))) {
				kept.insert(slot);
			}
		}
	}
	std::vector<Hash256> evictable;
	for (auto &chunk : remote.LocalChunksIn(data_path->store_url)) {
		if (!kept.count(chunk)) {
			evictable.push_back(chunk);
		}
	}
	return remote.EvictChunks(data_path->store_url, evictable);
}

} // namespace differential
