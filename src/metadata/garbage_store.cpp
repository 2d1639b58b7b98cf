// Garbage collection: deletes what nothing references any more (by reference counts, in one transaction);
// segment files are the caller's (maintenance) to delete or compact.
#include "metadata/garbage_store.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "metadata/lookups.hpp"
#include "metadata/reference_counts.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

//! One row per segment: the live counters the schema's triggers keep (schema 10), not sums over the chunks.
static std::vector<SegmentUsage> SegmentUsages(SqliteDatabase &db) {
	std::vector<SegmentUsage> out;
	auto usage = db.Prepare("SELECT segment_id, created_at_us, created_by_pid, created_by_start, live_bytes, "
	                        "live_records FROM segments WHERE removed_at_us IS NULL ORDER BY segment_id");
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

//! The triggers' counters against a recount of the chunk and extent rows: a difference would make cleanup
//! compact the wrong segments (never delete a live one: that recounts first), so verify reports it.
static void AuditSegmentUsage(SqliteDatabase &db, int64_t &rows_checked, std::vector<std::string> &problems) {
	// `segment_id != 0` here and below: SQLite uses the partial index extents_by_segment only for a statement that
	// says so; it leaves out inline extents (segment 0), which no segment holds.
	auto recount =
	    db.Prepare("SELECT segment_id, live_bytes, live_records, "
	               "coalesce((SELECT sum(length) FROM chunks c WHERE c.segment_id = s.segment_id), 0) + "
	               "coalesce((SELECT sum(length) FROM file_extents e WHERE e.segment_id = s.segment_id AND "
	               "e.segment_id != 0), 0), "
	               "(SELECT count(*) FROM chunks c WHERE c.segment_id = s.segment_id) + "
	               "(SELECT count(*) FROM file_extents e WHERE e.segment_id = s.segment_id AND e.segment_id != 0) "
	               "FROM segments s WHERE removed_at_us IS NULL");
	while (recount.Step()) {
		rows_checked++;
		if (recount.Int(1) != recount.Int(3) || recount.Int(2) != recount.Int(4)) {
			problems.push_back("segment " + std::to_string(recount.Int(0)) + " records " +
			                   std::to_string(recount.Int(2)) + " live records of " + std::to_string(recount.Int(1)) +
			                   " bytes, its rows hold " + std::to_string(recount.Int(4)) + " of " +
			                   std::to_string(recount.Int(3)));
		}
	}
}

GarbageReport GarbageStore::CollectGarbage() {
	// Reader pins first, and held until the sweep has committed: a reader pins under the same lock, so it
	// either pinned before (and is seen here) or reads the metadata after the sweep.
	auto pinned = pins.Lock();
	GarbageReport report;
	report.pins_released = DeletePinsOfGoneProcesses(pinned.db);
	auto reader_pins = pins.PinnedRoots(pinned);
	auto txn = core.Write();
	auto &db = txn.db;
	report.pins_released += DeletePinsOfGoneProcesses(db);
	CountNewReferences(db, reader_pins);
	SweepUnreferenced(db, reader_pins, report);
	report.segments = SegmentUsages(db);
	CrashPoint("cleanup.before_sweep_commit");
	txn.Commit();
	pinned.Commit();
	return report;
}

std::vector<std::string> GarbageStore::AuditReferences(int64_t &rows_checked) {
	auto session = core.Read();
	auto problems = AuditReferenceCounts(session.db, rows_checked);
	AuditSegmentUsage(session.db, rows_checked, problems);
	return problems;
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
	    "SELECT branch_id, file_name, seq, payload_offset, length, crc32c FROM file_extents WHERE segment_id = ? AND "
	    "segment_id != 0");
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
	                           "(SELECT count(*) FROM file_extents WHERE segment_id = ?1 AND segment_id != 0)");
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
