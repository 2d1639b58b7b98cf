// VersionedFile on the real metadata store: writes, truncation, WAL ranges, Sync durability, dedup, O(change) sync.
#include "storage/versioned_file.hpp"

#include "metadata/metadata_store.hpp"
#include "metadata/sqlite.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/ranged_file.hpp"
#include "storage/segment_store.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <dirent.h>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace differential;
using differential::test::RaisedCode;
using differential::test::TempDir;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes Pattern(size_t size, uint32_t seed) {
	Bytes out(size);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < size; i++) {
		x = x * 1103515245u + 12345u;
		out[i] = static_cast<uint8_t>(x >> 16);
	}
	return out;
}

//! What one process holds: its metadata connection and its storage (segments, known chunks).
struct Process {
	std::shared_ptr<MetadataStore> metadata;
	std::shared_ptr<RepositoryStorage> storage;
};

class VersionedFileTest : public ::testing::Test {
protected:
	void SetUp() override {
		root = temp.path;
		temp.Sub("segments");
		process = Open();
		ASSERT_TRUE(process.metadata->history.EnsureDatabase("db"));
		main_file = ParseDiffPath(BranchPath(root, "db", "main"));
		wal_file = ParseDiffPath(BranchPath(root, "db", "main") + ".wal");
	}

	Process Open() {
		Process p;
		p.metadata = std::make_shared<MetadataStore>(root);
		p.storage =
		    std::make_shared<RepositoryStorage>(root, std::shared_ptr<FileCatalog>(p.metadata, &p.metadata->files));
		return p;
	}

	std::unique_ptr<VersionedFile> NewFile(const FileAddress &address, bool writable = true) {
		return VersionedFile::Open(address, process.storage, writable);
	}

	//! The file as a new process would see it: only what the catalog has published.
	std::unique_ptr<VersionedFile> LoadInNewProcess(const FileAddress &address, bool expect_exists = true) {
		reopened.push_back(Open());
		auto file = VersionedFile::Open(address, reopened.back().storage, false);
		EXPECT_EQ(file->Load(), expect_exists);
		return file;
	}

	//! Appends a pattern at the end of the file and of `expected`, as DuckDB streams a WAL.
	static void AppendPattern(VersionedFile &file, Bytes &expected, size_t size, uint32_t seed) {
		auto data = Pattern(size, seed);
		file.Write(data.data(), data.size(), expected.size());
		expected.insert(expected.end(), data.begin(), data.end());
	}

	static Bytes ReadAll(VersionedFile &file) {
		Bytes out(file.Length());
		EXPECT_EQ(file.Read(out.data(), out.size(), 0), out.size());
		return out;
	}

	static Bytes ReadRange(VersionedFile &file, uint64_t offset, uint64_t size) {
		Bytes out(size, 0xCD);
		out.resize(file.Read(out.data(), size, offset));
		return out;
	}

	//! Whole records in every segment file of the repository.
	size_t SegmentRecordCount() {
		size_t count = 0;
		auto dir = opendir((root + "/segments").c_str());
		EXPECT_NE(dir, nullptr);
		while (auto entry = readdir(dir)) {
			std::string name = entry->d_name;
			if (name.size() > 4 && name.substr(name.size() - 4) == ".seg") {
				auto scan = SegmentStore::Scan(root + "/segments/" + name);
				EXPECT_TRUE(scan.header_valid) << name;
				EXPECT_EQ(scan.torn_bytes, 0u) << name;
				count += scan.records.size();
			}
		}
		closedir(dir);
		return count;
	}

	int64_t CountRows(const std::string &table) {
		SqliteDatabase db(root + "/metadata.sqlite");
		auto stmt = db.Prepare("SELECT count(*) FROM " + table);
		EXPECT_TRUE(stmt.Step());
		return stmt.Int(0);
	}

	std::vector<Hash256> MainRootPages() {
		for (auto &r : process.metadata->accounting.LiveRoots()) {
			if (r.owner == "db branch main") {
				return r.pages;
			}
		}
		ADD_FAILURE() << "no root for db branch main";
		return {};
	}

