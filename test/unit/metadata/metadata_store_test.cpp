// The SQLite metadata store: schema migration, reopening, databases, branches, snapshots and the file catalog.
#include "metadata/metadata_store.hpp"
#include "metadata/sqlite.hpp"

#include "storage/index_page.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace differential;
using differential::test::RaisedCode;
using differential::test::TempDir;

namespace {

class MetadataStoreTest : public ::testing::Test {
protected:
	void SetUp() override {
		root = temp.path;
		store = std::make_unique<MetadataStore>(root);
	}

	FileAddress File(const std::string &database, const std::string &branch,
	                 const std::string &file_name = MAIN_FILE_NAME) {
		FileAddress a;
		a.repository = root;
		a.database = database;
		a.branch = branch;
		a.file_name = file_name;
		return a;
	}

	FileAddress SnapshotFile(const std::string &database, int64_t snapshot_id) {
		FileAddress a;
		a.repository = root;
		a.database = database;
		a.snapshot_id = snapshot_id;
		a.file_name = MAIN_FILE_NAME;
		return a;
	}

	//! Publishes a one-page main file whose only chunk is `content`, as a sync would.
	Hash256 PublishMain(const std::string &database, const std::string &branch, const std::string &content) {
		NewChunk chunk;
		chunk.hash = Sha256(content.data(), content.size());
		chunk.location.segment_id = 1;
		chunk.location.offset = 112;
		chunk.location.length = static_cast<uint32_t>(content.size());
		chunk.location.crc32c = Crc32c(content.data(), content.size());
		NewIndexPage page;
		page.slots = EncodeIndexPage({chunk.hash});
		page.hash = Sha256(page.slots.data(), page.slots.size());
		PublishedState state;
		store->files.PublishChunked(File(database, branch), state, content.size(), {page.hash}, {page}, {chunk},
		                            FilePin());
		return page.hash;
	}

	void PublishWal(const std::string &database, const std::string &branch, uint32_t length) {
		std::vector<RangeExtent> extents;
		if (length > 0) {
			RangeExtent extent;
			extent.location.segment_id = 1;
			extent.location.offset = 112;
			extent.location.length = length;
			extents.push_back(extent);
		}
		// The state a writer's handle keeps: what it published before is what a shorter WAL now replaces.
		auto &state = wal_states[database + "/" + branch];
		store->files.PublishRanged(File(database, branch, std::string(MAIN_FILE_NAME) + ".wal"), state, 0, extents);
	}
	std::map<std::string, PublishedState> wal_states;

	SnapshotRecord Snapshot(const std::string &database, const std::string &branch,
	                        std::optional<std::string> name = std::nullopt) {
		SnapshotRequest req;
		req.name = std::move(name);
		return store->history.CreateSnapshot(database, branch, req);
	}

	std::string Meta(const std::string &key) {
		SqliteDatabase db(root + "/metadata.sqlite");
		auto stmt = db.Prepare("SELECT value FROM repository_meta WHERE key = ?");
		stmt.Bind(1, key);
		return stmt.Step() ? stmt.Text(0) : "<missing>";
	}

	TempDir temp;
	std::string root;
	std::unique_ptr<MetadataStore> store;
};

} // namespace

TEST_F(MetadataStoreTest, MigrationCreatesTheSchema) {
	SqliteDatabase db(root + "/metadata.sqlite");
	for (auto table : {"repository_meta", "databases", "branches", "segments", "chunks", "index_pages", "roots",
	                   "branch_files", "file_extents", "snapshots", "snapshot_parents"}) {
		auto stmt = db.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
		stmt.Bind(1, std::string(table));
		ASSERT_TRUE(stmt.Step());
		EXPECT_EQ(stmt.Int(0), 1) << table;
	}
	EXPECT_EQ(Meta("schema_version"), std::to_string(METADATA_SCHEMA_VERSION));
	EXPECT_EQ(Meta("store_format"), std::to_string(STORE_FORMAT_VERSION));
	EXPECT_EQ(Meta("repository_uuid").size(), 36u);
	auto mode = db.Prepare("PRAGMA journal_mode");
	ASSERT_TRUE(mode.Step());
	EXPECT_EQ(mode.Text(0), "wal");
	EXPECT_TRUE(store->history.ListDatabases().empty());
}

