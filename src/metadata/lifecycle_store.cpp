// History lifecycle: restore, clone, drop, expiry, each one metadata transaction.
#include "metadata/lifecycle_store.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

#include <algorithm>

namespace differential {

static std::string BranchText(const std::string &database, const std::string &branch) {
	return "branch " + QuoteName(branch) + " of database " + QuoteName(database);
}

SnapshotRecord LifecycleStore::RestoreBranch(const std::string &database, const std::string &branch,
                                             int64_t snapshot_id) {
	auto txn = core.Write();
	NewSnapshot snapshot;
	snapshot.database_id = RequireDatabaseId(txn, database);
	auto branch_id = RequireBranchId(txn, database, branch);
	StoredFile root;
	snapshot.root_id = RequireSnapshotRoot(txn, snapshot.database_id, database, snapshot_id, root);
	snapshot.message = "restored from snapshot " + std::to_string(snapshot_id);
	snapshot.branch_name = branch;
	auto head = BranchHead(txn, branch_id);
	if (head) {
		snapshot.parents.push_back(*head);
	}
	if (!head || *head != snapshot_id) {
		snapshot.parents.push_back(snapshot_id);
	}
	auto record = AppendSnapshot(txn, snapshot);
	SetBranchHead(txn, branch_id, record.snapshot_id);
	SetBranchRoot(txn, branch_id, snapshot.root_id, root.length);
	CrashPoint("restore.before_commit");
	txn.Commit();
	return record;
}

DatabaseRecord LifecycleStore::CloneDatabase(const std::string &source, const std::string &target,
                                             int64_t snapshot_id) {
	auto txn = core.Write();
	auto &db = txn.db;
	auto source_id = RequireDatabaseId(txn, source);
	auto exists = db.Prepare("SELECT 1 FROM databases WHERE database_name = ?");
	exists.Bind(1, target);
	if (exists.Step()) {
		Fail(ErrorCode::DATABASE_EXISTS,
		     "Database " + QuoteName(target) +
		         " already exists. Clone into a new name, or drop it first with differential_drop_database('" + target +
		         "').");
	}
	StoredFile root;
	auto root_id = RequireSnapshotRoot(txn, source_id, source, snapshot_id, root);
	DatabaseRecord record;
	record.name = target;
	record.uuid = NewUuid();
	record.created_at_us = NowMicros();
	record.branch_count = 1;
	db.Prepare("INSERT INTO databases(database_name, database_uuid, created_at_us, cloned_from) VALUES (?, ?, ?, ?)")
	    .Bind(1, target)
	    .Bind(2, record.uuid)
	    .Bind(3, record.created_at_us)
	    .Bind(4, source + "@" + std::to_string(snapshot_id))
	    .Run();
	record.database_id = db.LastInsertRowId();
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us) VALUES (?, 'main', ?)")
	    .Bind(1, record.database_id)
	    .Bind(2, record.created_at_us)
	    .Run();
	SetBranchRoot(txn, db.LastInsertRowId(), root_id, root.length);
	// A clone of an S3 database exports to its source's DATA_PATH, so its export reuses the source's packs.
	db.Prepare("UPDATE databases SET data_path = (SELECT data_path FROM databases WHERE database_id = ?), "
	           "export_from_snapshot = 1 WHERE database_id = ?")
	    .Bind(1, source_id)
	    .Bind(2, record.database_id)
	    .Run();
	txn.Commit();
	return record;
}

void LifecycleStore::DropBranch(const std::string &database, const std::string &branch) {
	auto txn = core.Write();
	RequireDatabaseId(txn, database);
	if (branch == "main") {
		Fail(ErrorCode::CANNOT_DROP_MAIN,
		     "The main branch of database " + QuoteName(database) +
		         " cannot be dropped. Drop the whole database with differential_drop_database('" + database +
		         "') instead.");
	}
	DeleteBranch(txn, RequireBranchId(txn, database, branch));
	txn.Commit();
}

//! Deletes from each table the rows `where` (with one `?`, bound to the database's id) selects.
static void DeleteWhere(MetadataSession &session, std::initializer_list<const char *> tables, const std::string &where,
                        int64_t database_id) {
	for (auto table : tables) {
		session.db.Prepare(std::string("DELETE FROM ") + table + " WHERE " + where).Bind(1, database_id).Run();
	}
}

