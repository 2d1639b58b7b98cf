// The caches of remote reads, both keyed by SHA-256 and holding only verified bytes: a bounded in-memory
// LRU per process, and an optional on-disk cache shared by every process that uses the same directory.
#pragma once

#include "storage/content_cache.hpp"

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace differential {

class MemoryContentCache : public ContentCache {
public:
	explicit MemoryContentCache(uint64_t bound_bytes);
	//! The one every remote file of the process shares (PROCESS_MEMORY_CACHE_BYTES).
	static std::shared_ptr<MemoryContentCache> Process();
	static constexpr uint64_t PROCESS_MEMORY_CACHE_BYTES = 64ULL << 20;

	bool Lookup(const Hash256 &hash, std::string &out) override;
	bool ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) override;
	bool Contains(const Hash256 &hash) override;
	void Insert(const Hash256 &hash, const std::string &bytes) override;
	uint64_t Size();

private:
	using Entry = std::pair<Hash256, std::string>;
	std::mutex lock;
	const uint64_t bound;
	uint64_t size = 0;
	//! Most recently used first.
	std::list<Entry> order;
	std::unordered_map<Hash256, std::list<Entry>::iterator, Hash256Hasher> entries;
};

//! `<dir>/objects/<2 hex>/<64 hex>`: one file per object, named by its SHA-256: the object's bytes, then its
//! CRC32C and a format tag, checked on every read (a file that does not match is deleted). Whole-object
//! lookups (export metadata, which is parsed) also check the SHA-256; chunk reads, whose blocks DuckDB checks
//! again, rely on the CRC. `<dir>/cache.lock` is locked (flock, and a mutex for the process's threads) by every
//! insertion and holds the bytes accounted to `objects/`; an insertion that would take the total past the bound
//! first evicts the least recently used files (by modification time, which a hit refreshes). The accounted
//! total is never below the real one (it is raised before a file appears and lowered after files go), so the
//! directory never holds more than the bound of the process that last inserted.
class DiskContentCache : public ContentCache {
public:
	//! Creates the directory if needed; throws remote_cache_unavailable when it cannot.
	DiskContentCache(std::string directory, uint64_t bound_bytes);
	~DiskContentCache() override;
	DiskContentCache(const DiskContentCache &) = delete;
	DiskContentCache &operator=(const DiskContentCache &) = delete;
	//! One per directory per process; a later call sets the bound for the process.
	static std::shared_ptr<DiskContentCache> Open(const std::string &directory, uint64_t bound_bytes);

	bool Lookup(const Hash256 &hash, std::string &out) override;
	bool ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) override;
	bool Contains(const Hash256 &hash) override;
	void Insert(const Hash256 &hash, const std::string &bytes) override;
	void SetBound(uint64_t bound_bytes);
	//! The bytes of the files under `objects/`, counted from the directory (tests, diagnostics).
	uint64_t MeasureSize();
	const std::string &Directory() const {
		return directory;
	}

private:
	std::string ObjectPath(const Hash256 &hash) const;
	//! Where ReadFile may put an object of exactly `size` bytes: straight into the caller's memory.
	struct DirectRead {
		uint8_t *out;
		size_t size;
		//! Set when the file held exactly that much and went there (checked or not: on failure `out` is garbage).
		bool used = false;
	};
	//! The file of `hash` into `buffer` (grown, never shrunk), or into `direct` when given and the object's length
	//! is its size; its trailer checked; `payload` is the object's length. A file that fails the check is deleted.
	bool ReadFile(const Hash256 &hash, std::vector<char> &buffer, size_t &payload, DirectRead *direct = nullptr);
	void Discard(const std::string &path);
	uint64_t ReadAccountedLocked();
	void WriteAccountedLocked(uint64_t bytes);
	//! Deletes least recently used files until `needed` more bytes fit; returns the new total.
	uint64_t EvictLocked(uint64_t needed, uint64_t bound);
	bool WriteTemp(const std::string &bytes, std::string &temp_path);

	const std::string directory;
	int lock_fd = -1;
	//! Taken with the flock on lock_fd, which does not exclude this process's own threads.
	std::mutex insert_lock;
	std::mutex bound_lock;
	uint64_t bound;
};

//! Memory first, then disk (when there is one); a disk hit found by Lookup is also kept in memory, one found
//! by ReadRange is not (see there).
class RemoteCache : public ContentCache {
public:
	RemoteCache(std::shared_ptr<MemoryContentCache> memory, std::shared_ptr<DiskContentCache> disk);
	bool Lookup(const Hash256 &hash, std::string &out) override;
	bool ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) override;
	bool Contains(const Hash256 &hash) override;
	void Insert(const Hash256 &hash, const std::string &bytes) override;

private:
	std::shared_ptr<MemoryContentCache> memory;
	std::shared_ptr<DiskContentCache> disk;
};

} // namespace differential