TEST_F(MetadataStoreTest, ReopeningKeepsEverything) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	PublishMain("db", "main", "hello");
	auto snap = Snapshot("db", "main", std::string("first"));
	auto uuid = store->history.FindDatabase("db")->uuid;
	auto repository_uuid = Meta("repository_uuid");
	store.reset();

	store = std::make_unique<MetadataStore>(root);
	EXPECT_FALSE(store->history.EnsureDatabase("db"));
	auto database = store->history.FindDatabase("db", true);
	ASSERT_TRUE(database.has_value());
	EXPECT_EQ(database->uuid, uuid);
	EXPECT_EQ(database->branch_count, 1);
	EXPECT_EQ(database->snapshot_count, 1);
	EXPECT_EQ(Meta("repository_uuid"), repository_uuid);
	EXPECT_EQ(Meta("schema_version"), std::to_string(METADATA_SCHEMA_VERSION));
	auto found = store->history.FindSnapshot("db", snap.snapshot_id);
	ASSERT_TRUE(found.has_value());
	EXPECT_EQ(found->name, "first");
	StoredFile file;
	ASSERT_TRUE(store->files.LoadFile(File("db", "main"), file));
	EXPECT_EQ(file.length, 5u);
	// Ids keep counting after a reopen.
	EXPECT_EQ(Snapshot("db", "main").snapshot_id, 2);
}

TEST_F(MetadataStoreTest, TwoConnectionsShareOneRepository) {
	MetadataStore second(root);
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	EXPECT_FALSE(second.history.EnsureDatabase("db"));
	PublishMain("db", "main", "abc");
	StoredFile file;
	ASSERT_TRUE(second.files.LoadFile(File("db", "main"), file));
	EXPECT_EQ(file.length, 3u);
	auto first_id = store->files.AllocateSegment();
	auto second_id = second.files.AllocateSegment();
	EXPECT_EQ(second_id, first_id + 1);
}

TEST_F(MetadataStoreTest, NewerSchemaIsRefused) {
	store.reset();
	{
		SqliteDatabase db(root + "/metadata.sqlite");
		db.Execute("UPDATE repository_meta SET value = '99' WHERE key = 'schema_version'");
	}
	EXPECT_EQ(RaisedCode([&] { MetadataStore reopened(root); }), "unsupported_format");
	{
		SqliteDatabase db(root + "/metadata.sqlite");
		db.Execute("UPDATE repository_meta SET value = '" + std::to_string(METADATA_SCHEMA_VERSION) +
		           "' WHERE key = 'schema_version'");
		db.Execute("UPDATE repository_meta SET value = '2' WHERE key = 'store_format'");
	}
	EXPECT_EQ(RaisedCode([&] { MetadataStore reopened(root); }), "unsupported_format");
	{
		SqliteDatabase db(root + "/metadata.sqlite");
		db.Execute("UPDATE repository_meta SET value = '1' WHERE key = 'store_format'");
	}
	EXPECT_NO_THROW(MetadataStore reopened(root));
}

TEST_F(MetadataStoreTest, MissingRepositoryDirectoryFails) {
	EXPECT_EQ(RaisedCode([&] { MetadataStore missing(root + "/does/not/exist"); }), "metadata_error");
}

TEST_F(MetadataStoreTest, EnsureDatabaseCreatesMainBranch) {
	EXPECT_TRUE(store->history.EnsureDatabase("db"));
	EXPECT_FALSE(store->history.EnsureDatabase("db"));
	EXPECT_TRUE(store->history.EnsureDatabase("another"));
	auto databases = store->history.ListDatabases();
	ASSERT_EQ(databases.size(), 2u);
	EXPECT_EQ(databases[0].name, "another");
	EXPECT_EQ(databases[1].name, "db");
	EXPECT_NE(databases[0].uuid, databases[1].uuid);
	auto branches = store->history.ListBranches("db");
	ASSERT_EQ(branches.size(), 1u);
	EXPECT_EQ(branches[0].name, "main");
	EXPECT_EQ(branches[0].base_snapshot_id, std::nullopt);
	EXPECT_EQ(branches[0].head_snapshot_id, std::nullopt);
	EXPECT_TRUE(store->history.FindBranch("db", "main").has_value());
	EXPECT_FALSE(store->history.FindBranch("db", "dev").has_value());
	EXPECT_FALSE(store->history.FindBranch("nope", "main").has_value());
	EXPECT_FALSE(store->history.FindDatabase("nope").has_value());
	EXPECT_EQ(RaisedCode([&] { store->history.ListBranches("nope"); }), "database_not_found");
	// A database exists without any stored file until its first sync.
	StoredFile file;
	EXPECT_FALSE(store->files.LoadFile(File("db", "main"), file));
}

