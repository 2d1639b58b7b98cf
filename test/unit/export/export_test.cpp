// Export runs (src/export/) on a real repository against the local object store: what is uploaded,
// dedup across snapshots and clones, idempotent retries, head conflicts and the probe's refusal.
#include "export/export_pending.hpp"

#include "common/fault_points.hpp"
#include "export/merge_export.hpp"
#include "metadata/sqlite.hpp"
#include "remote/condition_dropping_store.hpp"
#include "remote/export_format.hpp"
#include "remote/local_object_store.hpp"
#include "remote/remote_journal.hpp"
#include "storage/versioned_file.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace differential;
using differential::test::RaisedCode;
using differential::test::TempDir;

namespace {

std::vector<uint8_t> Pattern(size_t size, uint32_t seed) {
	std::vector<uint8_t> out(size);
	uint32_t x = seed * 2654435761u + 1;
	for (size_t i = 0; i < size; i++) {
		x = x * 1103515245u + 12345u;
		out[i] = static_cast<uint8_t>(x >> 16);
	}
	return out;
}

//! Fails every PUT after the first `allowed` with a transient outcome, as a server that went away.
class FailingStore : public test::ConditionDroppingStore {
public:
	FailingStore(ObjectStore &inner, int allowed) : ConditionDroppingStore(inner, false, false), allowed(allowed) {
	}
	PutResult Put(const PutRequest &request) override {
		if (allowed-- <= 0) {
			PutResult result;
			result.outcome.status = ObjectStatus::TRANSIENT;
			result.outcome.detail = "PUT " + request.key + ": connection refused";
			return result;
		}
		return inner.Put(request);
	}
	std::atomic<int> allowed;
};

//! Holds each pack PUT 100 ms and counts how many are in flight; any other PUT while one is, is out of order.
class OrderCheckingStore : public test::ConditionDroppingStore {
public:
	explicit OrderCheckingStore(ObjectStore &inner) : ConditionDroppingStore(inner, false, false) {
	}
	PutResult Put(const PutRequest &request) override {
		if (request.key.rfind("packs/", 0) != 0) {
			out_of_order = out_of_order || in_flight > 0;
			return inner.Put(request);
		}
		int now = ++in_flight;
		for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
		auto result = inner.Put(request);
		--in_flight;
		return result;
	}
	std::atomic<int> in_flight {0};
	std::atomic<int> most {0};
	std::atomic<bool> out_of_order {false};
};

class ExportTest : public ::testing::Test {
protected:
	void SetUp() override {
		repository = std::make_shared<Repository>();
		repository->root = temp.Sub("repo");
		temp.Sub("repo/segments");
		repository->metadata = std::make_shared<MetadataStore>(repository->root);
		repository->storage = std::make_shared<RepositoryStorage>(
		    repository->root, std::shared_ptr<FileCatalog>(repository->metadata, &repository->metadata->files));
		url = "file://" + temp.Sub("bucket") + "/";
		store = std::make_unique<LocalObjectStore>(temp.path + "/bucket");
		Create("db");
	}

	void Create(const std::string &database) {
		repository->metadata->history.EnsureDatabase(database);
		repository->metadata->remote.SetDataPath(database, url);
	}

	//! Writes `size` bytes at `offset` of the database file of db/main, publishes and snapshots it.
	int64_t WriteAndSnapshot(const std::string &database, uint64_t offset, uint64_t size, uint32_t seed) {
		auto address = ParseDiffPath(BranchPath(repository->root, database, "main"));
		auto file = VersionedFile::Open(address, repository->storage, true);
		auto bytes = Pattern(size, seed);
		file->Write(bytes.data(), bytes.size(), offset);
		file->Sync();
		file.reset();
		return repository->metadata->history.CreateSnapshot(database, "main", SnapshotRequest()).snapshot_id;
	}

	size_t Count(const std::string &prefix) {
		std::vector<ObjectInfo> objects;
		EXPECT_TRUE(ListAll(*store, prefix, objects).Ok());
		return objects.size();
	}

