// Reference counts on index pages and chunks, kept by cleanup alone: a writer inserts rows uncounted (the schema's
// defaults), so no write path has to know; triggers record every root a change stops referencing.
#include "metadata/reference_counts.hpp"

#include "common/errors.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

#include <unordered_map>

namespace differential {

//! Referenced by a row whose change or deletion a trigger records (a branch file, a snapshot, a writer's pin);
//! reader pins, in pins.sqlite, are not seen here.
static bool RootReferenced(SqliteDatabase &db, int64_t root_id) {
	auto stmt = db.Prepare("SELECT EXISTS(SELECT 1 FROM branch_files WHERE root_id = ?1) OR "
	                       "EXISTS(SELECT 1 FROM snapshots WHERE root_id = ?1) OR "
	                       "EXISTS(SELECT 1 FROM pins WHERE root_id = ?1)");
	stmt.Bind(1, root_id);
	return stmt.Step() && stmt.Int(0) != 0;
}

//! Adds `delta` to the count of every non-zero hash of the blob in `table`; returns false, naming the first
//! hash without a row in `missing`, when one had none.
static bool AddToCounts(SqliteDatabase &db, const char *table, const std::vector<uint8_t> &blob, int delta,
                        Hash256 *missing = nullptr) {
	auto update = db.Prepare(std::string("UPDATE ") + table + " SET refs = refs + ?2 WHERE hash = ?1" +
	                         (delta < 0 ? " AND refs > 0" : ""));
	bool all_found = true;
	for (auto &hash : SplitHashes(blob)) {
		if (IsZeroHash(hash)) {
			continue;
		}
		update.Reset();
		update.BindBlob(1, hash.data(), hash.size()).Bind(2, static_cast<int64_t>(delta)).Run();
		if (db.Changes() == 0 && all_found) {
			all_found = false;
			if (missing) {
				*missing = hash;
			}
		}
	}
	return all_found;
}

static void CountNewRoots(SqliteDatabase &db, const std::unordered_set<int64_t> &reader_pins) {
	std::vector<int64_t> counted;
	auto roots = db.Prepare("SELECT root_id, pages FROM roots WHERE counted = 0");
	while (roots.Step()) {
		auto root_id = roots.Int(0);
		Hash256 missing {};
		if (!AddToCounts(db, "index_pages", roots.Blob(1), 1, &missing) &&
		    (RootReferenced(db, root_id) || reader_pins.count(root_id))) {
			Fail(ErrorCode::CORRUPT_METADATA, "Index page " + HashToHex(missing) + " of the live root " +
			                                      std::to_string(root_id) +
			                                      " is missing; nothing was cleaned up. Run differential_verify().");
		}
		counted.push_back(root_id);
	}
	// A new root may never have been referenced (nothing released it): it is a candidate like a released one.
	auto mark = db.Prepare("UPDATE roots SET counted = 1 WHERE root_id = ?");
	auto candidate = db.Prepare("INSERT OR IGNORE INTO root_candidates(root_id) VALUES (?)");
	for (auto root_id : counted) {
		mark.Reset();
		mark.Bind(1, root_id).Run();
		candidate.Reset();
		candidate.Bind(1, root_id).Run();
	}
}

static void CountNewPages(SqliteDatabase &db) {
	std::vector<Hash256> counted;
	auto pages = db.Prepare("SELECT hash, slots FROM index_pages WHERE counted = 0");
	while (pages.Step()) {
		// A slot without a chunk row is a damaged page; differential_verify reports it, counting skips it.
		AddToCounts(db, "chunks", pages.Blob(1), 1);
		counted.push_back(HashFromBlob(pages.Blob(0)));
	}
	auto mark = db.Prepare("UPDATE index_pages SET counted = 1 WHERE hash = ?");
	for (auto &hash : counted) {
		mark.Reset();
		mark.BindBlob(1, hash.data(), hash.size()).Run();
	}
}

void CountNewReferences(SqliteDatabase &db, const std::unordered_set<int64_t> &reader_pins) {
	CountNewRoots(db, reader_pins);
	CountNewPages(db);
}

static int64_t DeleteDeadRoots(SqliteDatabase &db, const std::unordered_set<int64_t> &reader_pins) {
	std::vector<int64_t> candidates;
	{
		auto all = db.Prepare("SELECT root_id FROM root_candidates");
		while (all.Step()) {
			candidates.push_back(all.Int(0));
		}
	}
	int64_t deleted = 0;
	auto pages = db.Prepare("SELECT pages FROM roots WHERE root_id = ?");
	auto del = db.Prepare("DELETE FROM roots WHERE root_id = ?");
	auto settled = db.Prepare("DELETE FROM root_candidates WHERE root_id = ?");
	for (auto root_id : candidates) {
		pages.Reset();
		pages.Bind(1, root_id);
		bool exists = pages.Step();
		auto list = exists ? pages.Blob(0) : std::vector<uint8_t>();
		pages.Reset();
		bool dead = exists && !RootReferenced(db, root_id);
		if (dead && reader_pins.count(root_id)) {
			// Only a reader pins it: no trigger sees a reader's pin go, so it stays a candidate until then.
			continue;
		}
		// A candidate still referenced becomes one again when its last reference goes (the triggers).
		if (dead) {
			AddToCounts(db, "index_pages", list, -1);
			del.Reset();
			del.Bind(1, root_id).Run();
			deleted++;
		}
		settled.Reset();
		settled.Bind(1, root_id).Run();
	}
	return deleted;
}

static int64_t DeleteUnreferencedPages(SqliteDatabase &db) {
	std::vector<Hash256> dead;
	auto pages = db.Prepare("SELECT hash, slots FROM index_pages WHERE refs = 0");
	while (pages.Step()) {
		AddToCounts(db, "chunks", pages.Blob(1), -1);
		dead.push_back(HashFromBlob(pages.Blob(0)));
	}
	auto del = db.Prepare("DELETE FROM index_pages WHERE hash = ?");
	for (auto &hash : dead) {
		del.Reset();
		del.BindBlob(1, hash.data(), hash.size()).Run();
	}
	return static_cast<int64_t>(dead.size());
}

void SweepUnreferenced(SqliteDatabase &db, const std::unordered_set<int64_t> &reader_pins, GarbageReport &report) {
	report.roots_deleted = DeleteDeadRoots(db, reader_pins);
	report.pages_deleted = DeleteUnreferencedPages(db);
	db.Execute("DELETE FROM chunks WHERE refs = 0");
	report.chunks_deleted = db.Changes();
}

using Counts = std::unordered_map<Hash256, int64_t, Hash256Hasher>;

//! Compares the stored count of every row of `table` with the recomputed one.
static void CompareCounts(SqliteDatabase &db, const char *table, const Counts &expected, int64_t &rows_checked,
                          std::vector<std::string> &problems) {
	auto rows = db.Prepare(std::string("SELECT hash, refs FROM ") + table);
	while (rows.Step()) {
		rows_checked++;
		auto hash = HashFromBlob(rows.Blob(0));
		auto found = expected.find(hash);
		auto want = found == expected.end() ? 0 : found->second;
		if (rows.Int(1) != want) {
			problems.push_back(std::string(table) + " row " + HashToHex(hash) + " records " +
			                   std::to_string(rows.Int(1)) + " references, the rows hold " + std::to_string(want));
		}
	}
}

std::vector<std::string> AuditReferenceCounts(SqliteDatabase &db, int64_t &rows_checked) {
	std::vector<std::string> problems;
	Counts page_refs;
	Counts chunk_refs;
	auto roots = db.Prepare("SELECT root_id, pages FROM roots WHERE counted = 1");
	while (roots.Step()) {
		rows_checked++;
		for (auto &page : SplitHashes(roots.Blob(1))) {
			page_refs[page]++;
		}
		if (!RootReferenced(db, roots.Int(0))) {
			auto candidate = db.Prepare("SELECT 1 FROM root_candidates WHERE root_id = ?");
			if (!candidate.Bind(1, roots.Int(0)).Step()) {
				problems.push_back("root " + std::to_string(roots.Int(0)) +
				                   " is referenced by nothing and is no cleanup candidate (it would leak)");
			}
		}
	}
	auto pages = db.Prepare("SELECT slots FROM index_pages WHERE counted = 1");
	while (pages.Step()) {
		for (auto &slot : SplitHashes(pages.Blob(0))) {
			if (!IsZeroHash(slot)) {
				chunk_refs[slot]++;
			}
		}
	}
	CompareCounts(db, "index_pages", page_refs, rows_checked, problems);
	CompareCounts(db, "chunks", chunk_refs, rows_checked, problems);
	return problems;
}

} // namespace differential