	//! Writes a 12 KiB header and `blocks` distinct 256 KiB blocks, returning the expected content.
	Bytes WriteDatabase(VersionedFile &file, uint64_t blocks, uint32_t seed) {
		Bytes expected = Pattern(FIRST_CHUNK_SIZE, seed);
		file.Write(expected.data(), expected.size(), 0);
		for (uint64_t b = 1; b <= blocks; b++) {
			auto block = Pattern(CHUNK_SIZE, seed + static_cast<uint32_t>(b));
			file.Write(block.data(), block.size(), ChunkStart(b));
			expected.insert(expected.end(), block.begin(), block.end());
		}
		return expected;
	}

	TempDir temp;
	std::string root;
	Process process;
	std::vector<Process> reopened;
	FileAddress main_file;
	FileAddress wal_file;
};

} // namespace

TEST_F(VersionedFileTest, MissingFileDoesNotExist) {
	auto file = NewFile(main_file);
	EXPECT_FALSE(file->Load());
	EXPECT_FALSE(file->Exists());
	EXPECT_EQ(file->Length(), 0u);
	// A branch that does not exist has no files either.
	auto other = NewFile(ParseDiffPath(BranchPath(root, "db", "nope")));
	EXPECT_FALSE(other->Load());
}

TEST_F(VersionedFileTest, CreateEmptyPublishesAnEmptyFile) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	EXPECT_TRUE(file->Exists());
	EXPECT_TRUE(file->HasUnpublishedChanges());
	LoadInNewProcess(main_file, false);
	file->Sync();
	EXPECT_FALSE(file->HasUnpublishedChanges());
	auto loaded = LoadInNewProcess(main_file);
	EXPECT_TRUE(loaded->Exists());
	EXPECT_EQ(loaded->Length(), 0u);
	char byte;
	EXPECT_EQ(loaded->Read(&byte, 1, 0), 0u);
}

TEST_F(VersionedFileTest, WriteSyncReloadReadsIdenticalBytes) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto expected = WriteDatabase(*file, 5, 100);
	ASSERT_EQ(file->Length(), FIRST_CHUNK_SIZE + 5 * CHUNK_SIZE);
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();

	auto loaded = LoadInNewProcess(main_file);
	ASSERT_EQ(loaded->Length(), expected.size());
	EXPECT_EQ(ReadAll(*loaded), expected);
	// Unaligned reads across chunk boundaries.
	for (auto range : std::vector<std::pair<uint64_t, uint64_t>> {{0, 1},
	                                                              {12000, 1000},
	                                                              {ChunkStart(2) - 5, CHUNK_SIZE + 10},
	                                                              {ChunkStart(1) + 7, 3 * CHUNK_SIZE},
	                                                              {expected.size() - 3, 3}}) {
		auto got = ReadRange(*loaded, range.first, range.second);
		ASSERT_EQ(got.size(), range.second);
		EXPECT_TRUE(std::equal(got.begin(), got.end(), expected.begin() + static_cast<std::ptrdiff_t>(range.first)))
		    << "range at " << range.first;
	}
	// One record per chunk: a header chunk and five blocks.
	EXPECT_EQ(SegmentRecordCount(), 6u);
	EXPECT_EQ(process.metadata->accounting.AllChunks().size(), 6u);
	EXPECT_EQ(MainRootPages().size(), 1u);
}

TEST_F(VersionedFileTest, TrimTurnsWholeChunksIntoHoles) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto expected = WriteDatabase(*file, 5, 100);
	file->Sync();
	// Blocks 2 and 3 freed; the range also covers half of block 4, which must stay.
	EXPECT_TRUE(file->Trim(ChunkStart(2), 2 * CHUNK_SIZE + CHUNK_SIZE / 2));
	EXPECT_FALSE(file->Trim(ChunkStart(2), 2 * CHUNK_SIZE));
	file->Sync();
	std::fill(expected.begin() + static_cast<std::ptrdiff_t>(ChunkStart(2)),
	          expected.begin() + static_cast<std::ptrdiff_t>(ChunkStart(4)), 0);
	auto loaded = LoadInNewProcess(main_file);
	ASSERT_EQ(loaded->Length(), expected.size());
	EXPECT_EQ(ReadAll(*loaded), expected);
}

