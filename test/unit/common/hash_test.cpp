// SHA-256 and CRC32C against published test vectors, CRC chaining, and the hex form of a hash.
#include "common/hash.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace differential;

namespace {

std::string Sha256Hex(const std::string &input) {
	return HashToHex(Sha256(input.data(), input.size()));
}

uint32_t Crc(const std::vector<uint8_t> &data, uint32_t seed = 0) {
	return Crc32c(data.data(), data.size(), seed);
}

} // namespace

// FIPS 180-2, appendix B.
TEST(Sha256Test, EmptyInput) {
	EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256Test, Abc) {
	EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, TwoBlockMessage) {
	EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
	          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256Test, OneMillionA) {
	EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, DifferentInputsDiffer) {
	EXPECT_NE(Sha256Hex("abc"), Sha256Hex("abd"));
	EXPECT_FALSE(IsZeroHash(Sha256("", 0)));
}

// RFC 3720 (iSCSI), appendix B.4.
TEST(Crc32cTest, ThirtyTwoZeros) {
	EXPECT_EQ(Crc(std::vector<uint8_t>(32, 0x00)), 0x8A9136AAu);
}

TEST(Crc32cTest, ThirtyTwoOnes) {
	EXPECT_EQ(Crc(std::vector<uint8_t>(32, 0xFF)), 0x62A8AB43u);
}

TEST(Crc32cTest, AscendingBytes) {
	std::vector<uint8_t> data(32);
	for (size_t i = 0; i < data.size(); i++) {
		data[i] = static_cast<uint8_t>(i);
	}
	EXPECT_EQ(Crc(data), 0x46DD794Eu);
}

TEST(Crc32cTest, DescendingBytes) {
	std::vector<uint8_t> data(32);
	for (size_t i = 0; i < data.size(); i++) {
		data[i] = static_cast<uint8_t>(31 - i);
	}
	EXPECT_EQ(Crc(data), 0x113FDB5Cu);
}

TEST(Crc32cTest, CheckString) {
	const char *check = "123456789";
	EXPECT_EQ(Crc32c(check, std::strlen(check)), 0xE3069283u);
}

TEST(Crc32cTest, EmptyInputKeepsSeed) {
	EXPECT_EQ(Crc32c(nullptr, 0), 0u);
	EXPECT_EQ(Crc32c(nullptr, 0, 0xE3069283u), 0xE3069283u);
}

TEST(Crc32cTest, SeedChainsAcrossEverySplit) {
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

TEST(Crc32cTest, DetectsASingleBitFlip) {
	std::vector<uint8_t> data(4096, 0x5A);
	auto before = Crc(data);
	data[1234] ^= 0x01;
	EXPECT_NE(Crc(data), before);
}

//! CRC32C a bit at a time (the Castagnoli polynomial, reflected): the definition the fast paths must equal.
static uint32_t ReferenceCrc32c(const uint8_t *data, size_t size, uint32_t seed) {
	uint32_t crc = ~seed;
	for (size_t i = 0; i < size; i++) {
		crc ^= data[i];
		for (int bit = 0; bit < 8; bit++) {
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
		}
	}
	return ~crc;
}

TEST(Crc32cTest, InterleavedLanesEqualTheDefinition) {
	// Sizes around every multiple of the three-lane round (3 x 4096 bytes) and a DuckDB block, at odd offsets.
	std::vector<uint8_t> data(262144 + 12288 + 64);
	uint32_t state = 12345;
	for (auto &byte : data) {
		state = state * 1103515245u + 12345u;
		byte = static_cast<uint8_t>(state >> 16);
	}
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

TEST(HashHexTest, RoundTrip) {
	auto hash = Sha256("abc", 3);
	auto hex = HashToHex(hash);
	ASSERT_EQ(hex.size(), 64u);
	Hash256 back {};
	ASSERT_TRUE(HashFromHex(hex, back));
	EXPECT_EQ(back, hash);
}

TEST(HashHexTest, AcceptsUpperCase) {
	Hash256 back {};
	ASSERT_TRUE(HashFromHex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", back));
	EXPECT_EQ(back, Sha256("abc", 3));
}

TEST(HashHexTest, RejectsMalformedHex) {
	Hash256 out {};
	auto valid = HashToHex(Sha256("abc", 3));
	EXPECT_FALSE(HashFromHex("", out));
	EXPECT_FALSE(HashFromHex(valid.substr(0, 63), out));
	EXPECT_FALSE(HashFromHex(valid + "0", out));
	auto bad = valid;
	bad[10] = 'g';
	EXPECT_FALSE(HashFromHex(bad, out));
	bad = valid;
	bad[63] = ' ';
	EXPECT_FALSE(HashFromHex(bad, out));
}

TEST(HashHexTest, ZeroHash) {
	Hash256 zero {};
	EXPECT_TRUE(IsZeroHash(zero));
	EXPECT_EQ(HashToHex(zero), std::string(64, '0'));
	zero[31] = 1;
	EXPECT_FALSE(IsZeroHash(zero));
}
