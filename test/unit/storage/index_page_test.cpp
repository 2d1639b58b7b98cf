// Index page encoding: 32-byte slots, trailing holes trimmed, malformed blobs refused.
#include "storage/index_page.hpp"

#include "storage/chunk_geometry.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace differential;
using differential::test::RaisedCode;

namespace {

Hash256 HashOf(const std::string &s) {
	return Sha256(s.data(), s.size());
}

} // namespace

TEST(IndexPageTest, RoundTrip) {
	std::vector<Hash256> slots = {HashOf("a"), HashOf("b"), Hash256 {}, HashOf("c")};
	auto blob = EncodeIndexPage(slots);
	ASSERT_EQ(blob.size(), 4u * 32u);
	EXPECT_EQ(std::vector<uint8_t>(blob.begin() + 32, blob.begin() + 64),
	          std::vector<uint8_t>(slots[1].begin(), slots[1].end()));
	EXPECT_EQ(DecodeIndexPage(blob), slots);
}

TEST(IndexPageTest, TrailingHolesAreTrimmed) {
	std::vector<Hash256> slots = {Hash256 {}, HashOf("x"), Hash256 {}, Hash256 {}, Hash256 {}};
	auto blob = EncodeIndexPage(slots);
	ASSERT_EQ(blob.size(), 2u * 32u);
	auto decoded = DecodeIndexPage(blob);
	ASSERT_EQ(decoded.size(), 2u);
	EXPECT_TRUE(IsZeroHash(decoded[0]));
	EXPECT_EQ(decoded[1], HashOf("x"));
}

TEST(IndexPageTest, AllHolesEncodeEmpty) {
	EXPECT_TRUE(EncodeIndexPage(std::vector<Hash256>(17)).empty());
	EXPECT_TRUE(EncodeIndexPage({}).empty());
	EXPECT_TRUE(DecodeIndexPage({}).empty());
}

TEST(IndexPageTest, SamePagesEncodeIdentically) {
	// A page's hash is its identity, so encoding must be deterministic and independent of trailing holes.
	std::vector<Hash256> a = {HashOf("1"), HashOf("2")};
	std::vector<Hash256> b = {HashOf("1"), HashOf("2"), Hash256 {}};
	EXPECT_EQ(EncodeIndexPage(a), EncodeIndexPage(b));
}

TEST(IndexPageTest, FullPageRoundTrip) {
	std::vector<Hash256> slots(SLOTS_PER_INDEX_PAGE);
	for (size_t i = 0; i < slots.size(); i++) {
		slots[i] = HashOf(std::to_string(i));
	}
	auto blob = EncodeIndexPage(slots);
	ASSERT_EQ(blob.size(), SLOTS_PER_INDEX_PAGE * 32);
	EXPECT_EQ(DecodeIndexPage(blob), slots);
}

TEST(IndexPageTest, RejectsPartialSlots) {
	EXPECT_EQ(RaisedCode([] { DecodeIndexPage(std::vector<uint8_t>(31)); }), "corrupt_index_page");
	EXPECT_EQ(RaisedCode([] { DecodeIndexPage(std::vector<uint8_t>(33)); }), "corrupt_index_page");
	EXPECT_EQ(RaisedCode([] { DecodeIndexPage(std::vector<uint8_t>(1)); }), "corrupt_index_page");
}

TEST(IndexPageTest, RejectsTooManySlots) {
	EXPECT_EQ(RaisedCode([] { DecodeIndexPage(std::vector<uint8_t>((SLOTS_PER_INDEX_PAGE + 1) * 32, 1)); }),
	          "corrupt_index_page");
}

TEST(IndexPageTest, CorruptPageIsAnIoError) {
	try {
		DecodeIndexPage(std::vector<uint8_t>(7));
		FAIL() << "no exception";
	} catch (const DifferentialError &e) {
		EXPECT_EQ(e.kind, ErrorKind::IO);
		EXPECT_NE(std::string(e.what()).find("7 bytes"), std::string::npos) << e.what();
	}
}