TEST_F(VersionedFileTest, HeaderWritesReadModifyWrite) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	// DuckDB writes its main header at 0 and alternates the database headers at 4096 and 8192.
	auto h0 = Pattern(4096, 1), h1 = Pattern(4096, 2), h2 = Pattern(4096, 3), h1b = Pattern(4096, 4);
	file->Write(h0.data(), 4096, 0);
	EXPECT_EQ(file->Length(), 4096u);
	file->Write(h1.data(), 4096, 4096);
	EXPECT_EQ(file->Length(), 8192u);
	file->Write(h2.data(), 4096, 8192);
	EXPECT_EQ(file->Length(), 12288u);
	Bytes expected;
	for (auto *h : {&h0, &h1, &h2}) {
		expected.insert(expected.end(), h->begin(), h->end());
	}
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);

	// Rewriting one header keeps the other two.
	file->Write(h1b.data(), 4096, 4096);
	std::copy(h1b.begin(), h1b.end(), expected.begin() + 4096);
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
}

TEST_F(VersionedFileTest, HeaderWritesOutOfOrderLeaveZeros) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto h2 = Pattern(4096, 3);
	file->Write(h2.data(), 4096, 8192);
	EXPECT_EQ(file->Length(), 12288u);
	Bytes expected(8192, 0);
	expected.insert(expected.end(), h2.begin(), h2.end());
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
}

TEST_F(VersionedFileTest, PartialWritesInsideAndAcrossBlocks) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto expected = WriteDatabase(*file, 3, 10);
	file->Sync();

	auto small = Pattern(100, 77);
	file->Write(small.data(), small.size(), ChunkStart(2) + 1000);
	std::copy(small.begin(), small.end(), expected.begin() + static_cast<std::ptrdiff_t>(ChunkStart(2) + 1000));
	auto straddle = Pattern(5000, 78);
	auto at = ChunkStart(3) - 2500;
	file->Write(straddle.data(), straddle.size(), at);
	std::copy(straddle.begin(), straddle.end(), expected.begin() + static_cast<std::ptrdiff_t>(at));
	EXPECT_EQ(file->Length(), expected.size());
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
}

TEST_F(VersionedFileTest, WritesPastTheEndLeaveHoles) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto header = Pattern(FIRST_CHUNK_SIZE, 1);
	file->Write(header.data(), header.size(), 0);
	auto block = Pattern(CHUNK_SIZE, 2);
	file->Write(block.data(), block.size(), ChunkStart(4));
	Bytes expected = header;
	expected.resize(ChunkStart(4), 0);
	expected.insert(expected.end(), block.begin(), block.end());
	EXPECT_EQ(file->Length(), expected.size());
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
	// Holes are not stored.
	EXPECT_EQ(process.metadata->accounting.AllChunks().size(), 2u);
}

TEST_F(VersionedFileTest, TruncateShrinksAndReadsPastTheEndAreShort) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto expected = WriteDatabase(*file, 3, 20);
	file->Sync();

	auto cut = ChunkStart(2) + 1000;
	file->Truncate(cut);
	expected.resize(cut);
	EXPECT_EQ(file->Length(), cut);
	EXPECT_EQ(ReadAll(*file), expected);
	auto tail = ReadRange(*file, ChunkStart(1), 2 * CHUNK_SIZE);
	EXPECT_EQ(tail.size(), CHUNK_SIZE + 1000);
	EXPECT_EQ(ReadRange(*file, cut, 10).size(), 0u);
	EXPECT_EQ(ReadRange(*file, cut + 12345678, 10).size(), 0u);
	EXPECT_EQ(ReadRange(*file, cut - 1, 10).size(), 1u);
	file->Sync();

	auto loaded = LoadInNewProcess(main_file);
	EXPECT_EQ(loaded->Length(), cut);
	EXPECT_EQ(ReadAll(*loaded), expected);
	EXPECT_EQ(ReadRange(*loaded, cut - 500, 1000).size(), 500u);

	// Growing again must not bring the cut bytes back: they read as zeros.
	auto block = Pattern(CHUNK_SIZE, 99);
	file->Write(block.data(), block.size(), ChunkStart(3));
	expected.resize(ChunkStart(3), 0);
	expected.insert(expected.end(), block.begin(), block.end());
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);

	// Into the header chunk, and to nothing.
	file->Truncate(5000);
	expected.resize(5000);
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
	file->Truncate(0);
	file->Sync();
	auto empty = LoadInNewProcess(main_file);
	EXPECT_EQ(empty->Length(), 0u);
	EXPECT_TRUE(MainRootPages().empty());
}

