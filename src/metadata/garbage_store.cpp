// Garbage collection: mark and sweep over live roots in one transaction; segment files are the
// caller's (maintenance) to delete or compact.
#include "metadata/garbage_store.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/process_identity.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

#include <unordered_set>

namespace differential {

static int64_t ReleaseDeadPins(SqliteDatabase &db) {
	std::vector<int64_t> dead;
	auto pins = db.Prepare("SELECT pin_id, pid, process_start FROM pins");
	while (pins.Step()) {
		if (!ProcessAlive(pins.Int(1), static_cast<uint64_t>(pins.Int(2)))) {
			dead.push_back(pins.Int(0));
		}
	}
	auto release = db.Prepare("DELETE FROM pins WHERE pin_id = ?");
	for (auto pin : dead) {
		release.Reset();
		release.Bind(1, pin).Run();
	}
	return static_cast<int64_t>(dead.size());
}

using HashSet = std::unordered_set<Hash256, Hash256Hasher>;

//! Fills the temp table live_roots and returns the index pages the live roots list.
static HashSet MarkLivePages(SqliteDatabase &db) {
	db.Execute("CREATE TEMP TABLE IF NOT EXISTS live_roots(root_id INTEGER PRIMARY KEY)");
	db.Execute("DELETE FROM live_roots");
	db.Execute("INSERT OR IGNORE INTO live_roots SELECT root_id FROM branch_files WHERE root_id IS NOT NULL "
	           "UNION SELECT root_id FROM snapshots UNION SELECT root_id FROM pins");
	HashSet live_pages;
	auto roots = db.Prepare("SELECT pages FROM roots WHERE root_id IN (SELECT root_id FROM live_roots)");
	while (roots.Step()) {
		for (auto &page : SplitHashes(roots.Blob(0))) {
			live_pages.insert(page);
		}
	}
	return live_pages;
}

//! Names the first live page that is missing; the caller saw that one is (nothing was deleted yet).
static void RequirePagesExist(SqliteDatabase &db, const HashSet &live_pages) {
	auto page = db.Prepare("SELECT 1 FROM index_pages WHERE hash = ?");
	for (auto &hash : live_pages) {
		page.Reset();
		page.BindBlob(1, hash.data(), hash.size());
		if (!page.Step()) {
			Fail(ErrorKind::IO, "corrupt_metadata",
			     "Index page " + HashToHex(hash) +
			         " of a live root is missing; nothing was cleaned up. Run differential_verify().");
		}
	}
}

//! One pass over index_pages: a live page's slots are live chunks, every other page is deleted. A pass
//! instead of a lookup per live page: with thousands of snapshots the lookups were most of cleanup's time.
static int64_t SweepPagesMarkingChunks(SqliteDatabase &db, const HashSet &live_pages, HashSet &live_chunks) {
	std::vector<Hash256> dead;
	size_t found = 0;
	auto all = db.Prepare("SELECT hash, slots FROM index_pages");
	while (all.Step()) {
		auto hash = HashFromBlob(all.Blob(0));
		if (!live_pages.count(hash)) {
			dead.push_back(hash);
			continue;
		}
		found++;
		for (auto &slot : SplitHashes(all.Blob(1))) {
			if (!IsZeroHash(slot)) {
				live_chunks.insert(slot);
			}
		}
	}
	if (found != live_pages.size()) {
		RequirePagesExist(db, live_pages);
	}
	auto del = db.Prepare("DELETE FROM index_pages WHERE hash = ?");
	for (auto &hash : dead) {
		del.Reset();
		del.BindBlob(1, hash.data(), hash.size()).Run();
	}
	return static_cast<int64_t>(dead.size());
}

//! Deletes every chunk row whose hash is not live; returns how many.
static int64_t SweepChunks(SqliteDatabase &db, const HashSet &live) {
	std::vector<Hash256> dead;
	auto all = db.Prepare("SELECT hash FROM chunks");
	while (all.Step()) {
		auto hash = HashFromBlob(all.Blob(0));
		if (!live.count(hash)) {
			dead.push_back(hash);
		}
	}
	auto del = db.Prepare("DELETE FROM chunks WHERE hash = ?");
	for (auto &hash : dead) {
		del.Reset();
		del.BindBlob(1, hash.data(), hash.size()).Run();
	}
	return static_cast<int64_t>(dead.size());
}

static std::vector<SegmentUsage> SegmentUsages(SqliteDatabase &db) {
	std::vector<SegmentUsage> out;
	auto usage = db.Prepare("SELECT s.segment_id, s.created_at_us, s.created_by_pid, s.created_by_start, "
	                        "coalesce((SELECT sum(length) FROM chunks c WHERE c.segment_id = s.segment_id), 0) + "
	                        "coalesce((SELECT sum(length) FROM file_extents e WHERE e.segment_id = s.segment_id), 0), "
	                        "(SELECT count(*) FROM chunks c WHERE c.segment_id = s.segment_id) + "
	                        "(SELECT count(*) FROM file_extents e WHERE e.segment_id = s.segment_id) "
	                        "FROM segments s WHERE s.removed_at_us IS NULL ORDER BY s.segment_id");
	while (usage.Step()) {
		SegmentUsage u;
		u.segment_id = static_cast<uint64_t>(usage.Int(0));
		u.created_at_us = usage.Int(1);
		u.owner_pid = usage.Int(2);
		u.owner_start = static_cast<uint64_t>(usage.Int(3));
		u.live_bytes = static_cast<uint64_t>(usage.Int(4));
		u.live_records = static_cast<uint64_t>(usage.Int(5));
		out.push_back(u);
	}
	return out;
}

GarbageReport GarbageStore::CollectGarbage() {
	auto txn = core.Write();
	auto &db = txn.db;
	GarbageReport report;
	report.pins_released = ReleaseDeadPins(db);
	auto live_pages = MarkLivePages(db);
	HashSet live_chunks;
	report.pages_deleted = SweepPagesMarkingChunks(db, live_pages, live_chunks);
	db.Execute("DELETE FROM roots WHERE root_id NOT IN (SELECT root_id FROM live_roots)");
	report.roots_deleted = db.Changes();
	report.chunks_deleted = SweepChunks(db, live_chunks);
	report.segments = SegmentUsages(db);
	CrashPoint("cleanup.before_sweep_commit");
	txn.Commit();
	return report;
}

std::vector<LiveRecord> GarbageStore::LiveRecordsIn(uint64_t segment_id) {
	auto session = core.Read();
	std::vector<LiveRecord> out;
	auto chunks = session.db.Prepare("SELECT hash, payload_offset, length, crc32c FROM chunks WHERE segment_id = ?");
	chunks.Bind(1, static_cast<int64_t>(segment_id));
	while (chunks.Step()) {
		LiveRecord r;
		r.hash = HashFromBlob(chunks.Blob(0));
		r.location = {segment_id, static_cast<uint64_t>(chunks.Int(1)), static_cast<uint32_t>(chunks.Int(2)),
		              static_cast<uint32_t>(chunks.Int(3))};
		out.push_back(r);
	}
	auto extents = session.db.Prepare(
	    "SELECT branch_id, file_name, seq, payload_offset, length, crc32c FROM file_extents WHERE segment_id = ?");
	extents.Bind(1, static_cast<int64_t>(segment_id));
	while (extents.Step()) {
		LiveRecord r;
		r.is_chunk = false;
		r.branch_id = extents.Int(0);
		r.file_name = extents.Text(1);
		r.seq = extents.Int(2);
		r.location = {segment_id, static_cast<uint64_t>(extents.Int(3)), static_cast<uint32_t>(extents.Int(4)),
		              static_cast<uint32_t>(extents.Int(5))};
		out.push_back(r);
	}
	return out;
}

void GarbageStore::RelocateRecords(const std::vector<std::pair<LiveRecord, ChunkLocation>> &moves) {
	auto txn = core.Write();
	auto chunk = txn.db.Prepare("UPDATE chunks SET segment_id = ?, payload_offset = ? WHERE hash = ? AND "
	                            "segment_id = ? AND payload_offset = ?");
	auto extent = txn.db.Prepare("UPDATE file_extents SET segment_id = ?, payload_offset = ? WHERE branch_id = ? AND "
	                             "file_name = ? AND seq = ? AND segment_id = ? AND payload_offset = ?");
	for (auto &move : moves) {
		auto &r = move.first;
		auto &to = move.second;
		auto &stmt = r.is_chunk ? chunk : extent;
		stmt.Reset();
		stmt.Bind(1, static_cast<int64_t>(to.segment_id)).Bind(2, static_cast<int64_t>(to.offset));
		int next = 4;
		if (r.is_chunk) {
			stmt.BindBlob(3, r.hash.data(), r.hash.size());
		} else {
			stmt.Bind(3, r.branch_id).Bind(4, r.file_name).Bind(5, r.seq);
			next = 6;
		}
		stmt.Bind(next, static_cast<int64_t>(r.location.segment_id))
		    .Bind(next + 1, static_cast<int64_t>(r.location.offset))
		    .Run();
	}
	CrashPoint("compaction.before_commit");
	txn.Commit();
}

bool GarbageStore::ForgetSegmentIfUnused(uint64_t segment_id) {
	auto txn = core.Write();
	auto used = txn.db.Prepare("SELECT (SELECT count(*) FROM chunks WHERE segment_id = ?1) + "
	                           "(SELECT count(*) FROM file_extents WHERE segment_id = ?1)");
	used.Bind(1, static_cast<int64_t>(segment_id));
	used.Step();
	if (used.Int(0) > 0) {
		return false;
	}
	txn.db.Prepare("UPDATE segments SET removed_at_us = ? WHERE segment_id = ?")
	    .Bind(1, NowMicros())
	    .Bind(2, static_cast<int64_t>(segment_id))
	    .Run();
	txn.Commit();
	return true;
}

} // namespace differential