TEST_F(MetadataStoreTest, SnapshotIdsCountPerDatabaseAcrossBranches) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	ASSERT_TRUE(store->history.EnsureDatabase("other"));
	PublishMain("db", "main", "v1");
	auto s1 = Snapshot("db", "main");
	EXPECT_EQ(s1.snapshot_id, 1);
	EXPECT_TRUE(s1.parents.empty());
	EXPECT_EQ(s1.branch_name, "main");

	auto dev = store->history.CreateBranch("db", "dev", 1);
	EXPECT_EQ(dev.name, "dev");
	EXPECT_EQ(dev.base_snapshot_id, 1);
	EXPECT_EQ(dev.head_snapshot_id, 1);

	PublishMain("db", "dev", "v2 on dev");
	auto s2 = Snapshot("db", "dev");
	EXPECT_EQ(s2.snapshot_id, 2);
	EXPECT_EQ(s2.branch_name, "dev");
	EXPECT_EQ(s2.parents, std::vector<int64_t> {1});

	PublishMain("db", "main", "v3 on main");
	auto s3 = Snapshot("db", "main");
	EXPECT_EQ(s3.snapshot_id, 3);
	EXPECT_EQ(s3.parents, std::vector<int64_t> {1});

	// Another database counts on its own.
	PublishMain("other", "main", "x");
	EXPECT_EQ(Snapshot("other", "main").snapshot_id, 1);
	EXPECT_EQ(Snapshot("other", "main").snapshot_id, 2);
	EXPECT_EQ(Snapshot("db", "dev").snapshot_id, 4);

	auto listed = store->history.ListSnapshots("db");
	ASSERT_EQ(listed.size(), 4u);
	for (size_t i = 0; i < listed.size(); i++) {
		EXPECT_EQ(listed[i].snapshot_id, static_cast<int64_t>(i + 1));
	}
	EXPECT_EQ(listed[1].branch_name, "dev");
	EXPECT_EQ(listed[3].parents, std::vector<int64_t> {2});
	EXPECT_EQ(store->history.FindBranch("db", "main")->head_snapshot_id, 3);
	EXPECT_EQ(store->history.FindBranch("db", "dev")->head_snapshot_id, 4);
	EXPECT_EQ(store->history.LatestSnapshot("db")->snapshot_id, 3);
	EXPECT_EQ(store->history.FindDatabase("db", true)->snapshot_count, 4);
	EXPECT_EQ(store->history.FindDatabase("db", true)->branch_count, 2);

	// Each snapshot keeps the root it was taken from.
	StoredFile file;
	ASSERT_TRUE(store->files.LoadFile(SnapshotFile("db", 1), file));
	EXPECT_EQ(file.length, 2u);
	ASSERT_TRUE(store->files.LoadFile(SnapshotFile("db", 2), file));
	EXPECT_EQ(file.length, 9u);
	ASSERT_TRUE(store->files.LoadFile(SnapshotFile("db", 3), file));
	EXPECT_EQ(file.length, 10u);
	EXPECT_FALSE(store->files.LoadFile(SnapshotFile("db", 99), file));
	EXPECT_FALSE(store->files.LoadFile(SnapshotFile("nope", 1), file));
	auto wal = SnapshotFile("db", 1);
	wal.file_name = std::string(MAIN_FILE_NAME) + ".wal";
	EXPECT_FALSE(store->files.LoadFile(wal, file));
}

TEST_F(MetadataStoreTest, CreateBranchStartsFromTheSnapshotRoot) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	auto page = PublishMain("db", "main", "snapshotted");
	Snapshot("db", "main");
	PublishMain("db", "main", "later change");

	store->history.CreateBranch("db", "feature", 1);
	StoredFile branch_file, snapshot_file;
	ASSERT_TRUE(store->files.LoadFile(File("db", "feature"), branch_file));
	ASSERT_TRUE(store->files.LoadFile(SnapshotFile("db", 1), snapshot_file));
	EXPECT_EQ(branch_file.length, 11u);
	ASSERT_EQ(branch_file.pages.size(), 1u);
	EXPECT_EQ(branch_file.pages[0], page);
	EXPECT_EQ(branch_file.pages, snapshot_file.pages);
	// Only the main file is carried over: a branch never starts with WAL.
	StoredFile wal;
	EXPECT_FALSE(store->files.LoadFile(File("db", "feature", std::string(MAIN_FILE_NAME) + ".wal"), wal));
	// Writing the branch leaves main and the snapshot alone.
	PublishMain("db", "feature", "feature work!");
	StoredFile main_file;
	ASSERT_TRUE(store->files.LoadFile(File("db", "main"), main_file));
	EXPECT_EQ(main_file.length, 12u);
	ASSERT_TRUE(store->files.LoadFile(SnapshotFile("db", 1), snapshot_file));
	EXPECT_EQ(snapshot_file.length, 11u);
}

