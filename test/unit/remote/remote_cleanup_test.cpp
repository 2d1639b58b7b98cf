// Remote cleanup over real stores: it condemns only the unreachable, deletes only after the grace period
// and only what is still unreachable, holds while an export runs, and never deletes when a root is unreadable.
#include "remote/export_format.hpp"
#include "remote/remote_cleanup.hpp"
#include "remote/remote_journal.hpp"
#include "store_fixtures.hpp"

#include <gtest/gtest.h>

namespace differential {
namespace test {

static constexpr int64_t DAY_MS = 24LL * 60 * 60 * 1000;
static constexpr int64_t T0 = 1764633600000; // 2025-12-02

template <class Kind>
class RemoteCleanup : public StoreTest<Kind> {
protected:
	Hash256 Put(const std::string &key, const std::string &data, PutCondition condition = PutCondition::None()) {
		auto result = this->PutText(key, data, std::move(condition));
		EXPECT_TRUE(result.outcome.Ok()) << key << ": " << result.outcome.detail;
		return Sha256(data.data(), data.size());
	}

	//! A pack of one chunk, its index page and a descriptor; returns the descriptor's hash.
	Hash256 Export(const std::string &content, int64_t snapshot, std::string &pack_key) {
		auto pack = Sha256(content.data(), content.size());
		pack_key = PackKey(pack);
		Put(pack_key, content);
		std::vector<PackedChunk> slots {PackedChunk {pack, pack, 0, static_cast<uint32_t>(content.size())}};
		auto page_bytes = EncodeExportIndexPage(slots);
		std::string page(page_bytes.begin(), page_bytes.end());
		auto page_hash = Sha256(page.data(), page.size());
		Put(ExportIndexKey(page_hash), page);
		ExportDescriptor descriptor;
		descriptor.database = "orders";
		descriptor.snapshot_id = snapshot;
		descriptor.length = content.size();
		descriptor.index_pages = {page_hash};
		auto text = EncodeDescriptor(descriptor);
		auto hash = Sha256(text.data(), text.size());
		Put(DescriptorKey(hash), text);
		return hash;
	}

	void Commit(int64_t snapshot, const Hash256 &descriptor) {
		Put(CommitRecordKey("orders", snapshot), EncodeSnapshotRecord({"orders", snapshot, descriptor}, false));
	}
	void Expire(int64_t snapshot) {
		Put(ExpiryRecordKey("orders", snapshot), EncodeSnapshotRecord({"orders", snapshot, Hash256()}, true));
	}
	void MoveHead(const Hash256 &descriptor, int64_t snapshot) {
		Put(HeadKey("orders", "main"), EncodeHead({"orders", "main", snapshot, descriptor, Hash256()}));
	}

	RemoteCleanupReport Run(int64_t now_ms, bool dry_run = false) {
		RemoteCleanupOptions options;
		options.now_ms = now_ms;
		options.dry_run = dry_run;
		RemoteCleanupReport report;
		auto outcome = CleanupRemoteFiles(*this->store, options, report);
		EXPECT_TRUE(outcome.Ok()) << outcome.detail;
		return report;
	}