TEST_F(VersionedFileTest, TruncateCanGrowWithZeros) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto header = Pattern(1000, 5);
	file->Write(header.data(), header.size(), 0);
	file->Truncate(ChunkStart(2) + 10);
	Bytes expected = header;
	expected.resize(ChunkStart(2) + 10, 0);
	EXPECT_EQ(file->Length(), expected.size());
	EXPECT_EQ(ReadAll(*file), expected);
	file->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
}

TEST_F(VersionedFileTest, WalAppendsTruncateOverwriteReload) {
	auto wal = NewFile(wal_file);
	wal->CreateEmpty();
	Bytes expected;
	auto append = [&](size_t size, uint32_t seed) {
		AppendPattern(*wal, expected, size, seed);
	};
	append(100, 1);
	append(5000, 2);
	append(70000, 3);
	EXPECT_EQ(wal->Length(), expected.size());
	EXPECT_EQ(ReadAll(*wal), expected);
	wal->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(wal_file)), expected);
	// Appends store only the appended bytes. The first two waited in memory (small); the third outgrew the
	// inline limit, so they went to a record of their own first, then the third to its own.
	EXPECT_EQ(SegmentRecordCount(), 2u);
	EXPECT_EQ(process.metadata->accounting.AllExtents().size(), 2u);

	append(3000, 4);
	// Truncate into the middle of the second extent, then append again.
	expected.resize(100 + 2500);
	wal->Truncate(expected.size());
	EXPECT_EQ(wal->Length(), expected.size());
	EXPECT_EQ(ReadAll(*wal), expected);
	append(4444, 5);
	// Overwrite a span in the middle, keeping what follows it.
	auto patch = Pattern(300, 6);
	wal->Write(patch.data(), patch.size(), 2000);
	std::copy(patch.begin(), patch.end(), expected.begin() + 2000);
	// Overwrite that runs past the end.
	auto over = Pattern(1000, 7);
	auto over_at = expected.size() - 200;
	wal->Write(over.data(), over.size(), over_at);
	expected.resize(over_at);
	expected.insert(expected.end(), over.begin(), over.end());
	// Write after a gap.
	auto gap = Pattern(10, 8);
	wal->Write(gap.data(), gap.size(), expected.size() + 50);
	expected.resize(expected.size() + 50, 0);
	expected.insert(expected.end(), gap.begin(), gap.end());

	EXPECT_EQ(wal->Length(), expected.size());
	EXPECT_EQ(ReadAll(*wal), expected);
	wal->Sync();
	auto loaded = LoadInNewProcess(wal_file);
	EXPECT_EQ(loaded->Length(), expected.size());
	EXPECT_EQ(ReadAll(*loaded), expected);
	auto mid = ReadRange(*loaded, 95, 10);
	EXPECT_TRUE(std::equal(mid.begin(), mid.end(), expected.begin() + 95));
	// Only the file's current extents are published (stale ones were replaced).
	uint64_t published = 0;
	for (auto &e : process.metadata->accounting.AllExtents()) {
		EXPECT_EQ(e.first, "db branch main database.duckdb.wal");
		published += e.second.location.length;
	}
	EXPECT_EQ(published, expected.size());

	// Checkpoint: the WAL is truncated to nothing.
	wal->Truncate(0);
	wal->Sync();
	EXPECT_EQ(LoadInNewProcess(wal_file)->Length(), 0u);
	EXPECT_TRUE(process.metadata->accounting.AllExtents().empty());
}

