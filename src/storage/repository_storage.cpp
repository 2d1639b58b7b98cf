// Chunk deduplication within a process; the metadata's chunk table dedups across processes.
#include "storage/repository_storage.hpp"

#include "common/errors.hpp"

namespace differential {

RepositoryStorage::RepositoryStorage(std::string root_p, std::shared_ptr<FileCatalog> catalog_p,
                                     std::shared_ptr<EvictedChunkSource> evicted_p)
    : root(std::move(root_p)), catalog(std::move(catalog_p)),
      segments(root + "/segments", [this]() { return catalog->AllocateSegment(); }), evicted(std::move(evicted_p)) {
}

void RepositoryStorage::ReadChunk(const Hash256 &hash, const ChunkLocation &location, uint8_t *out) {
	if (location.segment_id != EVICTED_SEGMENT) {
		segments.Read(location, out);
		return;
	}
	if (!evicted) {
		Fail(ErrorCode::CHUNK_EVICTED, "Chunk " + HashToHex(hash) +
		                                   " was evicted after an export and this process cannot fetch it back. "
		                                   "Read it through a session that loaded the differential extension.");
	}
	if (evicted->ReadCached(hash, location.length, out)) {
		return;
	}
	// A file opened while the chunk was evicted keeps that location: it may be local again since
	// (differential_fetch_evicted, a shared writer's background fetch), and then the store is not needed.
	std::vector<ChunkLocation> now;
	catalog->LookupChunks({hash}, now);
	if (!now.empty() && now[0].segment_id != EVICTED_SEGMENT) {
		segments.Read(now[0], out);
		return;
	}
	evicted->Read(hash, location.length, out);
}

ChunkLocation RepositoryStorage::StoreChunk(const void *data, uint32_t size, const Hash256 &hash) {
	// Under one lock with SealSegment, so a location handed out always lies in a segment that is
	// current or holds this caller's unpublished record, both of which cleanup spares.
	std::lock_guard<std::mutex> guard(known_lock);
	auto it = known_chunks.find(hash);
	if (it != known_chunks.end()) {
		return it->second;
	}
	auto loc = segments.Append(data, size, hash, "segment.record_write", RecordPlacement::PAGE_ALIGNED);
	known_chunks.emplace(hash, loc);
	return loc;
}

void RepositoryStorage::SealSegment() {
	std::lock_guard<std::mutex> guard(known_lock);
	segments.Seal();
	known_chunks.clear();
}

} // namespace differential
