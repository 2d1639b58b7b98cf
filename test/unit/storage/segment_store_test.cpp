// Segment files: append and read back, CRC32C checks on read, and recovery scans over torn or corrupt files.
#include "storage/segment_store.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace differential;
using differential::test::RaisedCode;
using differential::test::TempDir;

namespace {

std::vector<uint8_t> Pattern(size_t size, uint8_t seed) {
	std::vector<uint8_t> out(size);
	for (size_t i = 0; i < size; i++) {
		out[i] = static_cast<uint8_t>(seed + i * 131 + (i >> 8));
	}
	return out;
}

Hash256 HashOf(const std::vector<uint8_t> &data) {
	return Sha256(data.data(), data.size());
}

uint64_t FileSize(const std::string &path) {
	struct stat st;
	EXPECT_EQ(stat(path.c_str(), &st), 0) << path;
	return static_cast<uint64_t>(st.st_size);
}

void XorByteAt(const std::string &path, uint64_t offset, uint8_t mask) {
	int fd = open(path.c_str(), O_RDWR);
	ASSERT_GE(fd, 0) << path;
	uint8_t b = 0;
	ASSERT_EQ(pread(fd, &b, 1, static_cast<off_t>(offset)), 1);
	b ^= mask;
	ASSERT_EQ(pwrite(fd, &b, 1, static_cast<off_t>(offset)), 1);
	close(fd);
}

void AppendBytes(const std::string &path, const std::vector<uint8_t> &bytes) {
	int fd = open(path.c_str(), O_WRONLY | O_APPEND);
	ASSERT_GE(fd, 0) << path;
	ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
	close(fd);
}

class SegmentStoreTest : public ::testing::Test {
protected:
	SegmentStoreTest() : dir(temp.Sub("segments")) {
	}

	//! A store whose segment ids come from a counter, as the metadata would hand them out.
	std::unique_ptr<SegmentStore> MakeStore() {
		return std::make_unique<SegmentStore>(dir, [this]() { return ++next_id; });
	}

	ChunkLocation AppendPayload(SegmentStore &store, const std::vector<uint8_t> &payload) {
		return store.Append(payload.data(), static_cast<uint32_t>(payload.size()), HashOf(payload));
	}

	TempDir temp;
	std::string dir;
	uint64_t next_id = 0;
};

} // namespace

TEST_F(SegmentStoreTest, SegmentPathIsHexNamed) {
	EXPECT_EQ(SegmentStore::SegmentPath("/repo/segments", 1), "/repo/segments/0000000000000001.seg");
	EXPECT_EQ(SegmentStore::SegmentPath("/s", 0xabcdef0123ULL), "/s/000000abcdef0123.seg");
	auto store = MakeStore();
	EXPECT_EQ(store->SegmentPath(7), dir + "/0000000000000007.seg");
}

TEST_F(SegmentStoreTest, AppendThenReadBack) {
	auto store = MakeStore();
	std::vector<std::vector<uint8_t>> payloads = {Pattern(12288, 1), Pattern(1, 2), Pattern(262144, 3),
	                                              Pattern(4097, 4)};
	std::vector<ChunkLocation> locations;
	for (auto &p : payloads) {
		locations.push_back(AppendPayload(*store, p));
	}
	// One segment, records packed after the 64-byte header, each behind its 48-byte record header.
	EXPECT_EQ(next_id, 1u);
	uint64_t expected_offset = SEGMENT_HEADER_SIZE;
	for (size_t i = 0; i < payloads.size(); i++) {
		expected_offset += RECORD_HEADER_SIZE;
		EXPECT_EQ(locations[i].segment_id, 1u);
		EXPECT_EQ(locations[i].offset, expected_offset);
		EXPECT_EQ(locations[i].length, payloads[i].size());
		EXPECT_EQ(locations[i].crc32c, Crc32c(payloads[i].data(), payloads[i].size()));
		expected_offset += payloads[i].size();
	}
	EXPECT_EQ(FileSize(store->SegmentPath(1)), expected_offset);
	// Readable before Sync (the write journal serves reads at once) and after it.
	for (int round = 0; round < 2; round++) {
		for (size_t i = payloads.size(); i-- > 0;) {
			std::vector<uint8_t> out(payloads[i].size(), 0xEE);
			store->Read(locations[i], out.data());
			EXPECT_EQ(out, payloads[i]) << "record " << i;
		}
		store->Sync();
	}
}