TEST_F(VersionedFileTest, SmallWalAppendsArePublishedInlineWithoutASegmentRecord) {
	auto wal = NewFile(wal_file);
	wal->CreateEmpty();
	Bytes expected;
	auto append = [&](size_t size, uint32_t seed) {
		AppendPattern(*wal, expected, size, seed);
	};
	// Two commits of small appends: each publication is one inline extent, and no segment exists at all.
	append(150, 1);
	append(40, 2);
	wal->Sync();
	append(INLINE_APPEND_LIMIT, 3);
	EXPECT_FALSE(LoadInNewProcess(wal_file)->Length() == expected.size());
	wal->Sync();
	EXPECT_EQ(SegmentRecordCount(), 0u);
	auto extents = process.metadata->accounting.AllExtents();
	ASSERT_EQ(extents.size(), 2u);
	EXPECT_TRUE(extents[0].second.IsInline() && extents[1].second.IsInline());
	EXPECT_EQ(ReadAll(*LoadInNewProcess(wal_file)), expected);

	// One byte over the limit since the last publication: the held bytes and every later append of this
	// publication go to records, which the sync flushes.
	append(INLINE_APPEND_LIMIT - 10, 4);
	append(11, 5);
	append(7, 6);
	EXPECT_EQ(SegmentRecordCount(), 3u);
	EXPECT_EQ(ReadAll(*wal), expected);
	wal->Sync();
	EXPECT_EQ(ReadAll(*LoadInNewProcess(wal_file)), expected);
	EXPECT_EQ(process.metadata->accounting.AllExtents().size(), 5u);

	// After that publication, small appends are held in memory again; a truncate cuts them there.
	append(300, 7);
	wal->Truncate(expected.size() - 100);
	expected.resize(expected.size() - 100);
	EXPECT_EQ(ReadAll(*wal), expected);
	wal->Sync();
	EXPECT_EQ(SegmentRecordCount(), 3u);
	EXPECT_EQ(ReadAll(*LoadInNewProcess(wal_file)), expected);
	auto last = process.metadata->accounting.AllExtents();
	ASSERT_EQ(last.size(), 6u);
	EXPECT_TRUE(std::any_of(last.begin(), last.end(), [](const std::pair<std::string, RangeExtent> &e) {
		return e.second.location.length == 200;
	}));
}

TEST_F(VersionedFileTest, UnsyncedWritesAreNotVisibleToOtherProcesses) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto header = Pattern(FIRST_CHUNK_SIZE, 1);
	file->Write(header.data(), header.size(), 0);
	// Never synced: a new process does not even see the file.
	LoadInNewProcess(main_file, false);
	file->Sync();
	auto synced = ReadAll(*file);

	auto block = Pattern(CHUNK_SIZE, 2);
	file->Write(block.data(), block.size(), ChunkStart(1));
	auto new_header = Pattern(4096, 3);
	file->Write(new_header.data(), new_header.size(), 4096);
	EXPECT_TRUE(file->HasUnpublishedChanges());
	auto loaded = LoadInNewProcess(main_file);
	EXPECT_EQ(loaded->Length(), FIRST_CHUNK_SIZE);
	EXPECT_EQ(ReadAll(*loaded), synced);
	// Another file object of this very process, loading from the catalog, sees only the published state too.
	auto sibling = NewFile(main_file, false);
	ASSERT_TRUE(sibling->Load());
	EXPECT_EQ(ReadAll(*sibling), synced);

	auto wal = NewFile(wal_file);
	wal->CreateEmpty();
	auto entry = Pattern(500, 4);
	wal->Write(entry.data(), entry.size(), 0);
	wal->Sync();
	wal->Write(entry.data(), entry.size(), 500);
	EXPECT_EQ(LoadInNewProcess(wal_file)->Length(), 500u);

	file->Sync();
	wal->Sync();
	EXPECT_EQ(LoadInNewProcess(main_file)->Length(), ChunkStart(2));
	EXPECT_EQ(LoadInNewProcess(wal_file)->Length(), 1000u);
}

