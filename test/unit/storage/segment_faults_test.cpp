// Injected I/O faults at the segment store's edges: each fails with io_error, leaves the store usable
// and unchanged, and the next call succeeds; plus the log events the store reports.
#include "common/fault_points.hpp"
#include "common/logging.hpp"
#include "storage/segment_store.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace differential;
using differential::test::RaisedCode;
using differential::test::TempDir;

namespace {

std::vector<uint8_t> Payload(size_t size, uint8_t seed) {
	std::vector<uint8_t> out(size);
	for (size_t i = 0; i < size; i++) {
		out[i] = static_cast<uint8_t>(seed * 7 + i);
	}
	return out;
}

std::vector<std::string> FilesIn(const std::string &dir) {
	std::vector<std::string> out;
	if (auto d = opendir(dir.c_str())) {
		while (auto entry = readdir(d)) {
			std::string name = entry->d_name;
			if (name != "." && name != "..") {
				out.push_back(name);
			}
		}
		closedir(d);
	}
	return out;
}

struct CapturingSink : LogSink {
	std::vector<LogEntry> entries;
	bool Enabled(LogLevel) override {
		return true;
	}
	void Write(const LogEntry &entry) override {
		entries.push_back(entry);
	}
	const LogEntry *Find(const std::string &event) const {
		for (auto &e : entries) {
			if (e.event == event) {
				return &e;
			}
		}
		return nullptr;
	}
};

class SegmentFaultsTest : public ::testing::Test {
protected:
	SegmentFaultsTest() : dir(temp.Sub("segments")) {
	}
	~SegmentFaultsTest() override {
		SetFaultPointForTesting("");
	}

	std::unique_ptr<SegmentStore> MakeStore() {
		return std::make_unique<SegmentStore>(dir, [this]() { return ++next_id; });
	}
	ChunkLocation Append(SegmentStore &store, const std::vector<uint8_t> &payload) {
		return store.Append(payload.data(), static_cast<uint32_t>(payload.size()),
		                    Sha256(payload.data(), payload.size()));
	}
	std::vector<uint8_t> ReadBack(SegmentStore &store, const ChunkLocation &loc) {
		std::vector<uint8_t> out(loc.length);
		store.Read(loc, out.data());
		return out;
	}

	TempDir temp;
	std::string dir;
	uint64_t next_id = 0;
};

} // namespace

TEST_F(SegmentFaultsTest, FailedHeaderWriteLeavesNoSegmentAndTheNextAppendWorks) {
	auto store = MakeStore();
	SetFaultPointForTesting("segment.header_write:1");
	auto first = Payload(100, 1);
	EXPECT_EQ(RaisedCode([&] { Append(*store, first); }), "io_error");
	// The half-made segment is gone and the store did not switch to it.
	EXPECT_TRUE(FilesIn(dir).empty());
	EXPECT_EQ(store->CurrentSegmentId(), 0u);
	auto loc = Append(*store, first);
	EXPECT_EQ(loc.segment_id, 2u);
	EXPECT_EQ(loc.offset, SEGMENT_HEADER_SIZE + RECORD_HEADER_SIZE);
	store->Sync();
	EXPECT_EQ(ReadBack(*store, loc), first);
	auto scan = SegmentStore::Scan(store->SegmentPath(2));
	EXPECT_TRUE(scan.header_valid);
	EXPECT_EQ(scan.records.size(), 1u);
	EXPECT_EQ(scan.torn_bytes, 0u);
}

TEST_F(SegmentFaultsTest, EveryStepOfOpeningASegmentFailsCleanly) {
	for (auto label : {"segment.open", "segment.header_fsync", "segment.dir_open", "segment.dir_fsync"}) {
		SCOPED_TRACE(label);
		TempDir fresh;
		auto segments = fresh.Sub("segments");
		uint64_t ids = 0;
		SegmentStore store(segments, [&ids]() { return ++ids; });
		SetFaultPointForTesting(std::string(label) + ":1");
		auto payload = Payload(10, 2);
		EXPECT_EQ(RaisedCode([&] { store.Append(payload.data(), 10, Hash256 {}); }), "io_error");
		EXPECT_TRUE(FilesIn(segments).empty());
		auto loc = store.Append(payload.data(), 10, Hash256 {});
		store.Sync();
		std::vector<uint8_t> out(10);
		store.Read(loc, out.data());
		EXPECT_EQ(out, payload);
	}
}

TEST_F(SegmentFaultsTest, FailedRecordWriteIsOverwrittenByTheNextRecord) {
	auto store = MakeStore();
	auto a = Append(*store, Payload(50, 1));
	SetFaultPointForTesting("segment.record_write:1:ENOSPC");
	try {
		Append(*store, Payload(60, 2));
		FAIL() << "the injected ENOSPC did not fail the append";
	} catch (DifferentialError &error) {
		EXPECT_EQ(error.code, ErrorCode::IO_ERROR);
		EXPECT_NE(std::string(error.what()).find("No space left on device"), std::string::npos) << error.what();
	}
	auto c = Append(*store, Payload(70, 3));
	EXPECT_EQ(c.offset, a.offset + a.length + RECORD_HEADER_SIZE);
	store->Sync();
	EXPECT_EQ(ReadBack(*store, a), Payload(50, 1));
	EXPECT_EQ(ReadBack(*store, c), Payload(70, 3));
	auto scan = SegmentStore::Scan(store->SegmentPath(a.segment_id));
	EXPECT_EQ(scan.records.size(), 2u);
	EXPECT_EQ(scan.torn_bytes, 0u);
}