TEST_F(SegmentStoreTest, AnotherStoreReadsPublishedLocations) {
	std::vector<uint8_t> payload = Pattern(5000, 9);
	ChunkLocation loc;
	{
		auto writer = MakeStore();
		loc = AppendPayload(*writer, payload);
		writer->Sync();
	}
	auto reader = MakeStore();
	std::vector<uint8_t> out(payload.size());
	reader->Read(loc, out.data());
	EXPECT_EQ(out, payload);
	// A new store never appends to an old segment: it allocates its own.
	auto loc2 = AppendPayload(*reader, payload);
	EXPECT_EQ(loc2.segment_id, 2u);
	EXPECT_EQ(loc2.offset, SEGMENT_HEADER_SIZE + RECORD_HEADER_SIZE);
	EXPECT_EQ(FileSize(reader->SegmentPath(1)), SEGMENT_HEADER_SIZE + RECORD_HEADER_SIZE + payload.size());
}

TEST_F(SegmentStoreTest, NeverOverwritesAnExistingSegment) {
	auto first = MakeStore();
	auto payload = Pattern(100, 1);
	auto loc = AppendPayload(*first, payload);
	first->Sync();
	// An allocator handing out an id that is already on disk must not clobber that segment.
	SegmentStore second(dir, []() -> uint64_t { return 1; });
	EXPECT_EQ(RaisedCode([&] { AppendPayload(second, Pattern(100, 2)); }), "io_error");
	std::vector<uint8_t> out(payload.size());
	first->Read(loc, out.data());
	EXPECT_EQ(out, payload);
}

TEST_F(SegmentStoreTest, CrcMismatchIsDetectedOnRead) {
	auto store = MakeStore();
	auto payload = Pattern(262144, 7);
	auto other = Pattern(300, 8);
	auto loc = AppendPayload(*store, payload);
	auto other_loc = AppendPayload(*store, other);
	store->Sync();
	XorByteAt(store->SegmentPath(loc.segment_id), loc.offset + 123456, 0x20);

	std::vector<uint8_t> out(payload.size());
	EXPECT_EQ(RaisedCode([&] { store->Read(loc, out.data()); }), "corrupt_chunk");
	// A fresh store (a new process, no cached descriptors) detects it too.
	auto fresh = MakeStore();
	EXPECT_EQ(RaisedCode([&] { fresh->Read(loc, out.data()); }), "corrupt_chunk");
	try {
		fresh->Read(loc, out.data());
	} catch (const DifferentialError &e) {
		EXPECT_EQ(e.kind, ErrorKind::IO);
		EXPECT_NE(std::string(e.what()).find("CRC32C mismatch"), std::string::npos) << e.what();
	}
	// Neighbouring records are unaffected.
	std::vector<uint8_t> other_out(other.size());
	fresh->Read(other_loc, other_out.data());
	EXPECT_EQ(other_out, other);
	// Restoring the byte makes the record readable again: the check is on content, not on a flag.
	XorByteAt(store->SegmentPath(loc.segment_id), loc.offset + 123456, 0x20);
	fresh->Read(loc, out.data());
	EXPECT_EQ(out, payload);
}

TEST_F(SegmentStoreTest, WrongCrcInLocationIsDetected) {
	auto store = MakeStore();
	auto payload = Pattern(64, 1);
	auto loc = AppendPayload(*store, payload);
	loc.crc32c ^= 1;
	std::vector<uint8_t> out(payload.size());
	EXPECT_EQ(RaisedCode([&] { store->Read(loc, out.data()); }), "corrupt_chunk");
}

TEST_F(SegmentStoreTest, ReadPastTheEndOfASegmentIsCorrupt) {
	auto store = MakeStore();
	auto payload = Pattern(1000, 1);
	auto loc = AppendPayload(*store, payload);
	store->Sync();
	ASSERT_EQ(truncate(store->SegmentPath(1).c_str(), static_cast<off_t>(loc.offset + 500)), 0);
	std::vector<uint8_t> out(payload.size());
	EXPECT_EQ(RaisedCode([&] { store->Read(loc, out.data()); }), "corrupt_chunk");
}

