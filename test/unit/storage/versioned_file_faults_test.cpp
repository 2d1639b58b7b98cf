// The two kinds of VersionedFile under injected I/O faults: a failed write or sync changes neither the
// file as this process sees it nor what is published, and the next try succeeds.
#include "storage/versioned_file.hpp"

#include "common/fault_points.hpp"
#include "metadata/metadata_store.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/ranged_file.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

using namespace differential;
using differential::test::RaisedCode;
using differential::test::TempDir;

namespace {

using Bytes = std::vector<uint8_t>;

Bytes Filled(size_t size, uint8_t value) {
	return Bytes(size, value);
}

class VersionedFileFaultsTest : public ::testing::Test {
protected:
	void SetUp() override {
		root = temp.path;
		temp.Sub("segments");
		metadata = std::make_shared<MetadataStore>(root);
		storage = StorageOf(metadata);
		ASSERT_TRUE(metadata->history.EnsureDatabase("db"));
		main_file = ParseDiffPath(BranchPath(root, "db", "main"));
		wal_file = ParseDiffPath(BranchPath(root, "db", "main") + ".wal");
	}
	void TearDown() override {
		SetFaultPointForTesting("");
	}

	//! What another process would read: only what is published.
	Bytes Published(const FileAddress &address) {
		auto other = StorageOf(std::make_shared<MetadataStore>(root));
		auto file = VersionedFile::Open(address, other, false);
		if (!file->Load()) {
			return {};
		}
		Bytes out(file->Length());
		file->Read(out.data(), out.size(), 0);
		return out;
	}

	//! Storage over the store's file catalog, kept alive with the store.
	std::shared_ptr<RepositoryStorage> StorageOf(const std::shared_ptr<MetadataStore> &store) {
		return std::make_shared<RepositoryStorage>(root, std::shared_ptr<FileCatalog>(store, &store->files));
	}

	static Bytes ReadAll(VersionedFile &file) {
		Bytes out(file.Length());
		file.Read(out.data(), out.size(), 0);
		return out;
	}

	TempDir temp;
	std::string root;
	std::shared_ptr<MetadataStore> metadata;
	std::shared_ptr<RepositoryStorage> storage;
	FileAddress main_file, wal_file;
};

} // namespace

TEST_F(VersionedFileFaultsTest, AFailedWalAppendLeavesTheFileAsItWas) {
	auto wal = VersionedFile::Open(wal_file, storage, true);
	wal->CreateEmpty();
	auto first = Filled(1000, 1);
	wal->Write(first.data(), first.size(), 0);
	wal->Sync();
	// Over the inline limit: the append goes to a segment record, and that write fails.
	SetFaultPointForTesting("wal.range_write:1");
	auto second = Filled(INLINE_APPEND_LIMIT + 1, 2);
	EXPECT_EQ(RaisedCode([&] { wal->Write(second.data(), second.size(), 1000); }), "io_error");
	EXPECT_EQ(wal->Length(), 1000u);
	EXPECT_EQ(ReadAll(*wal), first);
	wal->Write(second.data(), second.size(), 1000);
	wal->Sync();
	auto both = first;
	both.insert(both.end(), second.begin(), second.end());
	EXPECT_EQ(Published(wal_file), both);
}

TEST_F(VersionedFileFaultsTest, AFailedSpillKeepsTheHeldBytes) {
	auto wal = VersionedFile::Open(wal_file, storage, true);
	wal->CreateEmpty();
	auto held = Filled(500, 1);
	wal->Write(held.data(), held.size(), 0);
	// The held bytes must go to a record before this append: that write fails, and they stay held.
	SetFaultPointForTesting("wal.range_write:1");
	auto large = Filled(INLINE_APPEND_LIMIT, 2);
	EXPECT_EQ(RaisedCode([&] { wal->Write(large.data(), large.size(), 500); }), "io_error");
	EXPECT_EQ(ReadAll(*wal), held);
	wal->Sync();
	EXPECT_EQ(Published(wal_file), held);
}

TEST_F(VersionedFileFaultsTest, AFailedSegmentSyncPublishesNothingAndTheRetryPublishes) {
	auto db = VersionedFile::Open(main_file, storage, true);
	db->CreateEmpty();
	auto v1 = Filled(FIRST_CHUNK_SIZE + CHUNK_SIZE, 3);
	db->Write(v1.data(), v1.size(), 0);
	db->Sync();
	auto block = Filled(CHUNK_SIZE, 4);
	db->Write(block.data(), block.size(), FIRST_CHUNK_SIZE);
	SetFaultPointForTesting("segment.fdatasync:1");
	EXPECT_EQ(RaisedCode([&] { db->Sync(); }), "io_error");
	EXPECT_TRUE(db->HasUnpublishedChanges());
	EXPECT_EQ(Published(main_file), v1);
	db->Sync();
	auto v2 = v1;
	std::copy(block.begin(), block.end(), v2.begin() + FIRST_CHUNK_SIZE);
	EXPECT_EQ(Published(main_file), v2);
}

TEST_F(VersionedFileFaultsTest, AFailedChunkWriteKeepsTheOldChunk) {
	auto db = VersionedFile::Open(main_file, storage, true);
	db->CreateEmpty();
	auto v1 = Filled(FIRST_CHUNK_SIZE, 5);
	db->Write(v1.data(), v1.size(), 0);
	SetFaultPointForTesting("segment.record_write:1");
	auto patch = Filled(100, 6);
	EXPECT_EQ(RaisedCode([&] { db->Write(patch.data(), patch.size(), 4096); }), "io_error");
	EXPECT_EQ(ReadAll(*db), v1);
	db->Sync();
	EXPECT_EQ(Published(main_file), v1);
}

TEST_F(VersionedFileFaultsTest, KindsFollowTheFileNameAndDoNotChangeOnRename) {
	auto db = VersionedFile::Open(main_file, storage, true);
	auto wal = VersionedFile::Open(wal_file, storage, true);
	auto header = Filled(100, 7);
	db->CreateEmpty();
	wal->CreateEmpty();
	db->Write(header.data(), header.size(), 0);
	wal->Write(header.data(), header.size(), 0);
	// Only a chunked file has chunks to trim.
	EXPECT_TRUE(db->Trim(0, FIRST_CHUNK_SIZE));
	EXPECT_FALSE(wal->Trim(0, 100));
	auto checkpoint_wal = ParseDiffPath(BranchPath(root, "db", "main") + ".wal.checkpoint");
	wal->Rename(checkpoint_wal);
	EXPECT_EQ(wal->Address().file_name, checkpoint_wal.file_name);
	EXPECT_EQ(RaisedCode([&] { wal->Rename(main_file); }), "invalid_path");
	EXPECT_EQ(RaisedCode([&] { db->Rename(wal_file); }), "invalid_path");
}
