// Accounting and verification listings: read-only queries over the whole repository.
#include "metadata/accounting_store.hpp"

#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

//! One sum over the repository or, when `database` is not empty, over one database's rows.
static int64_t SumFor(SqliteDatabase &db, const std::string &sql, const std::string &database) {
	auto stmt = db.Prepare(sql + (database.empty() ? "" : " AND d.database_name = ?"));
	if (!database.empty()) {
		stmt.Bind(1, database);
	}
	stmt.Step();
	return stmt.Int(0);
}

StorageTotals AccountingStore::Totals(const std::string &database) {
	auto session = core.Read();
	auto &db = session.db;
	StorageTotals totals;
	if (!database.empty()) {
		RequireDatabaseId(session, database);
	}
	// Logical bytes: what every branch file and snapshot would take as plain files. A ranged file's row holds no
	// length (schema 13): its extents' lengths add up to it.
	totals.logical_bytes = static_cast<uint64_t>(
	    SumFor(db,
	           "SELECT coalesce(sum(f.length), 0) FROM branch_files f JOIN branches b USING (branch_id) JOIN "
	           "databases d USING (database_id) WHERE 1 = 1",
	           database) +
	    SumFor(db,
	           "SELECT coalesce(sum(e.length), 0) FROM file_extents e JOIN branches b USING (branch_id) JOIN "
	           "databases d USING (database_id) WHERE 1 = 1",
	           database) +
	    SumFor(db,
	           "SELECT coalesce(sum(r.file_length), 0) FROM snapshots s JOIN roots r USING (root_id) JOIN databases d "
	           "USING (database_id) WHERE 1 = 1",
	           database));
	// Only WAL bytes held in segment records: inline ones live in the metadata file.
	totals.wal_bytes = static_cast<uint64_t>(SumFor(db,
	                                                "SELECT coalesce(sum(e.length), 0) FROM file_extents e JOIN "
	                                                "branches b USING (branch_id) JOIN databases d USING "
	                                                "(database_id) WHERE e.inline_data IS NULL",
	                                                database));
	auto chunks = db.Prepare("SELECT count(*), coalesce(sum(length), 0) FROM chunks");
	chunks.Step();
	totals.chunks = chunks.Int(0);
	totals.unique_chunk_bytes = static_cast<uint64_t>(chunks.Int(1));
	auto segments = db.Prepare("SELECT count(*) FROM segments WHERE removed_at_us IS NULL");
	segments.Step();
	totals.segments = segments.Int(0);
	return totals;
}

bool AccountingStore::CheckpointMetadata() {
	auto session = core.Read();
	return session.db.TryCheckpointTruncate();
}

std::vector<uint64_t> AccountingStore::SegmentIds(const char *sql) {
	auto session = core.Read();
	std::vector<uint64_t> out;
	auto stmt = session.db.Prepare(sql);
	while (stmt.Step()) {
		out.push_back(static_cast<uint64_t>(stmt.Int(0)));
	}
	return out;
}

std::vector<uint64_t> AccountingStore::AllSegmentIds() {
	return SegmentIds("SELECT segment_id FROM segments WHERE removed_at_us IS NULL ORDER BY segment_id");
}

std::vector<uint64_t> AccountingStore::RemovedSegmentIds() {
	return SegmentIds("SELECT segment_id FROM segments WHERE removed_at_us IS NOT NULL ORDER BY segment_id");
}

uint64_t AccountingStore::HighestSegmentId() {
	return SegmentIds("SELECT coalesce(max(segment_id), 0) FROM segments").at(0);
}

static ChunkLocation LocationAt(SqliteStatement &stmt, int col) {
	return {static_cast<uint64_t>(stmt.Int(col)), static_cast<uint64_t>(stmt.Int(col + 1)),
	        static_cast<uint32_t>(stmt.Int(col + 2)), static_cast<uint32_t>(stmt.Int(col + 3))};
}

std::vector<ChunkRow> AccountingStore::AllChunks() {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT hash, segment_id, payload_offset, length, crc32c FROM chunks");
	std::vector<ChunkRow> out;
	while (stmt.Step()) {
		out.push_back({HashFromBlob(stmt.Blob(0)), LocationAt(stmt, 1)});
	}
	return out;
}

std::vector<RootRow> AccountingStore::LiveRoots() {
	auto session = core.Read();
	auto stmt = session.db.Prepare(
	    "SELECT d.database_name || ' branch ' || b.branch_name, r.file_length, r.pages FROM branch_files f "
	    "JOIN branches b USING (branch_id) JOIN databases d USING (database_id) JOIN roots r USING (root_id) "
	    "UNION ALL SELECT d.database_name || ' snapshot ' || s.snapshot_id, r.file_length, r.pages FROM snapshots s "
	    "JOIN databases d USING (database_id) JOIN roots r USING (root_id)");
	std::vector<RootRow> out;
	while (stmt.Step()) {
		out.push_back({stmt.Text(0), static_cast<uint64_t>(stmt.Int(1)), SplitHashes(stmt.Blob(2))});
	}
	return out;
}

std::vector<std::pair<std::string, RangeExtent>> AccountingStore::AllExtents() {
	auto session = core.Read();
	auto stmt =
	    session.db.Prepare("SELECT d.database_name || ' branch ' || b.branch_name || ' ' || e.file_name, "
	                       "e.segment_id, e.payload_offset, e.length, e.crc32c, e.inline_data FROM file_extents e "
	                       "JOIN branches b USING (branch_id) JOIN databases d USING (database_id)");
	std::vector<std::pair<std::string, RangeExtent>> out;
	while (stmt.Step()) {
		auto owner = stmt.Text(0);
		out.emplace_back(owner, ExtentAt(stmt, 1, owner));
	}
	return out;
}

std::vector<std::string> AccountingStore::ExtentGaps() {
	auto session = core.Read();
	// seq is part of the primary key, so count = max + 1 with min = 0 means every number from 0 to max is there.
	auto stmt = session.db.Prepare(
	    "SELECT d.database_name || ' branch ' || b.branch_name || ' ' || e.file_name, count(*), min(e.seq), "
	    "max(e.seq) FROM file_extents e JOIN branches b USING (branch_id) JOIN databases d USING (database_id) "
	    "GROUP BY e.branch_id, e.file_name HAVING min(e.seq) != 0 OR count(*) != max(e.seq) + 1");
	std::vector<std::string> out;
	while (stmt.Step()) {
		out.push_back(stmt.Text(0) + ": " + std::to_string(stmt.Int(1)) + " byte ranges numbered " +
		              std::to_string(stmt.Int(2)) + " to " + std::to_string(stmt.Int(3)) +
		              ": a byte range is missing from the metadata");
	}
	return out;
}

bool AccountingStore::HasHash(const char *sql, const Hash256 &hash) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(sql);
	stmt.BindBlob(1, hash.data(), hash.size());
	return stmt.Step();
}

bool AccountingStore::HasIndexPage(const Hash256 &page) {
	return HasHash("SELECT 1 FROM index_pages WHERE hash = ?", page);
}

bool AccountingStore::HasChunk(const Hash256 &hash) {
	return HasHash("SELECT 1 FROM chunks WHERE hash = ?", hash);
}

} // namespace differential