void LifecycleStore::DropDatabase(const std::string &database) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	DeleteWhere(txn, {"file_extents", "branch_files"},
	            "branch_id IN (SELECT branch_id FROM branches WHERE database_id = ?)", database_id);
	// Rows keyed by the database's uuid or name: its shipping and the heads it saw in its store.
	DeleteWhere(txn, {"wal_ship_state", "wal_shipping"},
	            "database_uuid = (SELECT database_uuid FROM databases WHERE database_id = ?)", database_id);
	DeleteWhere(txn, {"remote_heads"}, "database_name = (SELECT database_name FROM databases WHERE database_id = ?)",
	            database_id);
	// Everything keyed by database_id, the database's own row last. Its id is never given out again.
	DeleteWhere(txn,
	            {"branches", "snapshots", "snapshot_parents", "expired_snapshots", "merge_requests",
	             "merge_resolutions", "merge_publications", "snapshot_exports", "shared_writers", "shared_branches",
	             "kept_snapshots", "store_snapshot_ids", "databases"},
	            "database_id = ?", database_id);
	txn.Commit();
}

//! Refuses, before anything is written, a snapshot that does not exist or is a branch head.
static void RequireExpirable(MetadataSession &session, int64_t database_id, const std::string &database, int64_t id) {
	auto exists = session.db.Prepare("SELECT 1 FROM snapshots WHERE database_id = ? AND snapshot_id = ?");
	exists.Bind(1, database_id).Bind(2, id);
	if (!exists.Step()) {
		Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
		     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(id) +
		         " (nothing was expired). List its snapshots with differential_snapshots('" + database + "').");
	}
	auto head = session.db.Prepare("SELECT branch_name FROM branches WHERE database_id = ? AND head_snapshot_id = ?");
	head.Bind(1, database_id).Bind(2, id);
	if (head.Step()) {
		Fail(ErrorCode::SNAPSHOT_IS_BRANCH_HEAD,
		     "Snapshot " + std::to_string(id) + " is the head of " + BranchText(database, head.Text(0)) +
		         " and cannot be expired (nothing was expired). Take a newer snapshot of the branch or drop it "
		         "first.");
	}
}

std::vector<int64_t> LifecycleStore::ExpireSnapshots(const std::string &database,
                                                     const std::vector<int64_t> &requested) {
	// Each snapshot once, in order, however often it was named.
	std::vector<int64_t> snapshot_ids(requested);
	std::sort(snapshot_ids.begin(), snapshot_ids.end());
	snapshot_ids.erase(std::unique(snapshot_ids.begin(), snapshot_ids.end()), snapshot_ids.end());
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	for (auto id : snapshot_ids) {
		RequireExpirable(txn, database_id, database, id);
	}
	auto now = NowMicros();
	for (auto id : snapshot_ids) {
		txn.db
		    .Prepare("INSERT OR IGNORE INTO expired_snapshots(database_id, snapshot_id, snapshot_name, expired_at_us) "
		             "SELECT database_id, snapshot_id, snapshot_name, ? FROM snapshots WHERE database_id = ? AND "
		             "snapshot_id = ?")
		    .Bind(1, now)
		    .Bind(2, database_id)
		    .Bind(3, id)
		    .Run();
		// Parent edges stay: the ancestry of later snapshots still runs through this one.
		txn.db.Prepare("DELETE FROM snapshots WHERE database_id = ? AND snapshot_id = ?")
		    .Bind(1, database_id)
		    .Bind(2, id)
		    .Run();
	}
	txn.Commit();
	return snapshot_ids;
}

std::vector<int64_t> LifecycleStore::ExpireSnapshotsBefore(const std::string &database, int64_t cutoff_us) {
	std::vector<int64_t> candidates;
	{
		auto session = core.Read();
		auto database_id = RequireDatabaseId(session, database);
		auto stmt = session.db.Prepare(
		    "SELECT snapshot_id FROM snapshots s WHERE database_id = ? AND created_at_us < ? AND NOT EXISTS (SELECT 1 "
		    "FROM branches b WHERE b.database_id = s.database_id AND b.head_snapshot_id = s.snapshot_id) ORDER BY "
		    "snapshot_id");
		stmt.Bind(1, database_id).Bind(2, cutoff_us);
		while (stmt.Step()) {
			candidates.push_back(stmt.Int(0));
		}
	}
	return ExpireSnapshots(database, candidates);
}

} // namespace differential