TEST_F(SegmentStoreTest, MissingSegmentIsReported) {
	auto store = MakeStore();
	ChunkLocation loc;
	loc.segment_id = 99;
	loc.offset = SEGMENT_HEADER_SIZE + RECORD_HEADER_SIZE;
	loc.length = 10;
	std::vector<uint8_t> out(10);
	EXPECT_EQ(RaisedCode([&] { store->Read(loc, out.data()); }), "missing_segment");
}

TEST_F(SegmentStoreTest, ScanListsEveryWholeRecord) {
	auto store = MakeStore();
	std::vector<std::vector<uint8_t>> payloads = {Pattern(10, 1), Pattern(0, 2), Pattern(70000, 3)};
	std::vector<ChunkLocation> locations;
	for (auto &p : payloads) {
		locations.push_back(AppendPayload(*store, p));
	}
	store->Sync();
	auto scan = SegmentStore::Scan(store->SegmentPath(1));
	EXPECT_TRUE(scan.header_valid);
	EXPECT_EQ(scan.segment_id, 1u);
	EXPECT_EQ(scan.torn_bytes, 0u);
	ASSERT_EQ(scan.records.size(), payloads.size());
	for (size_t i = 0; i < payloads.size(); i++) {
		EXPECT_EQ(scan.records[i].payload_offset, locations[i].offset);
		EXPECT_EQ(scan.records[i].length, payloads[i].size());
		EXPECT_EQ(scan.records[i].crc32c, locations[i].crc32c);
		EXPECT_EQ(scan.records[i].hash, HashOf(payloads[i]));
	}
}

TEST_F(SegmentStoreTest, PageAlignedPayloadsStartOnPageBoundariesAndScanSkipsThePadding) {
	auto store = MakeStore();
	// Sizes that leave every kind of gap before the next record: none, less than a header, more.
	std::vector<std::vector<uint8_t>> payloads = {Pattern(262144, 1), Pattern(4096 - RECORD_HEADER_SIZE, 2),
	                                              Pattern(4096 - 2 * RECORD_HEADER_SIZE + 10, 3), Pattern(17, 4),
	                                              Pattern(12288, 5)};
	std::vector<ChunkLocation> locations;
	for (size_t i = 0; i < payloads.size(); i++) {
		auto &p = payloads[i];
		// A packed record between aligned ones (a WAL range) stays where it falls.
		auto placement = i == 3 ? RecordPlacement::PACKED : RecordPlacement::PAGE_ALIGNED;
		locations.push_back(
		    store->Append(p.data(), static_cast<uint32_t>(p.size()), HashOf(p), "segment.record_write", placement));
		if (placement == RecordPlacement::PAGE_ALIGNED) {
			EXPECT_EQ(locations.back().offset % RECORD_PAGE_SIZE, 0u) << i;
		}
	}
	EXPECT_NE(locations[3].offset % RECORD_PAGE_SIZE, 0u);
	store->Sync();
	for (size_t i = 0; i < payloads.size(); i++) {
		std::vector<uint8_t> back(payloads[i].size());
		store->Read(locations[i], back.data());
		EXPECT_EQ(back, payloads[i]) << i;
	}
	auto path = store->SegmentPath(1);
	auto scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.torn_bytes, 0u);
	ASSERT_EQ(scan.records.size(), payloads.size());
	for (size_t i = 0; i < payloads.size(); i++) {
		EXPECT_EQ(scan.records[i].payload_offset, locations[i].offset) << i;
		EXPECT_EQ(scan.records[i].hash, HashOf(payloads[i])) << i;
	}
	// Cut inside the padding before the last record: the padding is a torn tail, the records before it stay.
	auto last_header = locations[4].offset - RECORD_HEADER_SIZE;
	auto previous_end = locations[3].offset + payloads[3].size();
	ASSERT_GT(last_header - previous_end, RECORD_HEADER_SIZE);
	ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(previous_end + RECORD_HEADER_SIZE + 5)), 0);
	scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.records.size(), 4u);
	EXPECT_EQ(scan.torn_bytes, RECORD_HEADER_SIZE + 5);
	EXPECT_EQ(SegmentStore::PaddingBefore(4096 - RECORD_HEADER_SIZE), 0u);
	EXPECT_EQ(SegmentStore::PaddingBefore(4096 - RECORD_HEADER_SIZE - 1), 1u + RECORD_PAGE_SIZE);
	EXPECT_EQ(SegmentStore::PaddingBefore(0), RECORD_PAGE_SIZE - RECORD_HEADER_SIZE);
}

