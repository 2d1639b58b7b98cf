// Verified content by SHA-256 (chunks, export index pages, descriptors) that remote reads look in before
// they fetch. Storage implements it (remote_cache.hpp); remote/ uses it while it resolves an export.
#pragma once

#include "common/hash.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace differential {

class ContentCache {
public:
	virtual ~ContentCache() = default;
	//! True with the bytes when held. What comes back hashes to `hash`: implementations keep only verified
	//! bytes, and check again what they read back from disk.
	virtual bool Lookup(const Hash256 &hash, std::string &out) = 0;
	//! Whether Lookup would likely find it (without copying or checking the bytes): a fetch takes none of those along.
	virtual bool Contains(const Hash256 &hash) = 0;
	//! Offers bytes the caller has verified against `hash`; the cache may keep or drop them. Never throws.
	virtual void Insert(const Hash256 &hash, const std::string &bytes) = 0;
	//! True with bytes [skip, skip + take) of the object copied to `out` (zeros past its end) when held. Reads
	//! of a file's chunks come here: the caches override it to copy the range alone, with no allocation.
	virtual bool ReadRange(const Hash256 &hash, uint64_t skip, uint64_t take, uint8_t *out) {
		std::string bytes;
		if (!Lookup(hash, bytes)) {
			return false;
		}
		CopyRange(bytes.data(), bytes.size(), skip, take, out);
		return true;
	}

	//! Bytes [skip, skip + take) of an object of `size` bytes at `data`, zeros where the object ends first.
	static void CopyRange(const char *data, uint64_t size, uint64_t skip, uint64_t take, uint8_t *out) {
		uint64_t stored = size > skip ? std::min<uint64_t>(size - skip, take) : 0;
		if (stored) {
			std::memcpy(out, data + skip, stored);
		}
		std::memset(out + stored, 0, take - stored);
	}
};

} // namespace differential
