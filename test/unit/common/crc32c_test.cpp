// CRC32C against published test vectors and the bitwise definition, once per implementation this CPU runs, and
// the CPU's instruction against the tables on many random buffers (so a CPU that has the instruction still checks
// the fallback other CPUs run).
#include "common/crc32c.hpp"
#include "common/hash.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace differential;

namespace {

uint32_t Crc(const std::vector<uint8_t> &data, uint32_t seed = 0) {
	return Crc32c(data.data(), data.size(), seed);
}

//! CRC32C a bit at a time (the Castagnoli polynomial, reflected): the definition the fast paths must equal.
uint32_t ReferenceCrc32c(const uint8_t *data, size_t size, uint32_t seed) {
	uint32_t crc = ~seed;
	for (size_t i = 0; i < size; i++) {
		crc ^= data[i];
		for (int bit = 0; bit < 8; bit++) {
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

std::vector<uint8_t> RandomBytes(size_t size, uint32_t seed) {
	std::mt19937 random(seed);
	std::vector<uint8_t> data(size);
	for (auto &byte : data) {
		byte = static_cast<uint8_t>(random());
	}
	return data;
}

//! Makes Crc32c use one implementation for a scope, whatever the CPU would pick.
class ForcedImplementation {
public:
	explicit ForcedImplementation(Crc32cImplementation implementation)
	    : before(SetCrc32cImplementationForTesting(implementation)) {
	}
	~ForcedImplementation() {
		SetCrc32cImplementationForTesting(before);
	}

private:
	Crc32cImplementation before;
};

uint32_t CrcWith(Crc32cImplementation implementation, const uint8_t *data, size_t size, uint32_t seed) {
	ForcedImplementation forced(implementation);
	return Crc32c(data, size, seed);
}

//! Every test below runs once on the tables and once on the instruction (skipped where the CPU lacks it).
class Crc32cTest : public testing::TestWithParam<Crc32cImplementation> {
protected:
	void SetUp() override {
		if (!Crc32cSupported(GetParam())) {
			GTEST_SKIP() << Crc32cImplementationName(GetParam()) << " is not available on this CPU";
		}
		forced.emplace(GetParam());
	}
	void TearDown() override {
		forced.reset();
	}

private:
	std::optional<ForcedImplementation> forced;
};

} // namespace

INSTANTIATE_TEST_SUITE_P(Implementations, Crc32cTest,
                         testing::Values(Crc32cImplementation::PORTABLE, Crc32cImplementation::HARDWARE),
                         [](const testing::TestParamInfo<Crc32cImplementation> &info) {
	                         return info.param == Crc32cImplementation::PORTABLE ? "Portable" : "Hardware";
                         });

// RFC 3720 (iSCSI), appendix B.4.
TEST_P(Crc32cTest, ThirtyTwoZeros) {
	EXPECT_EQ(Crc(std::vector<uint8_t>(32, 0x00)), 0x8A9136AAu);
}

TEST_P(Crc32cTest, ThirtyTwoOnes) {
	EXPECT_EQ(Crc(std::vector<uint8_t>(32, 0xFF)), 0x62A8AB43u);
}

TEST_P(Crc32cTest, AscendingBytes) {
	std::vector<uint8_t> data(32);
	for (size_t i = 0; i < data.size(); i++) {
		data[i] = static_cast<uint8_t>(i);
	}
	EXPECT_EQ(Crc(data), 0x46DD794Eu);
}

TEST_P(Crc32cTest, DescendingBytes) {
	std::vector<uint8_t> data(32);
	for (size_t i = 0; i < data.size(); i++) {
		data[i] = static_cast<uint8_t>(31 - i);
	}
	EXPECT_EQ(Crc(data), 0x113FDB5Cu);
}

TEST_P(Crc32cTest, CheckString) {
	const char *check = "123456789";
	EXPECT_EQ(Crc32c(check, std::strlen(check)), 0xE3069283u);
}

TEST_P(Crc32cTest, EmptyInputKeepsSeed) {
	EXPECT_EQ(Crc32c(nullptr, 0), 0u);
	EXPECT_EQ(Crc32c(nullptr, 0, 0xE3069283u), 0xE3069283u);
}

TEST_P(Crc32cTest, SeedChainsAcrossEverySplit) {
	// Long enough for the 8-byte loop and an odd tail on both sides of every split point.
	std::vector<uint8_t> data(77);
	for (size_t i = 0; i < data.size(); i++) {
		data[i] = static_cast<uint8_t>(i * 37 + 11);
	}
	auto whole = Crc(data);
	for (size_t split = 0; split <= data.size(); split++) {
		auto first = Crc32c(data.data(), split);
		EXPECT_EQ(Crc32c(data.data() + split, data.size() - split, first), whole) << "split at " << split;
	}
	// The check string split in two must still give the published value.
	EXPECT_EQ(Crc32c("56789", 5, Crc32c("1234", 4)), 0xE3069283u);
}

TEST_P(Crc32cTest, DetectsASingleBitFlip) {
	std::vector<uint8_t> data(4096, 0x5A);
	auto before = Crc(data);
	data[1234] ^= 0x01;
	EXPECT_NE(Crc(data), before);
}

TEST_P(Crc32cTest, ShortBuffersEqualTheDefinition) {
	// Every length up to a few words at every alignment: the 8-byte loop's edges and the byte tail.
	auto data = RandomBytes(128 + 8, 7);
	for (size_t offset = 0; offset < 8; offset++) {
		for (size_t size = 0; size <= 128; size++) {
			ASSERT_EQ(Crc32c(data.data() + offset, size, 0x1234567u),
			          ReferenceCrc32c(data.data() + offset, size, 0x1234567u))
			    << "size " << size << " offset " << offset;
		}
	}
}

TEST_P(Crc32cTest, InterleavedLanesEqualTheDefinition) {
	// Sizes around every multiple of the three-lane round (3 x 4096 bytes) and a DuckDB block, at odd offsets.
	auto data = RandomBytes(262144 + 12288 + 64, 12345);
	for (size_t size : {size_t(12287), size_t(12288), size_t(12289), size_t(24575), size_t(24576), size_t(36871),
	                    size_t(262144), size_t(262144 + 12288 + 7)}) {
		for (size_t offset : {size_t(0), size_t(3)}) {
			for (uint32_t seed : {0u, 0xE3069283u}) {
				EXPECT_EQ(Crc32c(data.data() + offset, size, seed), ReferenceCrc32c(data.data() + offset, size, seed))
				    << "size " << size << " offset " << offset << " seed " << seed;
			}
		}
	}
	// A flipped bit in each lane of a round changes the result.
	auto before = Crc32c(data.data(), 12288);
	for (size_t at : {size_t(5), size_t(4096 + 5), size_t(8192 + 5)}) {
		data[at] ^= 0x10;
		EXPECT_NE(Crc32c(data.data(), 12288), before) << "flip at " << at;
		data[at] ^= 0x10;
	}
}

TEST(Crc32cImplementationsTest, InstructionAndTablesAgreeOnRandomBuffers) {
	if (!Crc32cSupported(Crc32cImplementation::HARDWARE)) {
		GTEST_SKIP() << "no CRC32C instruction on this CPU: the tables are checked against the definition above";
	}
	// Lengths from 0 to 40 KiB (past three 4 KiB lanes), starting anywhere in a word, chained from random seeds.
	std::mt19937 random(20261203);
	auto data = RandomBytes(40960 + 16, 99);
	for (int round = 0; round < 3000; round++) {
		size_t size = round < 2000 ? random() % 8193 : random() % 40961;
		size_t offset = random() % 16;
		uint32_t seed = round % 3 == 0 ? 0u : static_cast<uint32_t>(random());
		auto portable = CrcWith(Crc32cImplementation::PORTABLE, data.data() + offset, size, seed);
		auto hardware = CrcWith(Crc32cImplementation::HARDWARE, data.data() + offset, size, seed);
		ASSERT_EQ(portable, hardware) << "size " << size << " offset " << offset << " seed " << seed;
	}
}

TEST(Crc32cImplementationsTest, ForcingTheTablesIsUndoneAndRefusesTheUnavailable) {
	auto active = ActiveCrc32cImplementation();
	{
		ForcedImplementation forced(Crc32cImplementation::PORTABLE);
		EXPECT_EQ(ActiveCrc32cImplementation(), Crc32cImplementation::PORTABLE);
		EXPECT_STREQ(Crc32cImplementationName(ActiveCrc32cImplementation()), "portable");
	}
	EXPECT_EQ(ActiveCrc32cImplementation(), active);
	if (!Crc32cSupported(Crc32cImplementation::HARDWARE)) {
		EXPECT_ANY_THROW(SetCrc32cImplementationForTesting(Crc32cImplementation::HARDWARE));
	}
}

#if defined(__x86_64__)
// Every x86-64 CPU since 2008 has SSE4.2: a detection that misses it would quietly make every read slower.
TEST(Crc32cImplementationsTest, X86DetectsSse42) {
	EXPECT_TRUE(Crc32cSupported(Crc32cImplementation::HARDWARE));
	EXPECT_EQ(ActiveCrc32cImplementation(), Crc32cImplementation::HARDWARE);
	EXPECT_STREQ(Crc32cImplementationName(Crc32cImplementation::HARDWARE), "sse4.2");
}
#endif
