// Which exported chunks may go: those of the store, minus what databases outside that store reach, since
// their reads (and their exports elsewhere) must never depend on a store they do not use.
#include "repository/eviction.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "storage/index_page.hpp"

#include <unordered_set>

namespace differential {

EvictionCounts EvictExported(Repository &repository, const std::string &database) {
	auto &remote = repository.metadata->remote;
	if (!repository.metadata->history.FindDatabase(database)) {
		Fail(ErrorCode::DATABASE_NOT_FOUND,
		     "Database " + QuoteName(database) +
		         " does not exist in this repository. List databases with differential_databases().");
	}
	auto data_path = remote.DataPath(database);
	if (!data_path) {
		Fail(ErrorCode::NO_DATA_PATH,
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

//! Bytes fetched before their segment appends are synced and recorded: bounds what a crash re-fetches.
static constexpr uint64_t FETCH_BATCH_BYTES = 64ULL << 20;

static EvictionCounts StoreFetched(Repository &repository, std::vector<std::pair<Hash256, ChunkLocation>> &batch) {
	repository.storage->segments.Sync();
	CrashPoint("fetch_evicted.before_commit");
	auto counts = repository.metadata->remote.RestoreChunks(batch);
	batch.clear();
	return counts;
}

EvictionCounts FetchEvicted(Repository &repository, const std::string &database, const std::atomic<bool> *stop) {
	auto &remote = repository.metadata->remote;
	std::unordered_set<Hash256, Hash256Hasher> reached;
	for (auto &pages : remote.RootsOf(database)) {
		for (auto &page : pages) {
			for (auto &slot : DecodeIndexPage(repository.metadata->files.LoadIndexPage(page))) {
				reached.insert(slot);
			}
		}
	}
	auto evicted = remote.EvictedAmong(std::vector<Hash256>(reached.begin(), reached.end()));
	if (!evicted.empty() && !repository.storage->evicted) {
		Fail(ErrorCode::INTERNAL, "This repository was opened without a reader of evicted chunks. Please report this.");
	}
	EvictionCounts total;
	std::vector<std::pair<Hash256, ChunkLocation>> batch;
	uint64_t batch_bytes = 0;
	std::vector<uint8_t> bytes;
	for (auto &chunk : evicted) {
		if (stop && stop->load()) {
			break;
		}
		bytes.resize(chunk.second);
		repository.storage->evicted->Read(chunk.first, chunk.second, bytes.data());
		batch.emplace_back(chunk.first, repository.storage->StoreChunk(bytes.data(), chunk.second, chunk.first));
		batch_bytes += chunk.second;
		if (batch_bytes >= FETCH_BATCH_BYTES) {
			auto counts = StoreFetched(repository, batch);
			total.chunks += counts.chunks;
			total.bytes += counts.bytes;
			batch_bytes = 0;
		}
	}
	auto counts = StoreFetched(repository, batch);
	total.chunks += counts.chunks;
	total.bytes += counts.bytes;
	return total;
}

} // namespace differential
