// Content identity (SHA-256) and the fast read check (CRC32C) used by every layer.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace differential {

using Hash256 = std::array<uint8_t, 32>;

Hash256 Sha256(const void *data, size_t size);
//! CRC32C (Castagnoli), with the CPU's instruction where it has one (common/crc32c.hpp); `seed` chains calls
//! over split buffers.
uint32_t Crc32c(const void *data, size_t size, uint32_t seed = 0);

std::string HashToHex(const Hash256 &hash);
bool HashFromHex(const std::string &hex, Hash256 &out);
bool IsZeroHash(const Hash256 &hash);
//! Hash lists stored as blobs (index pages, roots): the hashes back to back, 32 bytes each.
std::vector<uint8_t> JoinHashes(const Hash256 *hashes, size_t count);
//! The inverse of JoinHashes; a trailing partial hash is dropped (callers that must refuse it check the size).
std::vector<Hash256> SplitHashes(const std::vector<uint8_t> &blob);

struct Hash256Hasher {
	size_t operator()(const Hash256 &h) const {
		size_t v;
		static_assert(sizeof(v) <= sizeof(Hash256), "hash too small");
		__builtin_memcpy(&v, h.data(), sizeof(v));
		return v;
	}
};

} // namespace differential
