// Chunk deduplication within a process; the metadata's chunk table dedups across processes.
#include "storage/repository_storage.hpp"

namespace differential {

RepositoryStorage::RepositoryStorage(std::string root_p, std::shared_ptr<FileCatalog> catalog_p)
    : root(std::move(root_p)), catalog(std::move(catalog_p)),
      segments(root + "/segments", [this]() { return catalog->AllocateSegment(); }) {
}

ChunkLocation RepositoryStorage::StoreChunk(const void *data, uint32_t size, const Hash256 &hash) {
	// Under one lock with SealSegment, so a location handed out always lies in a segment that is
	// current or holds this caller's unpublished record, both of which cleanup spares.
	std::lock_guard<std::mutex> guard(known_lock);
	auto it = known_chunks.find(hash);
	if (it != known_chunks.end()) {
		return it->second;
	}
	auto loc = segments.Append(data, size, hash);
	known_chunks.emplace(hash, loc);
	return loc;
}

void RepositoryStorage::SealSegment() {
	std::lock_guard<std::mutex> guard(known_lock);
	segments.Seal();
	known_chunks.clear();
}

} // namespace differential
