// Evicted chunks come back with one ranged GET of their pack, are verified against their SHA-256 before
// anyone sees them, and are kept in the remote caches, so a scan fetches each chunk once.
#include "repository/evicted_chunk_reader.hpp"

#include "common/errors.hpp"
#include "storage/remote_fetch.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>

namespace differential {

namespace {

struct RegisteredStore {
	std::function<std::shared_ptr<ObjectStore>()> opener;
	std::shared_ptr<ObjectStore> store; //! null until the first read that needs it opens it
	std::string pack_prefix;
};

std::mutex registry_lock;
std::map<std::string, RegisteredStore> &Registry() {
	// Never destroyed: stores may still be used by readers while the process exits.
	static auto *registry = new std::map<std::string, RegisteredStore>();
	return *registry;
}

//! The store registered for `store_url`, opened if it was not yet (under the lock: evicted reads are rare, and
//! one opening serves them all). False when none is registered; an opening that fails throws.
bool FindStore(const std::string &store_url, RegisteredStore &out) {
	std::lock_guard<std::mutex> guard(registry_lock);
	auto it = Registry().find(store_url);
	if (it == Registry().end()) {
		return false;
	}
	if (!it->second.store) {
		it->second.store = it->second.opener();
	}
	out = it->second;
	return true;
}

} // namespace

void RegisterEvictionStore(const std::string &store_url, std::function<std::shared_ptr<ObjectStore>()> opener,
                           const std::string &pack_prefix) {
	std::lock_guard<std::mutex> guard(registry_lock);
	Registry()[store_url] = {std::move(opener), nullptr, pack_prefix};
}

void RegisterEvictionStore(const std::string &store_url, std::shared_ptr<ObjectStore> store,
                           const std::string &pack_prefix) {
	RegisterEvictionStore(
	    store_url, [store]() { return store; }, pack_prefix);
}

EvictedChunkReader::EvictedChunkReader(std::shared_ptr<MetadataStore> metadata_p, std::shared_ptr<ContentCache> cache_p)
    : metadata(std::move(metadata_p)), cache(std::move(cache_p)) {
}

static void CopyOut(const std::string &bytes, uint32_t length, uint8_t *out) {
	std::memcpy(out, bytes.data(), std::min<size_t>(bytes.size(), length));
}

//! Time spent fetching evicted chunks back, over the process's life (merges report their share).
static std::atomic<int64_t> fetch_micros {0};

int64_t EvictedFetchMicros() {
	return fetch_micros.load();
}

//! Adds the time from construction to destruction to fetch_micros.
class FetchTimer {
public:
	~FetchTimer() {
		fetch_micros +=
		    std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
	}

private:
	std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
};

bool EvictedChunkReader::ReadCached(const Hash256 &hash, uint32_t length, uint8_t *out) {
	std::string bytes;
	if (cache->Lookup(hash, bytes) && bytes.size() == length) {
		CopyOut(bytes, length, out);
		return true;
	}
	return false;
}

void EvictedChunkReader::Read(const Hash256 &hash, uint32_t length, uint8_t *out) {
	if (ReadCached(hash, length, out)) {
		return;
	}
	FetchTimer timer;
	auto copies = metadata->remote.ChunkCopies(hash);
	std::string stores;
	for (auto &copy : copies) {
		RegisteredStore registered;
		if (!FindStore(copy.store_url, registered)) {
			stores += (stores.empty() ? "" : ", ") + copy.store_url;
			continue;
		}
		auto key = registered.pack_prefix + HashToHex(copy.packed.pack);
		auto result = LoggedGet(*registered.store, key, ByteRange {copy.packed.offset, copy.packed.length});
		if (result.outcome.status != ObjectStatus::OK) {
			FailRemote(result.outcome, *registered.store, "reading evicted chunk " + HashToHex(hash) + " from " + key);
		}
		if (result.data.size() != length || Sha256(result.data.data(), result.data.size()) != hash) {
			Fail(ErrorCode::CORRUPT_CHUNK,
			     "Evicted chunk " + HashToHex(hash) + " (bytes " + std::to_string(copy.packed.offset) + "+" +
			         std::to_string(copy.packed.length) + " of " + key + " at " + registered.store->Describe() +
			         ") does not match its SHA-256. The object in the store is damaged: restore it from a copy; "
			         "nothing was returned.");
		}
		cache->Insert(hash, result.data);
		CopyOut(result.data, length, out);
		return;
	}
	if (copies.empty()) {
		Fail(ErrorCode::MISSING_CHUNK,
		     "Chunk " + HashToHex(hash) +
		         " was evicted, but no store is recorded to hold it. Run differential_verify().");
	}
	Fail(ErrorCode::EVICTED_CHUNK_UNREACHABLE,
	     "Chunk " + HashToHex(hash) + " was evicted after an export to " + stores +
	         ", and this process has not opened that store. Attach the database with its DATA_PATH ('" +
	         copies[0].store_url + "'), with a TYPE s3 secret whose scope covers it, before reading.");
}

} // namespace differential