TEST_F(MetadataStoreTest, CreateBranchRefusals) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	PublishMain("db", "main", "x");
	Snapshot("db", "main");
	store->history.CreateBranch("db", "dev", 1);

	std::string code;
	try {
		store->history.CreateBranch("db", "dev", 1);
	} catch (const DifferentialError &e) {
		code = ToString(e.code);
		EXPECT_EQ(e.kind, ErrorKind::CONFLICT);
	}
	EXPECT_EQ(code, "branch_exists");
	EXPECT_EQ(RaisedCode([&] { store->history.CreateBranch("db", "main", 1); }), "branch_exists");
	try {
		code.clear();
		store->history.CreateBranch("db", "new", 42);
	} catch (const DifferentialError &e) {
		code = ToString(e.code);
		EXPECT_EQ(e.kind, ErrorKind::NOT_FOUND);
	}
	EXPECT_EQ(code, "snapshot_not_found");
	EXPECT_EQ(RaisedCode([&] { store->history.CreateBranch("nope", "new", 1); }), "database_not_found");
	// A snapshot id of another database does not count.
	ASSERT_TRUE(store->history.EnsureDatabase("other"));
	EXPECT_EQ(RaisedCode([&] { store->history.CreateBranch("other", "new", 1); }), "snapshot_not_found");
	// Nothing was written by the refusals.
	EXPECT_EQ(store->history.ListBranches("db").size(), 2u);
	EXPECT_EQ(store->history.ListBranches("other").size(), 1u);
	EXPECT_FALSE(store->history.FindBranch("db", "new").has_value());
}

TEST_F(MetadataStoreTest, SnapshotNamesAreUniquePerDatabase) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	ASSERT_TRUE(store->history.EnsureDatabase("other"));
	PublishMain("db", "main", "x");
	PublishMain("other", "main", "y");
	SnapshotRequest req;
	req.name = "v1";
	req.author = "alice";
	req.message = "first release";
	auto s1 = store->history.CreateSnapshot("db", "main", req);
	EXPECT_TRUE(s1.name.has_value());
	EXPECT_EQ(s1.name, "v1");

	store->history.CreateBranch("db", "dev", 1);
	EXPECT_EQ(RaisedCode([&] { Snapshot("db", "main", std::string("v1")); }), "snapshot_name_exists");
	EXPECT_EQ(RaisedCode([&] { Snapshot("db", "dev", std::string("v1")); }), "snapshot_name_exists");
	EXPECT_EQ(Snapshot("other", "main", std::string("v1")).snapshot_id, 1);
	// A refusal does not use up an id; unnamed snapshots never clash.
	EXPECT_EQ(Snapshot("db", "main").snapshot_id, 2);
	EXPECT_EQ(Snapshot("db", "main").snapshot_id, 3);

	auto found = store->history.FindSnapshot("db", 1);
	ASSERT_TRUE(found.has_value());
	EXPECT_TRUE(found->name && found->author && found->message);
	EXPECT_EQ(found->author, "alice");
	EXPECT_EQ(found->message, "first release");
	auto unnamed = store->history.FindSnapshot("db", 2);
	ASSERT_TRUE(unnamed.has_value());
	EXPECT_FALSE(unnamed->name.has_value());
	EXPECT_FALSE(unnamed->author.has_value());
	EXPECT_FALSE(unnamed->message.has_value());
	EXPECT_FALSE(store->history.FindSnapshot("db", 4).has_value());
}

