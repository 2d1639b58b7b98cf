// Garbage collection in the metadata: mark what branch files, snapshots and pins reach, sweep the
// rest, and report how much of each segment is still live. Segment files are the caller's.
#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/process_identity.hpp"
#include "metadata/metadata_store.hpp"

#include <cstring>
#include <map>
#include <set>

namespace differential {

static std::vector<Hash256> Hashes(const std::vector<uint8_t> &blob) {
	std::vector<Hash256> out(blob.size() / 32);
	for (size_t i = 0; i < out.size(); i++) {
		std::memcpy(out[i].data(), blob.data() + i * 32, 32);
	}
	return out;
}

MetadataStore::GarbageReport MetadataStore::CollectGarbage() {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	GarbageReport report;
	{
		std::vector<int64_t> dead;
		auto pins = db.Prepare("SELECT pin_id, pid, process_start FROM pins");
		while (pins.Step()) {
			if (!ProcessAlive(pins.Int(1), static_cast<uint64_t>(pins.Int(2)))) {
				dead.push_back(pins.Int(0));
			}
		}
		for (auto pin : dead) {
			db.Prepare("DELETE FROM pins WHERE pin_id = ?").Bind(1, pin).Run();
		}
		report.pins_released = static_cast<int64_t>(dead.size());
	}
	// Mark: live roots, then the pages and chunks they reach.
	db.Execute("CREATE TEMP TABLE IF NOT EXISTS live_roots(root_id INTEGER PRIMARY KEY)");
	db.Execute("DELETE FROM live_roots");
	db.Execute("INSERT OR IGNORE INTO live_roots SELECT root_id FROM branch_files WHERE root_id IS NOT NULL "
	           "UNION SELECT root_id FROM snapshots UNION SELECT root_id FROM pins");
	std::set<Hash256> live_pages;
	{
		auto roots = db.Prepare("SELECT pages FROM roots WHERE root_id IN (SELECT root_id FROM live_roots)");
		while (roots.Step()) {
			for (auto &page : Hashes(roots.Blob(0))) {
				live_pages.insert(page);
			}
		}
	}
	std::set<Hash256> live_chunks;
	{
		auto page = db.Prepare("SELECT slots FROM index_pages WHERE hash = ?");
		for (auto &hash : live_pages) {
			page.Reset();
			page.BindBlob(1, hash.data(), hash.size());
			if (!page.Step()) {
				Fail(ErrorKind::IO, "corrupt_metadata",
				     "Index page " + HashToHex(hash) +
				         " of a live root is missing; nothing was cleaned up. Run differential_verify().");
			}
			for (auto &slot : Hashes(page.Blob(0))) {
				if (!IsZeroHash(slot)) {
					live_chunks.insert(slot);
				}
			}
		}
	}
	// Sweep.
	db.Execute("DELETE FROM roots WHERE root_id NOT IN (SELECT root_id FROM live_roots)");
	report.roots_deleted = db.Changes();
	auto sweep = [&](const char *select_sql, const char *delete_sql, const std::set<Hash256> &live) {
		std::vector<Hash256> dead;
		auto all = db.Prepare(select_sql);
		while (all.Step()) {
			auto blob = all.Blob(0);
			Hash256 hash;
			std::memcpy(hash.data(), blob.data(), std::min<size_t>(32, blob.size()));
			if (!live.count(hash)) {
				dead.push_back(hash);
			}
		}
		auto del = db.Prepare(delete_sql);
		for (auto &hash : dead) {
			del.Reset();
			del.BindBlob(1, hash.data(), hash.size()).Run();
		}
		return static_cast<int64_t>(dead.size());
	};
	report.pages_deleted = sweep("SELECT hash FROM index_pages", "DELETE FROM index_pages WHERE hash = ?", live_pages);
	report.chunks_deleted = sweep("SELECT hash FROM chunks", "DELETE FROM chunks WHERE hash = ?", live_chunks);
	{
		auto usage =
		    db.Prepare("SELECT s.segment_id, s.created_at_us, s.created_by_pid, s.created_by_start, "
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
			report.segments.push_back(u);
		}
	}
	CrashPoint("cleanup.before_sweep_commit");
	txn.Commit();
	return report;
}

std::vector<MetadataStore::LiveRecord> MetadataStore::LiveRecordsIn(uint64_t segment_id) {
	std::lock_guard<std::mutex> guard(lock);
	std::vector<LiveRecord> out;
	auto chunks = db.Prepare("SELECT hash, payload_offset, length, crc32c FROM chunks WHERE segment_id = ?");
	chunks.Bind(1, static_cast<int64_t>(segment_id));
	while (chunks.Step()) {
		LiveRecord r;
		auto blob = chunks.Blob(0);
		std::memcpy(r.hash.data(), blob.data(), std::min<size_t>(32, blob.size()));
		r.location = {segment_id, static_cast<uint64_t>(chunks.Int(1)), static_cast<uint32_t>(chunks.Int(2)),
		              static_cast<uint32_t>(chunks.Int(3))};
		out.push_back(r);
	}
	auto extents = db.Prepare(
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

void MetadataStore::RelocateRecords(const std::vector<std::pair<LiveRecord, ChunkLocation>> &moves) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto chunk = db.Prepare("UPDATE chunks SET segment_id = ?, payload_offset = ? WHERE hash = ? AND segment_id = ? "
	                        "AND payload_offset = ?");
	auto extent = db.Prepare("UPDATE file_extents SET segment_id = ?, payload_offset = ? WHERE branch_id = ? AND "
	                         "file_name = ? AND seq = ? AND segment_id = ? AND payload_offset = ?");
	for (auto &move : moves) {
		auto &r = move.first;
		auto &to = move.second;
		if (r.is_chunk) {
			chunk.Reset();
			chunk.Bind(1, static_cast<int64_t>(to.segment_id))
			    .Bind(2, static_cast<int64_t>(to.offset))
			    .BindBlob(3, r.hash.data(), r.hash.size())
			    .Bind(4, static_cast<int64_t>(r.location.segment_id))
			    .Bind(5, static_cast<int64_t>(r.location.offset))
			    .Run();
		} else {
			extent.Reset();
			extent.Bind(1, static_cast<int64_t>(to.segment_id))
			    .Bind(2, static_cast<int64_t>(to.offset))
			    .Bind(3, r.branch_id)
			    .Bind(4, r.file_name)
			    .Bind(5, r.seq)
			    .Bind(6, static_cast<int64_t>(r.location.segment_id))
			    .Bind(7, static_cast<int64_t>(r.location.offset))
			    .Run();
		}
	}
	CrashPoint("compaction.before_commit");
	txn.Commit();
}

bool MetadataStore::ForgetSegmentIfUnused(uint64_t segment_id) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto used = db.Prepare("SELECT (SELECT count(*) FROM chunks WHERE segment_id = ?1) + "
	                       "(SELECT count(*) FROM file_extents WHERE segment_id = ?1)");
	used.Bind(1, static_cast<int64_t>(segment_id));
	used.Step();
	if (used.Int(0) > 0) {
		return false;
	}
	db.Prepare("UPDATE segments SET removed_at_us = ? WHERE segment_id = ?")
	    .Bind(1, NowMicros())
	    .Bind(2, static_cast<int64_t>(segment_id))
	    .Run();
	txn.Commit();
	return true;
}

MetadataStore::StorageTotals MetadataStore::Totals(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	StorageTotals totals;
	std::string filter;
	if (!database.empty()) {
		RequireDatabaseId(database);
		filter = " AND d.database_name = ?";
	}
	// Logical bytes: what every branch file and snapshot would take as plain files.
	auto logical = db.Prepare(
	    "SELECT coalesce(sum(f.length), 0) FROM branch_files f JOIN branches b USING (branch_id) JOIN databases d "
	    "USING (database_id) WHERE 1 = 1" +
	    filter);
	if (!database.empty()) {
		logical.Bind(1, database);
	}
	logical.Step();
	totals.logical_bytes = static_cast<uint64_t>(logical.Int(0));
	auto snaps = db.Prepare("SELECT coalesce(sum(r.file_length), 0) FROM snapshots s JOIN roots r USING (root_id) "
	                        "JOIN databases d USING (database_id) WHERE 1 = 1" +
	                        filter);
	if (!database.empty()) {
		snaps.Bind(1, database);
	}
	snaps.Step();
	totals.logical_bytes += static_cast<uint64_t>(snaps.Int(0));
	auto wal = db.Prepare("SELECT coalesce(sum(f.length), 0) FROM branch_files f JOIN branches b USING (branch_id) "
	                      "JOIN databases d USING (database_id) WHERE f.root_id IS NULL" +
	                      filter);
	if (!database.empty()) {
		wal.Bind(1, database);
	}
	wal.Step();
	totals.wal_bytes = static_cast<uint64_t>(wal.Int(0));
	auto chunks = db.Prepare("SELECT count(*), coalesce(sum(length), 0) FROM chunks");
	chunks.Step();
	totals.chunks = chunks.Int(0);
	totals.unique_chunk_bytes = static_cast<uint64_t>(chunks.Int(1));
	auto segments = db.Prepare("SELECT count(*) FROM segments WHERE removed_at_us IS NULL");
	segments.Step();
	totals.segments = segments.Int(0);
	return totals;
}

void MetadataStore::CheckpointMetadata() {
	std::lock_guard<std::mutex> guard(lock);
	// Best effort: readers in other processes may hold the WAL; the next cleanup tries again.
	sqlite3_exec(db.Handle(), "PRAGMA wal_checkpoint(TRUNCATE)", nullptr, nullptr, nullptr);
}

std::vector<uint64_t> MetadataStore::AllSegmentIds() {
	std::lock_guard<std::mutex> guard(lock);
	std::vector<uint64_t> out;
	auto stmt = db.Prepare("SELECT segment_id FROM segments WHERE removed_at_us IS NULL ORDER BY segment_id");
	while (stmt.Step()) {
		out.push_back(static_cast<uint64_t>(stmt.Int(0)));
	}
	return out;
}

std::vector<uint64_t> MetadataStore::RemovedSegmentIds() {
	std::lock_guard<std::mutex> guard(lock);
	std::vector<uint64_t> out;
	auto stmt = db.Prepare("SELECT segment_id FROM segments WHERE removed_at_us IS NOT NULL ORDER BY segment_id");
	while (stmt.Step()) {
		out.push_back(static_cast<uint64_t>(stmt.Int(0)));
	}
	return out;
}

uint64_t MetadataStore::HighestSegmentId() {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT coalesce(max(segment_id), 0) FROM segments");
	stmt.Step();
	return static_cast<uint64_t>(stmt.Int(0));
}

} // namespace differential