TEST_F(SegmentStoreTest, ScanOfTruncatedTailKeepsWholeRecords) {
	auto store = MakeStore();
	auto a = Pattern(4096, 1), b = Pattern(8192, 2), c = Pattern(10000, 3);
	AppendPayload(*store, a);
	auto lb = AppendPayload(*store, b);
	auto lc = AppendPayload(*store, c);
	store->Sync();
	auto path = store->SegmentPath(1);
	auto full = FileSize(path);
	ASSERT_EQ(full, lc.offset + c.size());

	// Torn inside the last payload.
	ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(full - 10)), 0);
	auto scan = SegmentStore::Scan(path);
	EXPECT_TRUE(scan.header_valid);
	ASSERT_EQ(scan.records.size(), 2u);
	EXPECT_EQ(scan.records[1].payload_offset, lb.offset);
	EXPECT_EQ(scan.records[1].hash, HashOf(b));
	EXPECT_EQ(scan.torn_bytes, RECORD_HEADER_SIZE + c.size() - 10);

	// Torn inside the last record header.
	auto header_start = lc.offset - RECORD_HEADER_SIZE;
	ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(header_start + 20)), 0);
	scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.records.size(), 2u);
	EXPECT_EQ(scan.torn_bytes, 20u);

	// Cut exactly at a record boundary: nothing torn.
	ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(header_start)), 0);
	scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.records.size(), 2u);
	EXPECT_EQ(scan.torn_bytes, 0u);
}

TEST_F(SegmentStoreTest, ScanStopsAtAppendedGarbage) {
	auto store = MakeStore();
	auto a = Pattern(3000, 1), b = Pattern(5000, 2);
	AppendPayload(*store, a);
	AppendPayload(*store, b);
	store->Sync();
	auto path = store->SegmentPath(1);
	auto garbage = Pattern(777, 99);
	AppendBytes(path, garbage);
	auto scan = SegmentStore::Scan(path);
	EXPECT_TRUE(scan.header_valid);
	ASSERT_EQ(scan.records.size(), 2u);
	EXPECT_EQ(scan.records[0].hash, HashOf(a));
	EXPECT_EQ(scan.records[1].hash, HashOf(b));
	EXPECT_EQ(scan.torn_bytes, garbage.size());
}

TEST_F(SegmentStoreTest, ScanRejectsARecordWithAForgedHeader) {
	auto store = MakeStore();
	auto a = Pattern(100, 1);
	AppendPayload(*store, a);
	store->Sync();
	auto path = store->SegmentPath(1);
	// A well-formed header whose payload does not match its CRC32C: a torn payload write.
	auto payload = Pattern(200, 5);
	std::vector<uint8_t> record(RECORD_HEADER_SIZE);
	SegmentStore::EncodeRecordHeader(record.data(), 200, Crc32c(payload.data(), payload.size()) ^ 1, HashOf(payload));
	record.insert(record.end(), payload.begin(), payload.end());
	AppendBytes(path, record);
	auto scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.records.size(), 1u);
	EXPECT_EQ(scan.torn_bytes, record.size());
	// A header claiming more payload than the file holds.
	ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(FileSize(path) - record.size())), 0);
	std::vector<uint8_t> long_header(RECORD_HEADER_SIZE);
	SegmentStore::EncodeRecordHeader(long_header.data(), 1u << 20, 0, Hash256 {});
	AppendBytes(path, long_header);
	scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.records.size(), 1u);
	EXPECT_EQ(scan.torn_bytes, RECORD_HEADER_SIZE);
}