TEST_F(MetadataStoreTest, SnapshotRequiresACheckpointedBranch) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	// No database file yet.
	EXPECT_EQ(RaisedCode([&] { Snapshot("db", "main"); }), "snapshot_not_checkpointed");
	PublishMain("db", "main", "data");
	PublishWal("db", "main", 1234);
	try {
		Snapshot("db", "main");
		FAIL() << "snapshot taken with a non-empty WAL";
	} catch (const DifferentialError &e) {
		EXPECT_EQ(e.code, ErrorCode::SNAPSHOT_NOT_CHECKPOINTED);
		EXPECT_EQ(e.kind, ErrorKind::CONFLICT);
		EXPECT_NE(std::string(e.what()).find("1234 bytes"), std::string::npos) << e.what();
	}
	EXPECT_TRUE(store->history.ListSnapshots("db").empty());
	// After a checkpoint the WAL is empty (it may still exist) and the snapshot is allowed.
	PublishWal("db", "main", 0);
	EXPECT_EQ(Snapshot("db", "main").snapshot_id, 1);
	EXPECT_EQ(RaisedCode([&] { Snapshot("db", "ghost"); }), "branch_not_found");
	EXPECT_EQ(RaisedCode([&] { Snapshot("nope", "main"); }), "database_not_found");
}

TEST_F(MetadataStoreTest, FindSnapshotAsOf) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	PublishMain("db", "main", "x");
	std::vector<SnapshotRecord> snaps;
	for (int i = 0; i < 3; i++) {
		if (i > 0) {
			std::this_thread::sleep_for(std::chrono::milliseconds(3));
		}
		snaps.push_back(Snapshot("db", "main"));
	}
	ASSERT_LT(snaps[0].created_at_us, snaps[1].created_at_us);
	ASSERT_LT(snaps[1].created_at_us, snaps[2].created_at_us);
	EXPECT_FALSE(store->history.FindSnapshotAsOf("db", snaps[0].created_at_us - 1).has_value());
	EXPECT_EQ(store->history.FindSnapshotAsOf("db", snaps[0].created_at_us)->snapshot_id, 1);
	EXPECT_EQ(store->history.FindSnapshotAsOf("db", snaps[1].created_at_us - 1)->snapshot_id, 1);
	EXPECT_EQ(store->history.FindSnapshotAsOf("db", snaps[1].created_at_us)->snapshot_id, 2);
	EXPECT_EQ(store->history.FindSnapshotAsOf("db", snaps[2].created_at_us - 1)->snapshot_id, 2);
	EXPECT_EQ(store->history.FindSnapshotAsOf("db", NowMicros())->snapshot_id, 3);
	EXPECT_FALSE(store->history.FindSnapshotAsOf("nope", NowMicros()).has_value());
	// The stored time is the one reported at creation.
	EXPECT_EQ(store->history.FindSnapshot("db", 2)->created_at_us, snaps[1].created_at_us);
}

TEST_F(MetadataStoreTest, ChunkedFileCatalog) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	auto page = PublishMain("db", "main", "content");
	StoredFile file;
	ASSERT_TRUE(store->files.LoadFile(File("db", "main"), file));
	EXPECT_EQ(file.length, 7u);
	ASSERT_EQ(file.pages.size(), 1u);
	EXPECT_EQ(file.pages[0], page);
	EXPECT_TRUE(file.extents.empty());
	EXPECT_TRUE(store->accounting.HasIndexPage(page));
	auto slots = DecodeIndexPage(store->files.LoadIndexPage(page));
	ASSERT_EQ(slots.size(), 1u);
	EXPECT_EQ(slots[0], Sha256("content", 7));
	EXPECT_TRUE(store->accounting.HasChunk(slots[0]));

	std::vector<ChunkLocation> locations;
	store->files.LookupChunks({slots[0], slots[0]}, locations);
	ASSERT_EQ(locations.size(), 2u);
	EXPECT_EQ(locations[0].segment_id, 1u);
	EXPECT_EQ(locations[0].offset, 112u);
	EXPECT_EQ(locations[0].length, 7u);
	EXPECT_EQ(locations[0].crc32c, Crc32c("content", 7));

	auto unknown = Sha256("unknown", 7);
	EXPECT_FALSE(store->accounting.HasChunk(unknown));
	EXPECT_FALSE(store->accounting.HasIndexPage(unknown));
	EXPECT_EQ(RaisedCode([&] { store->files.LookupChunks({slots[0], unknown}, locations); }), "missing_chunk");
	EXPECT_EQ(RaisedCode([&] { store->files.LoadIndexPage(unknown); }), "corrupt_metadata");

	// A chunk published twice keeps its first location.
	NewChunk again;
	again.hash = slots[0];
	again.location.segment_id = 77;
	PublishedState state;
	store->files.PublishChunked(File("db", "main"), state, 7, {page}, {}, {again}, FilePin());
	store->files.LookupChunks({slots[0]}, locations);
	EXPECT_EQ(locations[0].segment_id, 1u);
	EXPECT_EQ(store->accounting.AllChunks().size(), 1u);
}