	TempDir temp;
	std::shared_ptr<Repository> repository;
	std::string url;
	std::unique_ptr<LocalObjectStore> store;
};

TEST_F(ExportTest, ExportsPacksPagesDescriptorRecordAndHead) {
	// 40 distinct chunks of 256 KiB (after the 12 KiB first one): two packs of at most 32 chunks.
	WriteAndSnapshot("db", 0, 12288 + 40 * 262144, 1);
	auto run = ExportPendingSnapshots(*repository, "db", *store, url);
	ASSERT_EQ(run.snapshots.size(), 1u);
	EXPECT_EQ(run.snapshots[0].stats.chunks, 41u);
	EXPECT_EQ(Count("packs/"), 2u);
	EXPECT_EQ(Count("indexes/"), 1u);
	EXPECT_EQ(Count("descriptors/"), 1u);
	EXPECT_EQ(Count("commits/db/"), 1u);
	ASSERT_EQ(run.heads.size(), 1u);
	auto head = store->Get(HeadKey("db", "main"));
	ASSERT_TRUE(head.outcome.Ok());
	BranchHead decoded;
	std::string why;
	ASSERT_TRUE(DecodeHead(head.data, decoded, why)) << why;
	EXPECT_EQ(decoded.snapshot_id, 1);
	EXPECT_EQ(decoded.descriptor, run.snapshots[0].descriptor);
	EXPECT_TRUE(IsZeroHash(decoded.previous));
	// Every pack is at most 32 chunks and 8 MiB; the descriptor names the file's length.
	std::vector<ObjectInfo> packs;
	ASSERT_TRUE(ListAll(*store, "packs/", packs).Ok());
	for (auto &pack : packs) {
		EXPECT_LE(pack.size, MAX_PACK_BYTES);
	}
	auto descriptor = store->Get(DescriptorKey(run.snapshots[0].descriptor));
	ExportDescriptor parsed;
	ASSERT_TRUE(DecodeDescriptor(descriptor.data, parsed, why)) << why;
	EXPECT_EQ(parsed.length, 12288u + 40 * 262144);
}

TEST_F(ExportTest, SecondExportUploadsOnlyWhatChanged) {
	WriteAndSnapshot("db", 0, 12288 + 4 * 262144, 1);
	ExportPendingSnapshots(*repository, "db", *store, url);
	// Nothing pending: no request at all.
	auto again = ExportPendingSnapshots(*repository, "db", *store, url);
	EXPECT_TRUE(again.snapshots.empty());
	EXPECT_EQ(again.stats.requests, 0u);
	// An unchanged database: only its descriptor, its commit record and the head move, inside the
	// export marker's PUT and DELETE and the two listings for cleanups and their deletions.
	repository->metadata->history.CreateSnapshot("db", "main", SnapshotRequest());
	auto unchanged = ExportPendingSnapshots(*repository, "db", *store, url);
	ASSERT_EQ(unchanged.snapshots.size(), 1u);
	EXPECT_EQ(unchanged.stats.packs, 0u);
	EXPECT_EQ(unchanged.stats.index_pages, 0u);
	EXPECT_EQ(unchanged.stats.requests, 7u);
	EXPECT_EQ(unchanged.stats.objects, 3u);
	// One changed chunk: one pack of one chunk.
	WriteAndSnapshot("db", 12288 + 262144, 262144, 9);
	auto changed = ExportPendingSnapshots(*repository, "db", *store, url);
	EXPECT_EQ(changed.stats.packs, 1u);
	EXPECT_EQ(changed.stats.chunks, 1u);
}

TEST_F(ExportTest, CloneReusesItsSourcesPacks) {
	WriteAndSnapshot("db", 0, 12288 + 8 * 262144, 1);
	ExportPendingSnapshots(*repository, "db", *store, url);
	auto packs = Count("packs/");
	repository->metadata->lifecycle.CloneDatabase("db", "copy", 1);
	ASSERT_TRUE(repository->metadata->remote.DataPath("copy"));
	WriteAndSnapshot("copy", 12288, 262144, 5);
	auto run = ExportPendingSnapshots(*repository, "copy", *store, url);
	EXPECT_EQ(run.stats.chunks, 1u);
	EXPECT_EQ(Count("packs/"), packs + 1);
	EXPECT_TRUE(store->Head(HeadKey("copy", "main")).outcome.Ok());
}

TEST_F(ExportTest, FailedExportResumesAndHeadOnlyFollowsCompleteExports) {
	WriteAndSnapshot("db", 0, 12288 + 70 * 262144, 1);
	FailingStore failing(*store, 2); // the export marker and one pack
	EXPECT_EQ(RaisedCode([&] { ExportPendingSnapshots(*repository, "db", failing, url); }), "export_failed");
	EXPECT_EQ(Count("packs/"), 1u);
	EXPECT_EQ(Count("markers/"), 0u);
	EXPECT_FALSE(store->Head(HeadKey("db", "main")).outcome.Ok());
	EXPECT_EQ(Count("commits/"), 0u);
	auto run = ExportPendingSnapshots(*repository, "db", *store, url);
	EXPECT_EQ(run.stats.packs, 2u); // the first pack is not uploaded again
	EXPECT_TRUE(store->Head(HeadKey("db", "main")).outcome.Ok());
}

TEST_F(ExportTest, PacksGoUpConcurrentlyAndEverythingElseAfterThem) {
	WriteAndSnapshot("db", 0, 12288 + 100 * 262144, 1); // 65 distinct chunks (the pattern repeats): 3 packs
	OrderCheckingStore checking(*store);
	ExportTuning tuning;
	tuning.upload_concurrency = 3;
	std::vector<double> progress;
	tuning.progress = [&](double percent) {
		progress.push_back(percent);
	};
	auto run = ExportPendingSnapshots(*repository, "db", checking, url, std::nullopt, tuning);
	EXPECT_EQ(run.stats.packs, 3u);
	EXPECT_EQ(run.stats.chunks, 65u);
	EXPECT_EQ(checking.most.load(), 3);
	EXPECT_FALSE(checking.out_of_order.load());
	EXPECT_TRUE(store->Head(HeadKey("db", "main")).outcome.Ok());
	// The progress climbs pack by pack to 90, then 100 when the head and the marker are done.
	ASSERT_GE(progress.size(), 5u);
	EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
	EXPECT_EQ(progress.front(), 0.0);
	EXPECT_EQ(progress.back(), 100.0);
	EXPECT_GT(std::count_if(progress.begin(), progress.end(), [](double p) { return p > 0 && p < 90; }), 1);
}

TEST_F(ExportTest, OnePackAtATimeStillExportsEverything) {
	WriteAndSnapshot("db", 0, 12288 + 70 * 262144, 1);
	OrderCheckingStore checking(*store);
	ExportTuning tuning;
	tuning.upload_concurrency = 1;
	auto run = ExportPendingSnapshots(*repository, "db", checking, url, std::nullopt, tuning);
	EXPECT_EQ(run.stats.packs, 3u);
	EXPECT_EQ(checking.most.load(), 1);
	EXPECT_TRUE(store->Head(HeadKey("db", "main")).outcome.Ok());
}

TEST_F(ExportTest, AnotherRepositorysHeadIsAConflict) {
	WriteAndSnapshot("db", 0, 12288, 1);
	ExportPendingSnapshots(*repository, "db", *store, url);
	// Another writer moves the head: ours no longer matches, and it is left as it is.
	BranchHead other;
	other.database = "db";
	other.branch = "main";
	other.snapshot_id = 7;
	auto text = EncodeHead(other);
	PutRequest put;
	put.key = HeadKey("db", "main");
	put.data = text.data();
	put.size = text.size();
	ASSERT_TRUE(store->Put(put).outcome.Ok());
	WriteAndSnapshot("db", 0, 12288, 2);
	EXPECT_EQ(RaisedCode([&] { ExportPendingSnapshots(*repository, "db", *store, url); }), "head_conflict");
	EXPECT_EQ(store->Get(HeadKey("db", "main")).data, text);
	EXPECT_EQ(repository->metadata->history.ListSnapshots("db").size(), 2u);
}

TEST_F(ExportTest, StoreWithoutConditionalWritesGetsNoHead) {
	WriteAndSnapshot("db", 0, 12288, 1);
	test::ConditionDroppingStore careless(*store, true, true);
	auto careless_url = url + "careless/";
	EXPECT_EQ(RaisedCode([&] { ExportPendingSnapshots(*repository, "db", careless, careless_url); }),
	          "conditional_writes_unsupported");
	EXPECT_FALSE(store->Head(HeadKey("db", "main")).outcome.Ok());
}

TEST_F(ExportTest, DeletionsJournaledByCleanupAreUploadedAgain) {
	WriteAndSnapshot("db", 0, 12288 + 2 * 262144, 1);
	ExportPendingSnapshots(*repository, "db", *store, url);
	std::vector<ObjectInfo> packs;
	ASSERT_TRUE(ListAll(*store, "packs/", packs).Ok());
	ASSERT_EQ(packs.size(), 1u);
	// Remote cleanup journals a deletion, then deletes (as if the pack had become unreachable).
	std::string record;
	ASSERT_TRUE(WriteKeyRecord(*store, RecordKind::DELETIONS, 1000, {packs[0].key}, record).Ok());
	ASSERT_TRUE(store->Delete(packs[0].key).Ok());
	repository->metadata->history.CreateSnapshot("db", "main", SnapshotRequest());
	auto run = ExportPendingSnapshots(*repository, "db", *store, url);
	EXPECT_EQ(run.stats.packs, 1u);
	EXPECT_TRUE(store->Head(packs[0].key).outcome.Ok());
}

TEST_F(ExportTest, ExportWaitsForNoCleanupAndLeavesNoMarker) {
	WriteAndSnapshot("db", 0, 12288, 1);
	ExportPendingSnapshots(*repository, "db", *store, url);
	EXPECT_EQ(Count("markers/"), 0u);
}

TEST_F(ExportTest, DataPathIsFixedOnceSet) {
	EXPECT_FALSE(repository->metadata->remote.SetDataPath("db", url));
	EXPECT_EQ(RaisedCode([&] { repository->metadata->remote.SetDataPath("db", "s3://other/x/"); }),
	          "data_path_mismatch");
	EXPECT_EQ(repository->metadata->remote.DataPath("db")->store_url, url);
	// A local database adopts a data path; its earlier snapshots stay local.
	repository->metadata->history.EnsureDatabase("local");
	WriteAndSnapshot("local", 0, 12288, 3);
	EXPECT_TRUE(repository->metadata->remote.SetDataPath("local", url));
	EXPECT_TRUE(repository->metadata->remote.PendingExports("local", std::nullopt).empty());
	WriteAndSnapshot("local", 0, 12288, 4);
	auto pending = repository->metadata->remote.PendingExports("local", std::nullopt);
	ASSERT_EQ(pending.size(), 1u);
	EXPECT_EQ(pending[0].snapshot_id, 2);
}

} // namespace