TEST_F(SegmentFaultsTest, OtherWriteEdgesAreLabelledApart) {
	auto store = MakeStore();
	SetFaultPointForTesting("wal.range_write:1");
	auto payload = Payload(20, 4);
	// A chunk write does not pass the WAL label; a range write does.
	auto loc = Append(*store, payload);
	EXPECT_EQ(RaisedCode([&] { store->Append(payload.data(), 20, Hash256 {}, "wal.range_write"); }), "io_error");
	store->Append(payload.data(), 20, Hash256 {}, "wal.range_write");
	store->Sync();
	EXPECT_EQ(ReadBack(*store, loc), payload);
}

TEST_F(SegmentFaultsTest, FailedFdatasyncKeepsTheSegmentOwed) {
	auto store = MakeStore();
	auto loc = Append(*store, Payload(30, 5));
	SetFaultPointForTesting("segment.fdatasync:1");
	EXPECT_EQ(RaisedCode([&] { store->Sync(); }), "io_error");
	CapturingSink sink;
	LogScope scope(&sink);
	store->Sync();
	// The retry really flushed something: the segment was still owed.
	auto entry = sink.Find("segment_fsync");
	ASSERT_NE(entry, nullptr);
	EXPECT_GE(entry->duration_ms, 0);
	EXPECT_NE(entry->detail.find("1 segment file(s)"), std::string::npos) << entry->detail;
	EXPECT_EQ(ReadBack(*store, loc), Payload(30, 5));
}

TEST_F(SegmentFaultsTest, ReadFaultsAreIoErrorsNotCorruption) {
	auto store = MakeStore();
	auto loc = Append(*store, Payload(40, 6));
	store->Sync();
	auto reader = MakeStore();
	std::vector<uint8_t> out(40);
	SetFaultPointForTesting("segment.reader_open:1");
	EXPECT_EQ(RaisedCode([&] { reader->Read(loc, out.data()); }), "io_error");
	SetFaultPointForTesting("segment.read:1");
	EXPECT_EQ(RaisedCode([&] { reader->Read(loc, out.data()); }), "io_error");
	EXPECT_EQ(ReadBack(*reader, loc), Payload(40, 6));
}

TEST_F(SegmentFaultsTest, FailedUnlinkKeepsTheFileForTheNextTry) {
	auto store = MakeStore();
	auto loc = Append(*store, Payload(10, 7));
	store->Sync();
	store->Seal();
	SetFaultPointForTesting("segment.unlink:1");
	EXPECT_EQ(RaisedCode([&] { store->RemoveSegmentFile(loc.segment_id); }), "io_error");
	EXPECT_EQ(FilesIn(dir).size(), 1u);
	EXPECT_GT(store->RemoveSegmentFile(loc.segment_id), 0u);
	EXPECT_TRUE(FilesIn(dir).empty());
	EXPECT_EQ(store->RemoveSegmentFile(loc.segment_id), 0u);
}

TEST_F(SegmentFaultsTest, OnlyTheNamedPassFails) {
	auto store = MakeStore();
	SetFaultPointForTesting("segment.record_write:3");
	Append(*store, Payload(5, 1));
	Append(*store, Payload(5, 2));
	EXPECT_EQ(RaisedCode([&] { Append(*store, Payload(5, 3)); }), "io_error");
	Append(*store, Payload(5, 4));
	Append(*store, Payload(5, 5));
}

TEST(LoggingTest, EventsReachOnlyTheInnermostScopeOfTheirThread) {
	CapturingSink outer, inner;
	LogEvent("nobody_listens", 1.0, "dropped");
	{
		LogScope a(&outer);
		LogEvent("first", 2.5, "to outer");
		{
			LogScope b(&inner);
			LogWarning("second", "to inner");
		}
		LogEvent("third", 0.5);
	}
	LogEvent("after", 1.0);
	ASSERT_EQ(outer.entries.size(), 2u);
	EXPECT_EQ(outer.entries[0].event, "first");
	EXPECT_EQ(outer.entries[0].duration_ms, 2.5);
	EXPECT_EQ(outer.entries[0].detail, "to outer");
	EXPECT_EQ(outer.entries[1].event, "third");
	ASSERT_EQ(inner.entries.size(), 1u);
	EXPECT_EQ(inner.entries[0].event, "second");
	EXPECT_EQ(inner.entries[0].level, LogLevel::WARNING);
	EXPECT_LT(inner.entries[0].duration_ms, 0);
}

TEST(LoggingTest, AThrowingSinkNeverFailsTheCaller) {
	struct Throwing : LogSink {
		bool Enabled(LogLevel) override {
			return true;
		}
		void Write(const LogEntry &) override {
			throw std::runtime_error("sink broke");
		}
	} sink;
	LogScope scope(&sink);
	EXPECT_NO_THROW(LogEvent("x", 1.0, "y"));
	EXPECT_NO_THROW(LogWarning("x", "y"));
}