TEST_F(MetadataStoreTest, EmptyFileAndEmptyPageArePublished) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	// An empty database file has a root without pages.
	PublishedState state;
	store->files.PublishChunked(File("db", "main"), state, 0, {}, {}, {}, FilePin());
	StoredFile file;
	ASSERT_TRUE(store->files.LoadFile(File("db", "main"), file));
	EXPECT_EQ(file.length, 0u);
	EXPECT_TRUE(file.pages.empty());
	// An index page of holes only is an empty blob, and still a page.
	NewIndexPage holes;
	holes.hash = Sha256(nullptr, 0);
	store->files.PublishChunked(File("db", "main"), state, 2 * 262144, {holes.hash}, {holes}, {}, FilePin());
	EXPECT_TRUE(store->accounting.HasIndexPage(holes.hash));
	EXPECT_TRUE(store->files.LoadIndexPage(holes.hash).empty());
	ASSERT_TRUE(store->files.LoadFile(File("db", "main"), file));
	EXPECT_EQ(file.pages, std::vector<Hash256> {holes.hash});
	// A snapshot of it works like any other.
	EXPECT_EQ(Snapshot("db", "main").snapshot_id, 1);
}

TEST_F(MetadataStoreTest, RangedFilesRemoveAndMove) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	auto wal = File("db", "main", std::string(MAIN_FILE_NAME) + ".wal");
	auto checkpoint = File("db", "main", std::string(MAIN_FILE_NAME) + ".wal.checkpoint");
	std::vector<RangeExtent> extents(3);
	for (size_t i = 0; i < extents.size(); i++) {
		extents[i].location.segment_id = 5;
		extents[i].location.offset = 1000 * (i + 1);
		extents[i].location.length = static_cast<uint32_t>(10 * (i + 1));
		extents[i].location.crc32c = static_cast<uint32_t>(i);
	}
	PublishedState wal_state, checkpoint_state;
	store->files.PublishRanged(wal, wal_state, 0, extents);
	StoredFile file;
	ASSERT_TRUE(store->files.LoadFile(wal, file));
	EXPECT_EQ(file.length, 60u);
	ASSERT_EQ(file.extents.size(), 3u);
	EXPECT_EQ(file.extents[2].location.offset, 3000u);
	EXPECT_FALSE(file.extents[2].IsInline());
	EXPECT_TRUE(file.pages.empty());

	// Keep the first extent, replace the rest.
	// Keep the first extent, replace the rest by one inline extent: its bytes travel in the row.
	RangeExtent fresh;
	fresh.location.length = 5;
	fresh.inline_bytes = std::make_shared<std::vector<uint8_t>>(std::vector<uint8_t> {1, 2, 3, 4, 5});
	store->files.PublishRanged(wal, wal_state, 1, {fresh});
	ASSERT_TRUE(store->files.LoadFile(wal, file));
	EXPECT_EQ(file.length, 15u);
	ASSERT_EQ(file.extents.size(), 2u);
	EXPECT_EQ(file.extents[0].location.offset, 1000u);
	ASSERT_TRUE(file.extents[1].IsInline());
	EXPECT_EQ(file.extents[1].location.segment_id, 0u);
	EXPECT_EQ(*file.extents[1].inline_bytes, (std::vector<uint8_t> {1, 2, 3, 4, 5}));
	EXPECT_EQ(store->accounting.AllExtents().size(), 2u);
	// Inline bytes count as metadata, not as live segment bytes.
	EXPECT_EQ(store->accounting.Totals("").wal_bytes, 10u);

	// Move over an existing target replaces it.
	store->files.PublishRanged(checkpoint, checkpoint_state, 0, {extents[0]});
	store->files.MoveFile(wal, checkpoint);
	EXPECT_FALSE(store->files.LoadFile(wal, file));
	ASSERT_TRUE(store->files.LoadFile(checkpoint, file));
	EXPECT_EQ(file.length, 15u);
	ASSERT_EQ(file.extents.size(), 2u);
	EXPECT_TRUE(file.extents[1].IsInline());
	EXPECT_EQ(store->accounting.AllExtents().size(), 2u);

	store->files.RemoveFile(checkpoint);
	EXPECT_FALSE(store->files.LoadFile(checkpoint, file));
	EXPECT_TRUE(store->accounting.AllExtents().empty());
	EXPECT_EQ(RaisedCode([&] { store->files.RemoveFile(File("db", "ghost")); }), "branch_not_found");
}

