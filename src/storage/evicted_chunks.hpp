// Chunks whose local payload was evicted after an S3 export: their `chunks` row stays, with segment 0,
// and storage reads them through a source the composition root provides (repository/evicted_chunk_reader).
#pragma once

#include "common/hash.hpp"

#include <cstdint>

namespace differential {

//! Segment ids start at 1, so segment 0 in a chunk location means "evicted: not stored locally".
constexpr uint64_t EVICTED_SEGMENT = 0;

class EvictedChunkSource {
public:
	virtual ~EvictedChunkSource() = default;
	//! Fills `out` with the `length` bytes of the chunk, verified against its SHA-256 (corrupt_chunk when they
	//! do not match), or throws an error that says what is needed to reach the store that holds it.
	virtual void Read(const Hash256 &hash, uint32_t length, uint8_t *out) = 0;
	//! Fills `out` only when the bytes are at hand without a request (a cache); false otherwise.
	virtual bool ReadCached(const Hash256 &hash, uint32_t length, uint8_t *out) = 0;
};

} // namespace differential
