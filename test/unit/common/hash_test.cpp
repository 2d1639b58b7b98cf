// SHA-256 against published test vectors, and the hex form of a hash (CRC32C: crc32c_test.cpp).
#include "common/hash.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace differential;

namespace {

std::string Sha256Hex(const std::string &input) {
	return HashToHex(Sha256(input.data(), input.size()));
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
