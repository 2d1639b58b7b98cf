// The storage side of one repository in this process: its catalog, its segments and the chunks
// this process already knows, so a chunk written twice is stored once.
#pragma once

#include "storage/evicted_chunks.hpp"
#include "storage/file_catalog.hpp"
#include "storage/segment_store.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace differential {

class RepositoryStorage {
public:
	RepositoryStorage(std::string root, std::shared_ptr<FileCatalog> catalog,
	                  std::shared_ptr<EvictedChunkSource> evicted = nullptr);

	const std::string root;
	const std::shared_ptr<FileCatalog> catalog;
	SegmentStore segments;
	//! Reads chunks evicted after an export (null: none can be read, e.g. in unit tests).
	const std::shared_ptr<EvictedChunkSource> evicted;

	//! Reads a chunk's stored bytes from its segment, or from the store it was exported to when evicted.
	void ReadChunk(const Hash256 &hash, const ChunkLocation &location, uint8_t *out);

	//! Stores a chunk unless an identical one is already known; returns where it lives.
	ChunkLocation StoreChunk(const void *data, uint32_t size, const Hash256 &hash);
	//! Seals the current segment and forgets the chunks known so far, which all lie in sealed
	//! segments from now on and may be moved or removed by cleanup.
	void SealSegment();

private:
	//! Only chunks this process appended: their segments belong to a live process, which cleanup
	//! never compacts or deletes, so these locations stay valid for as long as the process runs.
	std::mutex known_lock;
	std::unordered_map<Hash256, ChunkLocation, Hash256Hasher> known_chunks;
};

} // namespace differential
