// How a database file is cut into chunks: 12 KiB first chunk, then 256 KiB chunks.
#include "storage/chunk_geometry.hpp"

#include <gtest/gtest.h>

using namespace differential;

TEST(ChunkGeometryTest, Constants) {
	EXPECT_EQ(FIRST_CHUNK_SIZE, 3u * 4096u);
	EXPECT_EQ(CHUNK_SIZE, 262144u);
	EXPECT_EQ(SLOTS_PER_INDEX_PAGE, 4096u);
}

TEST(ChunkGeometryTest, CapacityAndStart) {
	EXPECT_EQ(ChunkCapacity(0), 12288u);
	EXPECT_EQ(ChunkCapacity(1), 262144u);
	EXPECT_EQ(ChunkCapacity(1000), 262144u);
	EXPECT_EQ(ChunkStart(0), 0u);
	EXPECT_EQ(ChunkStart(1), 12288u);
	EXPECT_EQ(ChunkStart(2), 12288u + 262144u);
	EXPECT_EQ(ChunkStart(10), 12288u + 9u * 262144u);
}

TEST(ChunkGeometryTest, IndexOfAtBoundaries) {
	EXPECT_EQ(ChunkIndexOf(0), 0u);
	EXPECT_EQ(ChunkIndexOf(4096), 0u);
	EXPECT_EQ(ChunkIndexOf(12287), 0u);
	EXPECT_EQ(ChunkIndexOf(12288), 1u);
	EXPECT_EQ(ChunkIndexOf(12288 + 262143), 1u);
	EXPECT_EQ(ChunkIndexOf(12288 + 262144), 2u);
	EXPECT_EQ(ChunkIndexOf(12288 + 5 * 262144 - 1), 5u);
	EXPECT_EQ(ChunkIndexOf(12288 + 5 * 262144), 6u);
}

TEST(ChunkGeometryTest, IndexOfAndStartAgree) {
	for (uint64_t i = 0; i < 20; i++) {
		EXPECT_EQ(ChunkIndexOf(ChunkStart(i)), i);
		EXPECT_EQ(ChunkIndexOf(ChunkStart(i) + ChunkCapacity(i) - 1), i);
		EXPECT_EQ(ChunkStart(i + 1), ChunkStart(i) + ChunkCapacity(i));
	}
	// Far beyond 4 GiB, where a 32-bit offset would wrap.
	uint64_t big = 1000000;
	EXPECT_EQ(ChunkIndexOf(ChunkStart(big)), big);
	EXPECT_EQ(ChunkIndexOf(ChunkStart(big) - 1), big - 1);
}

TEST(ChunkGeometryTest, CountAtBoundaries) {
	EXPECT_EQ(ChunkCount(0), 0u);
	EXPECT_EQ(ChunkCount(1), 1u);
	EXPECT_EQ(ChunkCount(12287), 1u);
	EXPECT_EQ(ChunkCount(12288), 1u);
	EXPECT_EQ(ChunkCount(12289), 2u);
	EXPECT_EQ(ChunkCount(12288 + 262144), 2u);
	EXPECT_EQ(ChunkCount(12288 + 262144 + 1), 3u);
	EXPECT_EQ(ChunkCount(12288 + 3 * 262144), 4u);
}