TEST_F(VersionedFileTest, IdenticalChunksAreStoredOnce) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto header = Pattern(FIRST_CHUNK_SIZE, 1);
	file->Write(header.data(), header.size(), 0);
	auto block = Pattern(CHUNK_SIZE, 2);
	for (uint64_t b = 1; b <= 8; b++) {
		file->Write(block.data(), block.size(), ChunkStart(b));
	}
	file->Sync();
	EXPECT_EQ(SegmentRecordCount(), 2u);
	EXPECT_EQ(process.metadata->accounting.AllChunks().size(), 2u);
	auto loaded = LoadInNewProcess(main_file);
	for (uint64_t b = 1; b <= 8; b++) {
		EXPECT_EQ(ReadRange(*loaded, ChunkStart(b), CHUNK_SIZE), block) << "block " << b;
	}

	// The same content in another database of the repository is not stored again either.
	ASSERT_TRUE(process.metadata->history.EnsureDatabase("db2"));
	auto other = NewFile(ParseDiffPath(BranchPath(root, "db2", "main")));
	other->CreateEmpty();
	other->Write(header.data(), header.size(), 0);
	other->Write(block.data(), block.size(), ChunkStart(1));
	other->Sync();
	EXPECT_EQ(SegmentRecordCount(), 2u);
	EXPECT_EQ(process.metadata->accounting.AllChunks().size(), 2u);

	// A new process dedups only against what it appended itself (those segments are safe from cleanup
	// while it runs): writing a block that exists elsewhere stores one more record, but the content keeps
	// one identity, and the extra record is garbage for the next cleanup.
	auto writer_process = Open();
	auto again = VersionedFile::Open(main_file, writer_process.storage, true);
	ASSERT_TRUE(again->Load());
	again->Write(block.data(), block.size(), ChunkStart(9));
	again->Write(block.data(), block.size(), ChunkStart(10));
	again->Sync();
	EXPECT_EQ(SegmentRecordCount(), 3u);
	EXPECT_EQ(process.metadata->accounting.AllChunks().size(), 2u);
	EXPECT_EQ(ReadRange(*LoadInNewProcess(main_file), ChunkStart(9), CHUNK_SIZE), block);
}

TEST_F(VersionedFileTest, ChangingOneBlockPublishesOnePageAndOneChunk) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto expected = WriteDatabase(*file, 6, 30);
	file->Sync();
	auto chunks_before = process.metadata->accounting.AllChunks().size();
	auto pages_before = CountRows("index_pages");
	auto roots_before = CountRows("roots");
	auto records_before = SegmentRecordCount();
	auto root_before = MainRootPages();
	ASSERT_EQ(chunks_before, 7u);
	ASSERT_EQ(root_before.size(), 1u);

	auto block = Pattern(CHUNK_SIZE, 999);
	file->Write(block.data(), block.size(), ChunkStart(4));
	file->Sync();
	EXPECT_EQ(process.metadata->accounting.AllChunks().size(), chunks_before + 1);
	EXPECT_EQ(CountRows("index_pages"), pages_before + 1);
	EXPECT_EQ(CountRows("roots"), roots_before + 1);
	EXPECT_EQ(SegmentRecordCount(), records_before + 1);
	auto root_after = MainRootPages();
	ASSERT_EQ(root_after.size(), 1u);
	EXPECT_NE(root_after[0], root_before[0]);
	EXPECT_TRUE(process.metadata->accounting.HasIndexPage(root_before[0]));
	EXPECT_TRUE(process.metadata->accounting.HasChunk(Sha256(block.data(), block.size())));

	// A sync with nothing changed publishes nothing.
	file->Sync();
	EXPECT_EQ(CountRows("roots"), roots_before + 1);

	std::copy(block.begin(), block.end(), expected.begin() + static_cast<std::ptrdiff_t>(ChunkStart(4)));
	EXPECT_EQ(ReadAll(*LoadInNewProcess(main_file)), expected);
}

