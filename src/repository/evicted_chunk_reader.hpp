// Reads chunks evicted after an S3 export back from the packs of the store that holds them: the stores
// come from a process registry that ATTACH and exports fill (they have the session's credentials).
#pragma once

#include "metadata/metadata_store.hpp"
#include "storage/content_cache.hpp"
#include "storage/evicted_chunks.hpp"
#include "storage/object_store.hpp"

#include <functional>
#include <memory>
#include <string>

namespace differential {

//! Makes `store` the one this process reads evicted chunks of `store_url` from; pack `p` is the object
//! `pack_prefix + hex(p)`. A later registration of the same URL replaces it (fresher credentials).
void RegisterEvictionStore(const std::string &store_url, std::shared_ptr<ObjectStore> store,
                           const std::string &pack_prefix);
//! The same with a store opened at the first read of an evicted chunk (an opening that fails is tried again by
//! the next read): ATTACH registers every exported database's store, and most attachments never read one.
void RegisterEvictionStore(const std::string &store_url, std::function<std::shared_ptr<ObjectStore>()> opener,
                           const std::string &pack_prefix);

//! Microseconds this process has spent fetching evicted chunks from their stores (verified), in total.
int64_t EvictedFetchMicros();

class EvictedChunkReader : public EvictedChunkSource {
public:
	EvictedChunkReader(std::shared_ptr<MetadataStore> metadata, std::shared_ptr<ContentCache> cache);
	void Read(const Hash256 &hash, uint32_t length, uint8_t *out) override;
	bool ReadCached(const Hash256 &hash, uint32_t length, uint8_t *out) override;

private:
	std::shared_ptr<MetadataStore> metadata;
	std::shared_ptr<ContentCache> cache;
};

} // namespace differential
