// The export objects round-trip and refuse what is not theirs (store format 2, docs/FORMAT.md).
#include "remote/export_format.hpp"

#include <gtest/gtest.h>

using namespace differential;

static Hash256 HashOf(const std::string &text) {
	return Sha256(text.data(), text.size());
}

TEST(ExportFormat, KeysAreLaidOutWithoutKeyChildClashes) {
	EXPECT_EQ(PackKey(HashOf("a")), "packs/" + HashToHex(HashOf("a")));
	EXPECT_EQ(HeadKey("orders", "main"), "heads/orders/main");
	EXPECT_EQ(CommitRecordKey("orders", 3), "commits/orders/00000000000000000003");
	EXPECT_EQ(ExpiryRecordKey("orders", 12), "expiries/orders/00000000000000000012");
	// Listing order is numeric order.
	EXPECT_LT(CommitRecordKey("orders", 9), CommitRecordKey("orders", 10));
}

TEST(ExportFormat, IndexPageRoundTripsWithHoles) {
	std::vector<PackedChunk> slots(3);
	slots[0] = {HashOf("c0"), HashOf("p0"), 0, 12288};
	slots[2] = {HashOf("c2"), HashOf("p0"), 12288, 262144};
	auto blob = EncodeExportIndexPage(slots);
	std::vector<PackedChunk> back;
	std::string why;
	ASSERT_TRUE(DecodeExportIndexPage(std::string(blob.begin(), blob.end()), back, why)) << why;
	ASSERT_EQ(back.size(), 3u);
	EXPECT_TRUE(back[1].IsHole());
	EXPECT_EQ(back[2].chunk, slots[2].chunk);
	EXPECT_EQ(back[2].pack, slots[2].pack);
	EXPECT_EQ(back[2].offset, 12288u);
	EXPECT_EQ(back[2].length, 262144u);
}

TEST(ExportFormat, IndexPageRefusesDamage) {
	std::vector<PackedChunk> slots(1, PackedChunk {HashOf("c"), HashOf("p"), 0, 100});
	auto blob = EncodeExportIndexPage(slots);
	std::string text(blob.begin(), blob.end()), why;
	std::vector<PackedChunk> back;
	EXPECT_FALSE(DecodeExportIndexPage(text.substr(0, text.size() - 1), back, why));
	EXPECT_FALSE(DecodeExportIndexPage("DIFXIDX9" + text.substr(8), back, why));
	slots[0].offset = MAX_PACK_BYTES;
	blob = EncodeExportIndexPage(slots);
	EXPECT_FALSE(DecodeExportIndexPage(std::string(blob.begin(), blob.end()), back, why));
	EXPECT_NE(why.find("outside"), std::string::npos);
}

TEST(ExportFormat, DescriptorRoundTrips) {
	ExportDescriptor descriptor;
	descriptor.database = "orders";
	descriptor.snapshot_id = 7;
	descriptor.snapshot_name = "nightly";
	descriptor.created_unix_ms = 1764633600000;
	descriptor.length = 1 << 20;
	descriptor.index_pages = {HashOf("i0"), HashOf("i1")};
	ExportDescriptor back;
	std::string why;
	ASSERT_TRUE(DecodeDescriptor(EncodeDescriptor(descriptor), back, why)) << why;
	EXPECT_EQ(back.database, "orders");
	EXPECT_EQ(back.snapshot_id, 7);
	EXPECT_EQ(back.snapshot_name.value_or(""), "nightly");
	EXPECT_EQ(back.length, 1u << 20);
	EXPECT_EQ(back.index_pages, descriptor.index_pages);
	descriptor.snapshot_name.reset();
	ASSERT_TRUE(DecodeDescriptor(EncodeDescriptor(descriptor), back, why));
	EXPECT_FALSE(back.snapshot_name.has_value());
}

TEST(ExportFormat, TextObjectsRefuseOtherKindsAndFormats) {
	BranchHead head {"orders", "main", 3, HashOf("d"), Hash256()};
	auto text = EncodeHead(head);
	BranchHead back;
	ExportDescriptor descriptor;
	std::string why;
	ASSERT_TRUE(DecodeHead(text, back, why)) << why;
	EXPECT_EQ(back.descriptor, head.descriptor);
	EXPECT_TRUE(IsZeroHash(back.previous));
	EXPECT_FALSE(DecodeDescriptor(text, descriptor, why));
	auto future = text;
	future.replace(future.find(" 2\n"), 3, " 3\n");
	EXPECT_FALSE(DecodeHead(future, back, why));
	EXPECT_NE(why.find("format 3"), std::string::npos);
	EXPECT_FALSE(DecodeHead(text.substr(0, text.size() - 1), back, why));
}

TEST(ExportFormat, SnapshotRecordsRoundTrip) {
	RemoteSnapshotRecord record {"orders", 4, HashOf("d4")};
	RemoteSnapshotRecord back;
	std::string why;
	ASSERT_TRUE(DecodeSnapshotRecord(EncodeSnapshotRecord(record, false), false, back, why)) << why;
	EXPECT_EQ(back.descriptor, record.descriptor);
	ASSERT_TRUE(DecodeSnapshotRecord(EncodeSnapshotRecord(record, true), true, back, why)) << why;
	EXPECT_TRUE(IsZeroHash(back.descriptor));
	EXPECT_FALSE(DecodeSnapshotRecord(EncodeSnapshotRecord(record, true), false, back, why));
}

TEST(ExportFormat, LocatorsParse) {
	RemoteLocator locator;
	std::string why;
	ASSERT_TRUE(ParseRemoteLocator("s3://bucket/lake/heads/orders/main", locator, why)) << why;
	EXPECT_EQ(locator.kind, RemoteLocator::Kind::HEAD);
	EXPECT_EQ(locator.store_url, "s3://bucket/lake/");
	EXPECT_EQ(locator.database, "orders");
	EXPECT_EQ(locator.branch, "main");
	EXPECT_EQ(locator.Key(), "heads/orders/main");
	auto hex = HashToHex(HashOf("d"));
	ASSERT_TRUE(ParseRemoteLocator("s3://bucket/descriptors/" + hex, locator, why)) << why;
	EXPECT_EQ(locator.kind, RemoteLocator::Kind::DESCRIPTOR);
	EXPECT_EQ(locator.store_url, "s3://bucket/");
	EXPECT_EQ(locator.Key(), "descriptors/" + hex);
	EXPECT_FALSE(ParseRemoteLocator("s3://bucket/lake/orders/main", locator, why));
	EXPECT_FALSE(ParseRemoteLocator("s3://bucket/descriptors/nothex", locator, why));
	EXPECT_FALSE(ParseRemoteLocator("s3://bucket/heads//main", locator, why));
}