TEST_F(VersionedFileTest, OnlyTouchedIndexPagesAreRewritten) {
	// A sparse file spanning two index pages: chunk 10 lives in page 0, chunk 5000 in page 1.
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto header = Pattern(FIRST_CHUNK_SIZE, 1);
	auto low = Pattern(CHUNK_SIZE, 2);
	auto high = Pattern(CHUNK_SIZE, 3);
	file->Write(header.data(), header.size(), 0);
	file->Write(low.data(), low.size(), ChunkStart(10));
	file->Write(high.data(), high.size(), ChunkStart(5000));
	file->Sync();
	auto before = MainRootPages();
	ASSERT_EQ(before.size(), 2u);
	auto pages_before = CountRows("index_pages");
	EXPECT_EQ(pages_before, 2);

	auto high2 = Pattern(CHUNK_SIZE, 4);
	file->Write(high2.data(), high2.size(), ChunkStart(5000));
	file->Sync();
	auto after = MainRootPages();
	ASSERT_EQ(after.size(), 2u);
	EXPECT_EQ(after[0], before[0]);
	EXPECT_NE(after[1], before[1]);
	EXPECT_EQ(CountRows("index_pages"), pages_before + 1);

	auto loaded = LoadInNewProcess(main_file);
	EXPECT_EQ(loaded->Length(), ChunkStart(5001));
	EXPECT_EQ(ReadRange(*loaded, 0, FIRST_CHUNK_SIZE), header);
	EXPECT_EQ(ReadRange(*loaded, ChunkStart(10), CHUNK_SIZE), low);
	EXPECT_EQ(ReadRange(*loaded, ChunkStart(5000), CHUNK_SIZE), high2);
	EXPECT_EQ(ReadRange(*loaded, ChunkStart(4000), 16), Bytes(16, 0));

	// Truncating back into page 0 drops page 1 from the root.
	file->Truncate(ChunkStart(11));
	file->Sync();
	auto truncated = MainRootPages();
	ASSERT_EQ(truncated.size(), 1u);
	EXPECT_EQ(truncated[0], before[0]);
	EXPECT_EQ(ReadRange(*LoadInNewProcess(main_file), ChunkStart(10), CHUNK_SIZE), low);
}

TEST_F(VersionedFileTest, APageOfHolesIsPublished) {
	// Nothing written below chunk 5000: index page 0 is all holes and encodes to an empty blob.
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto block = Pattern(CHUNK_SIZE, 5);
	file->Write(block.data(), block.size(), ChunkStart(5000));
	file->Sync();
	auto pages = MainRootPages();
	ASSERT_EQ(pages.size(), 2u);
	EXPECT_EQ(pages[0], Sha256(nullptr, 0));
	EXPECT_TRUE(process.metadata->files.LoadIndexPage(pages[0]).empty());
	auto loaded = LoadInNewProcess(main_file);
	EXPECT_EQ(loaded->Length(), ChunkStart(5001));
	EXPECT_EQ(ReadRange(*loaded, 0, FIRST_CHUNK_SIZE), Bytes(FIRST_CHUNK_SIZE, 0));
	EXPECT_EQ(ReadRange(*loaded, ChunkStart(5000), CHUNK_SIZE), block);
}

TEST_F(VersionedFileTest, CorruptChunkIsNotReturned) {
	auto file = NewFile(main_file);
	file->CreateEmpty();
	auto expected = WriteDatabase(*file, 2, 40);
	file->Sync();
	ChunkLocation target;
	auto wanted = Sha256(expected.data() + ChunkStart(2), CHUNK_SIZE);
	for (auto &row : process.metadata->accounting.AllChunks()) {
		if (row.hash == wanted) {
			target = row.location;
		}
	}
	ASSERT_GT(target.length, 0u);
	auto path = SegmentStore::SegmentPath(root + "/segments", target.segment_id);
	FILE *f = fopen(path.c_str(), "r+b");
	ASSERT_NE(f, nullptr);
	fseek(f, static_cast<long>(target.offset + 10), SEEK_SET);
	fputc(expected[ChunkStart(2) + 10] ^ 0xFF, f);
	fclose(f);

	auto loaded = LoadInNewProcess(main_file);
	Bytes out(100);
	EXPECT_EQ(RaisedCode([&] { loaded->Read(out.data(), out.size(), ChunkStart(2)); }), "corrupt_chunk");
	// Other chunks still read.
	EXPECT_EQ(ReadRange(*loaded, ChunkStart(1), 100),
	          Bytes(expected.begin() + ChunkStart(1), expected.begin() + ChunkStart(1) + 100));
}