TEST_F(SegmentStoreTest, ScanStopsAtACorruptRecordHeader) {
	auto store = MakeStore();
	auto a = Pattern(100, 1), b = Pattern(100, 2), c = Pattern(100, 3);
	AppendPayload(*store, a);
	auto lb = AppendPayload(*store, b);
	AppendPayload(*store, c);
	store->Sync();
	auto path = store->SegmentPath(1);
	// Flip a bit of b's hash inside its record header: the header CRC no longer matches.
	XorByteAt(path, lb.offset - RECORD_HEADER_SIZE + 20, 0x01);
	auto scan = SegmentStore::Scan(path);
	EXPECT_EQ(scan.records.size(), 1u);
	EXPECT_EQ(scan.torn_bytes, 2 * (RECORD_HEADER_SIZE + 100));
}

TEST_F(SegmentStoreTest, ScanOfCorruptSegmentHeader) {
	auto store = MakeStore();
	AppendPayload(*store, Pattern(100, 1));
	store->Sync();
	auto path = store->SegmentPath(1);
	ASSERT_TRUE(SegmentStore::Scan(path).header_valid);

	// A flipped bit in the segment id: the header CRC catches it.
	XorByteAt(path, 16, 0x04);
	auto scan = SegmentStore::Scan(path);
	EXPECT_FALSE(scan.header_valid);
	EXPECT_TRUE(scan.records.empty());
	XorByteAt(path, 16, 0x04);
	ASSERT_TRUE(SegmentStore::Scan(path).header_valid);

	// Wrong magic.
	XorByteAt(path, 0, 0xFF);
	scan = SegmentStore::Scan(path);
	EXPECT_FALSE(scan.header_valid);
	EXPECT_TRUE(scan.records.empty());

	// Shorter than a header.
	ASSERT_EQ(truncate(path.c_str(), 30), 0);
	scan = SegmentStore::Scan(path);
	EXPECT_FALSE(scan.header_valid);
	EXPECT_TRUE(scan.records.empty());
}

TEST_F(SegmentStoreTest, ScanOfMissingFileFails) {
	EXPECT_EQ(RaisedCode([&] { SegmentStore::Scan(dir + "/does-not-exist.seg"); }), "io_error");
}

TEST_F(SegmentStoreTest, RecordHeaderLayout) {
	uint8_t header[RECORD_HEADER_SIZE];
	auto hash = Sha256("abc", 3);
	SegmentStore::EncodeRecordHeader(header, 0x01020304, 0xA1B2C3D4, hash);
	EXPECT_EQ(std::memcmp(header, "DIFR", 4), 0);
	uint32_t length, crc, header_crc;
	std::memcpy(&length, header + 4, 4);
	std::memcpy(&crc, header + 8, 4);
	std::memcpy(&header_crc, header + 12, 4);
	EXPECT_EQ(length, 0x01020304u);
	EXPECT_EQ(crc, 0xA1B2C3D4u);
	EXPECT_EQ(std::memcmp(header + 16, hash.data(), 32), 0);
	// The header CRC covers bytes 0..11 and the hash, not itself.
	EXPECT_EQ(header_crc, Crc32c(header + 16, 32, Crc32c(header, 12)));
}

TEST_F(SegmentStoreTest, ConcurrentAppendsAreAllReadable) {
	auto store = MakeStore();
	constexpr int THREADS = 4, PER_THREAD = 50;
	std::vector<std::vector<ChunkLocation>> locations(THREADS);
	std::vector<std::thread> threads;
	for (int t = 0; t < THREADS; t++) {
		threads.emplace_back([&, t]() {
			for (int i = 0; i < PER_THREAD; i++) {
				auto payload = Pattern(1000 + i, static_cast<uint8_t>(t * 64 + i));
				locations[t].push_back(AppendPayload(*store, payload));
				if (i % 10 == 0) {
					store->Sync();
				}
			}
		});
	}
	for (auto &th : threads) {
		th.join();
	}
	store->Sync();
	for (int t = 0; t < THREADS; t++) {
		for (int i = 0; i < PER_THREAD; i++) {
			auto expected = Pattern(1000 + i, static_cast<uint8_t>(t * 64 + i));
			std::vector<uint8_t> out(expected.size());
			store->Read(locations[t][i], out.data());
			ASSERT_EQ(out, expected) << "thread " << t << " record " << i;
		}
	}
	auto scan = SegmentStore::Scan(store->SegmentPath(1));
	EXPECT_EQ(scan.records.size(), static_cast<size_t>(THREADS * PER_THREAD));
	EXPECT_EQ(scan.torn_bytes, 0u);
}
