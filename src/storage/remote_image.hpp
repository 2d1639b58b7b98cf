// A database file as an S3 export holds it: for each chunk of the file, which pack holds its bytes and
// where. Declared in storage (which reads remote images) and filled by remote/ (which decodes exports).
#pragma once

#include "common/hash.hpp"

#include <cstdint>
#include <vector>

namespace differential {

//! One chunk of an exported file: its content hash and its bytes' place in a pack. A zero `chunk` hash
//! is a hole (the chunk reads as zeros; nothing is stored for it).
struct PackedChunk {
	Hash256 chunk {};
	Hash256 pack {};
	uint64_t offset = 0;
	uint32_t length = 0;

	bool IsHole() const {
		return IsZeroHash(chunk);
	}
};

//! The whole file: its length and one entry per chunk index (chunk_geometry.hpp), holes included.
struct RemoteImage {
	uint64_t length = 0;
	std::vector<PackedChunk> chunks;
};

} // namespace differential