TEST_F(MetadataStoreTest, SegmentIdsAreAllocatedInOrder) {
	EXPECT_EQ(store->files.AllocateSegment(), 1u);
	EXPECT_EQ(store->files.AllocateSegment(), 2u);
	store.reset();
	store = std::make_unique<MetadataStore>(root);
	EXPECT_EQ(store->files.AllocateSegment(), 3u);
}

TEST(SqliteStatementCache, AReusedStatementStartsOverAndTwoOfOneSqlCoexist) {
	TempDir dir;
	SqliteDatabase db(dir.path + "/cache.sqlite");
	db.Execute("CREATE TABLE t(x INTEGER); INSERT INTO t VALUES (1), (2), (3)");
	const std::string sql = "SELECT x FROM t WHERE x >= ? ORDER BY x";
	{
		auto first = db.Prepare(sql);
		first.Bind(1, int64_t(1));
		ASSERT_TRUE(first.Step());
		EXPECT_EQ(first.Int(0), 1);
		// The same SQL while the first is mid-way: a statement of its own.
		auto second = db.Prepare(sql);
		second.Bind(1, int64_t(3));
		ASSERT_TRUE(second.Step());
		EXPECT_EQ(second.Int(0), 3);
		ASSERT_TRUE(first.Step());
		EXPECT_EQ(first.Int(0), 2);
	}
	{
		// Taken from the cache: reset and unbound, so it starts from the first row with the new value.
		auto again = db.Prepare(sql);
		again.Bind(1, int64_t(2));
		ASSERT_TRUE(again.Step());
		EXPECT_EQ(again.Int(0), 2);
	}
	// Released half-read into the cache, it holds no read: another connection can still write.
	SqliteDatabase other(dir.path + "/cache.sqlite");
	other.Execute("INSERT INTO t VALUES (4)");
	auto count = db.Prepare("SELECT count(*) FROM t");
	ASSERT_TRUE(count.Step());
	EXPECT_EQ(count.Int(0), 4);
}

TEST_F(MetadataStoreTest, APublishingHandleKeepsItsBranchAndRefusesAReplacedOne) {
	ASSERT_TRUE(store->history.EnsureDatabase("db"));
	PublishMain("db", "main", "base");
	Snapshot("db", "main");
	store->history.CreateBranch("db", "dev", 1);
	// A later branch, so that dev's id is not the largest and its successor gets another one.
	store->history.CreateBranch("db", "later", 1);
	auto wal = File("db", "dev", std::string(MAIN_FILE_NAME) + ".wal");
	RangeExtent extent;
	extent.location.segment_id = 1;
	extent.location.length = 10;
	PublishedState state;
	store->files.PublishRanged(wal, state, 0, {extent});
	ASSERT_GE(state.branch_id, 0);
	EXPECT_EQ(state.stored_extents, 1u);
	// A removed file written again by the same handle: its row is gone, so the branch is looked up again.
	store->files.RemoveFile(wal);
	state.stored_extents = 0;
	store->files.PublishRanged(wal, state, 0, {extent});
	StoredFile file;
	ASSERT_TRUE(store->files.LoadFile(wal, file));
	EXPECT_EQ(file.extents.size(), 1u);
	// The branch dropped and created again under the same name (which a writer's branch lock prevents): the kept id
	// is no longer the branch's, and the publication fails without writing to either.
	auto kept = state.branch_id;
	store->lifecycle.DropBranch("db", "dev");
	store->history.CreateBranch("db", "dev", 1);
	ASSERT_NE(store->history.FindBranch("db", "dev")->branch_id, kept);
	auto extents_before = store->accounting.AllExtents().size();
	EXPECT_EQ(RaisedCode([&] { store->files.PublishRanged(wal, state, 1, {extent}); }), "branch_not_found");
	EXPECT_FALSE(store->files.LoadFile(wal, file));
	EXPECT_EQ(store->accounting.AllExtents().size(), extents_before);
}
