// How a database file is cut into chunks: a 12 KiB first chunk (DuckDB's three 4 KiB headers),
// then 256 KiB chunks, so one chunk holds one block at DuckDB's default block size.
#pragma once

#include <cstdint>

namespace differential {

static constexpr uint64_t FIRST_CHUNK_SIZE = 12288;
static constexpr uint64_t CHUNK_SIZE = 262144;
static constexpr uint64_t SLOTS_PER_INDEX_PAGE = 4096;

inline uint64_t ChunkIndexOf(uint64_t offset) {
	return offset < FIRST_CHUNK_SIZE ? 0 : 1 + (offset - FIRST_CHUNK_SIZE) / CHUNK_SIZE;
}
inline uint64_t ChunkStart(uint64_t index) {
	return index == 0 ? 0 : FIRST_CHUNK_SIZE + (index - 1) * CHUNK_SIZE;
}
inline uint64_t ChunkCapacity(uint64_t index) {
	return index == 0 ? FIRST_CHUNK_SIZE : CHUNK_SIZE;
}
inline uint64_t ChunkCount(uint64_t file_length) {
	return file_length == 0 ? 0 : ChunkIndexOf(file_length - 1) + 1;
}

} // namespace differential
