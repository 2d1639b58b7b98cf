// Chunk deduplication within a process; the metadata's chunk table dedups across processes.
#include "storage/repository_storage.hpp"

namespace differential {

RepositoryStorage::RepositoryStorage(std::string root_p, std::shared_ptr<FileCatalog> catalog_p)
    : root(std::move(root_p)), catalog(std::move(catalog_p)),
      segments(root + "/segments", [this]() { return catalog->AllocateSegment(); }) {
}

ChunkLocation RepositoryStorage::StoreChunk(const void *data, uint32_t size, const Hash256 &hash) {
	{
		std::lock_guard<std::mutex> guard(known_lock);
		auto it = known_chunks.find(hash);
		if (it != known_chunks.end()) {
			return it->second;
		}
	}
	auto loc = segments.Append(data, size, hash);
	RememberChunk(hash, loc);
	return loc;
}

void RepositoryStorage::RememberChunk(const Hash256 &hash, const ChunkLocation &location) {
	std::lock_guard<std::mutex> guard(known_lock);
	known_chunks.emplace(hash, location);
}

} // namespace differential
