// Verified content by SHA-256 (chunks, export index pages, descriptors) that remote reads look in before
// they fetch. Storage implements it (remote_cache.hpp); remote/ uses it while it resolves an export.
#pragma once

#include "common/hash.hpp"

#include <string>

namespace differential {

class ContentCache {
public:
	virtual ~ContentCache() = default;
	//! True with the bytes when held. What comes back hashes to `hash`: implementations keep only verified
	//! bytes, and check again what they read back from disk.
	virtual bool Lookup(const Hash256 &hash, std::string &out) = 0;
	//! Whether Lookup would likely find it (without copying or checking the bytes): read-ahead skips those.
	virtual bool Contains(const Hash256 &hash) = 0;
	//! Offers bytes the caller has verified against `hash`; the cache may keep or drop them. Never throws.
	virtual void Insert(const Hash256 &hash, const std::string &bytes) = 0;
};

} // namespace differential