// An S3 merge's head write (export/merge_export.cpp): it moves the head only from the version the merge
// started from, recognises its own bytes after a lost answer, and reading tells ours, start and other apart.
TEST_F(ExportTest, MergeHeadMovesOnlyFromItsStartVersion) {
	std::string database = "db";
	ExportContext context {*repository, database, *store, url, nullptr, 4};
	auto key = HeadKey("db", "main");
	ExportStats stats;
	auto created = PutMergeHead(context, key, "ours-1", std::nullopt, stats);
	ASSERT_EQ(created.state, MergeHeadState::OURS);
	auto again = PutMergeHead(context, key, "ours-1", std::nullopt, stats); // refused, then read: ours
	EXPECT_EQ(again.state, MergeHeadState::OURS);
	EXPECT_EQ(again.etag, created.etag);
	auto moved = PutMergeHead(context, key, "ours-2", created.etag, stats);
	ASSERT_EQ(moved.state, MergeHeadState::OURS);
	EXPECT_EQ(PutMergeHead(context, key, "ours-3", created.etag, stats).state, MergeHeadState::OTHER);
	EXPECT_EQ(store->Get(key).data, "ours-2");
	EXPECT_EQ(ReadMergeHead(context, key, "ours-4", moved.etag, stats).state, MergeHeadState::START);
	EXPECT_EQ(ReadMergeHead(context, key, "ours-2", created.etag, stats).state, MergeHeadState::OURS);
	EXPECT_EQ(ReadMergeHead(context, key, "ours-5", created.etag, stats).state, MergeHeadState::OTHER);
	EXPECT_EQ(ReadMergeHead(context, HeadKey("db", "new"), "x", std::nullopt, stats).state, MergeHeadState::START);
	// A write whose answer is lost is UNCERTAIN, whether it landed or not; reading settles it.
	SetFaultPointForTesting("merge.head_put_unanswered:1");
	EXPECT_EQ(PutMergeHead(context, key, "ours-6", moved.etag, stats).state, MergeHeadState::UNCERTAIN);
	EXPECT_EQ(ReadMergeHead(context, key, "ours-6", moved.etag, stats).state, MergeHeadState::OURS);
	SetFaultPointForTesting("merge.head_put_lost:1");
	EXPECT_EQ(PutMergeHead(context, key, "ours-7", store->Get(key).etag, stats).state, MergeHeadState::UNCERTAIN);
	EXPECT_EQ(ReadMergeHead(context, key, "ours-7", store->Get(key).etag, stats).state, MergeHeadState::START);
	SetFaultPointForTesting("");
}