	bool Exists(const std::string &key) {
		return this->store->Head(key).outcome.Ok();
	}
};

TYPED_TEST_SUITE(RemoteCleanup, StoreKinds, KindNames);

TYPED_TEST(RemoteCleanup, KeepsEverythingReachable) {
	std::string pack1, pack2;
	auto d1 = this->Export("snapshot one", 1, pack1);
	this->Commit(1, d1);
	auto d2 = this->Export("snapshot two", 2, pack2);
	this->Commit(2, d2);
	this->MoveHead(d2, 2);
	auto report = this->Run(T0 + 30 * DAY_MS);
	EXPECT_EQ(report.roots, 2u);
	EXPECT_EQ(report.live_objects, 6u);
	EXPECT_EQ(report.unreachable_objects, 0u);
	EXPECT_EQ(report.deleted_objects, 0u);
	EXPECT_TRUE(this->Exists(pack1));
}

TYPED_TEST(RemoteCleanup, DeletesAnExpiredSnapshotOnlyAfterTheGracePeriod) {
	std::string pack1, pack2;
	auto d1 = this->Export("old snapshot", 1, pack1);
	this->Commit(1, d1);
	auto d2 = this->Export("new snapshot", 2, pack2);
	this->Commit(2, d2);
	this->MoveHead(d2, 2);
	this->Expire(1);
	auto first = this->Run(T0);
	EXPECT_EQ(first.roots, 1u);
	EXPECT_EQ(first.unreachable_objects, 3u);
	EXPECT_EQ(first.condemned_objects, 3u);
	EXPECT_EQ(first.deleted_objects, 0u);
	auto early = this->Run(T0 + 6 * DAY_MS);
	EXPECT_EQ(early.condemned_objects, 0u);
	EXPECT_EQ(early.pending_objects, 3u);
	EXPECT_EQ(early.deleted_objects, 0u);
	EXPECT_TRUE(this->Exists(pack1));
	// The dry run's list is exactly what the next real run deletes.
	auto dry = this->Run(T0 + 8 * DAY_MS, true);
	ASSERT_EQ(dry.deleted_keys.size(), 3u);
	EXPECT_TRUE(this->Exists(pack1));
	auto real = this->Run(T0 + 8 * DAY_MS);
	EXPECT_EQ(real.deleted_keys, dry.deleted_keys);
	EXPECT_EQ(real.deleted_objects, 3u);
	EXPECT_FALSE(this->Exists(pack1));
	EXPECT_FALSE(this->Exists(DescriptorKey(d1)));
	EXPECT_TRUE(this->Exists(pack2));
	// The deletion journal names what went, for exporters that remember uploading it.
	std::vector<KeyRecord> journal;
	ASSERT_TRUE(ReadKeyRecords(*this->store, RecordKind::DELETIONS, "", journal).Ok());
	ASSERT_EQ(journal.size(), 1u);
	EXPECT_EQ(journal[0].keys, dry.deleted_keys);
	auto after = this->Run(T0 + 9 * DAY_MS);
	EXPECT_EQ(after.unreachable_objects, 0u);
	EXPECT_EQ(after.pending_objects, 0u);
}

TYPED_TEST(RemoteCleanup, AnObjectReachableAgainIsNotDeleted) {
	std::string pack;
	auto orphan = this->Export("written by an export that had not published yet", 5, pack);
	EXPECT_EQ(this->Run(T0).condemned_objects, 3u);
	// The export publishes after all: its descriptor is reachable now.
	this->Commit(5, orphan);
	this->MoveHead(orphan, 5);
	auto later = this->Run(T0 + 8 * DAY_MS);
	EXPECT_EQ(later.unreachable_objects, 0u);
	EXPECT_EQ(later.deleted_objects, 0u);
	EXPECT_TRUE(this->Exists(pack));
}

TYPED_TEST(RemoteCleanup, HoldsWhileAnExportMarkerIsLive) {
	std::string pack;
	this->Export("orphan", 9, pack);
	this->Run(T0);
	std::string marker;
	ASSERT_TRUE(WriteMarker(*this->store, MarkerKind::EXPORT, T0 + 8 * DAY_MS, marker).Ok());
	auto held = this->Run(T0 + 8 * DAY_MS + 1000);
	EXPECT_EQ(held.hold, CleanupHold::EXPORT_RUNNING);
	EXPECT_EQ(held.deleted_objects, 0u);
	EXPECT_TRUE(this->Exists(pack));
	// A marker older than its lifetime belongs to a dead process and holds nothing back.
	auto freed = this->Run(T0 + 8 * DAY_MS + MARKER_LIFETIME_MS + 1000);
	EXPECT_EQ(freed.hold, CleanupHold::NONE);
	EXPECT_EQ(freed.deleted_objects, 3u);
	EXPECT_FALSE(this->Exists(pack));
}

TYPED_TEST(RemoteCleanup, AnUnreadableRootStopsTheRunBeforeAnyDelete) {
	std::string pack1, pack2;
	auto d1 = this->Export("live", 1, pack1);
	this->MoveHead(d1, 1);
	this->Export("orphan", 2, pack2);
	this->Run(T0);
	ASSERT_TRUE(this->store->Delete(DescriptorKey(d1)).Ok());
	RemoteCleanupOptions options;
	options.now_ms = T0 + 8 * DAY_MS;
	RemoteCleanupReport report;
	auto outcome = CleanupRemoteFiles(*this->store, options, report);
	EXPECT_EQ(outcome.status, ObjectStatus::NOT_FOUND);
	EXPECT_TRUE(this->Exists(pack1));
	EXPECT_TRUE(this->Exists(pack2));
	// A damaged index page (bytes that are not what its key names) stops it too.
	this->Put(DescriptorKey(d1), "differential-descriptor 2\n");
	outcome = CleanupRemoteFiles(*this->store, options, report);
	EXPECT_EQ(outcome.status, ObjectStatus::INVALID);
	EXPECT_TRUE(this->Exists(pack2));
}

} // namespace test
} // namespace differential