TEST_F(VersionedFileTest, ReadOnlyFilesRefuseToPublish) {
	auto file = NewFile(main_file, false);
	file->CreateEmpty();
	auto header = Pattern(100, 1);
	file->Write(header.data(), header.size(), 0);
	EXPECT_EQ(RaisedCode([&] { file->Sync(); }), "read_only");
	LoadInNewProcess(main_file, false);

	auto snapshot = NewFile(ParseDiffPath(SnapshotPath(root, "db", 1)), true);
	snapshot->CreateEmpty();
	snapshot->Write(header.data(), header.size(), 0);
	EXPECT_EQ(RaisedCode([&] { snapshot->Sync(); }), "read_only");
}

TEST_F(VersionedFileTest, PublishingToAMissingBranchFails) {
	auto file = NewFile(ParseDiffPath(BranchPath(root, "db", "ghost")));
	file->CreateEmpty();
	auto header = Pattern(100, 1);
	file->Write(header.data(), header.size(), 0);
	EXPECT_EQ(RaisedCode([&] { file->Sync(); }), "branch_not_found");
}

namespace {

//! Random writes, truncations, syncs and reloads against an in-memory model of the file.
void RunModelCheck(const std::function<std::unique_ptr<VersionedFile>()> &new_file,
                   const std::function<std::unique_ptr<VersionedFile>()> &load_fresh, bool appends_mostly,
                   uint32_t seed) {
	std::mt19937 rng(seed);
	auto pick = [&](uint64_t lo, uint64_t hi) {
		return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
	};
	const uint64_t max_size = ChunkStart(6) + 1000;
	auto file = new_file();
	file->CreateEmpty();
	Bytes model;
	for (int step = 0; step < 150; step++) {
		auto op = pick(0, 99);
		if (op < 60) {
			uint64_t offset, size;
			if (appends_mostly && op < 45) {
				offset = model.size();
				size = pick(1, 20000);
			} else if (op < 20) {
				auto k = pick(0, 5);
				offset = ChunkStart(k);
				size = ChunkCapacity(k);
			} else if (op < 30) {
				offset = pick(0, 2) * 4096;
				size = 4096;
			} else {
				offset = pick(0, std::min<uint64_t>(model.size() + 20000, max_size));
				size = pick(1, 70000);
			}
			auto data = Pattern(size, static_cast<uint32_t>(pick(0, 3) == 0 ? 7 : step + seed));
			file->Write(data.data(), size, offset);
			if (model.size() < offset + size) {
				model.resize(offset + size, 0);
			}
			std::copy(data.begin(), data.end(), model.begin() + static_cast<std::ptrdiff_t>(offset));
		} else if (op < 75) {
			auto length = pick(0, model.size() + (pick(0, 4) == 0 ? 5000 : 0));
			file->Truncate(length);
			model.resize(length, 0);
		} else if (op < 90) {
			file->Sync();
			auto fresh = load_fresh();
			ASSERT_EQ(fresh->Length(), model.size()) << "step " << step;
			Bytes all(model.size());
			ASSERT_EQ(fresh->Read(all.data(), all.size(), 0), model.size());
			ASSERT_TRUE(all == model) << "reloaded content differs at step " << step;
			if (pick(0, 1) == 0) {
				// Carry on writing through a file loaded from the catalog.
				file = new_file();
				ASSERT_TRUE(file->Load());
			}
		}
		ASSERT_EQ(file->Length(), model.size()) << "step " << step;
		auto offset = pick(0, model.size() + 10);
		auto size = pick(0, 300000);
		Bytes got(size);
		auto n = file->Read(got.data(), size, offset);
		auto expected_n = offset >= model.size() ? 0 : std::min<uint64_t>(size, model.size() - offset);
		ASSERT_EQ(n, expected_n) << "step " << step;
		ASSERT_TRUE(std::equal(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(n),
		                       model.begin() + static_cast<std::ptrdiff_t>(std::min<uint64_t>(offset, model.size()))))
		    << "read differs at step " << step;
	}
}

} // namespace

TEST_F(VersionedFileTest, RandomOperationsMatchAModelChunked) {
	RunModelCheck([&]() { return NewFile(main_file); }, [&]() { return LoadInNewProcess(main_file); }, false, 1);
}

TEST_F(VersionedFileTest, RandomOperationsMatchAModelRanged) {
	RunModelCheck([&]() { return NewFile(wal_file); }, [&]() { return LoadInNewProcess(wal_file); }, true, 2);
}
