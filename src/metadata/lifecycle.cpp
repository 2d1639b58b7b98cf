// History lifecycle in the metadata: restore, clone, drop, expiry. Each is one transaction, and
// every check happens inside it before anything is written.
#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/metadata_store.hpp"

#include <algorithm>

namespace differential {

static std::string BranchText(const std::string &database, const std::string &branch) {
	return "branch " + QuoteName(branch) + " of database " + QuoteName(database);
}

bool MetadataStore::HasUnsnapshottedChanges(const std::string &database, const std::string &branch, bool &has_wal) {
	std::lock_guard<std::mutex> guard(lock);
	auto branch_id = RequireBranchId(database, branch);
	auto wal = db.Prepare("SELECT count(*) FROM branch_files WHERE branch_id = ? AND file_name != ? AND length > 0");
	wal.Bind(1, branch_id).Bind(2, MAIN_FILE_NAME);
	wal.Step();
	has_wal = wal.Int(0) > 0;
	auto state =
	    db.Prepare("SELECT f.root_id, s.root_id FROM branches b "
	               "LEFT JOIN branch_files f ON f.branch_id = b.branch_id AND f.file_name = ? "
	               "LEFT JOIN snapshots s ON s.database_id = b.database_id AND s.snapshot_id = b.head_snapshot_id "
	               "WHERE b.branch_id = ?");
	state.Bind(1, MAIN_FILE_NAME).Bind(2, branch_id);
	state.Step();
	if (state.IsNull(0)) {
		return has_wal;
	}
	if (state.IsNull(1)) {
		return true;
	}
	// Roots are not content-addressed, so compare their page lists, not their ids.
	StoredFile current, head;
	LoadRoot(state.Int(0), current);
	LoadRoot(state.Int(1), head);
	return has_wal || current.length != head.length || current.pages != head.pages;
}

SnapshotRecord MetadataStore::RestoreBranch(const std::string &database, const std::string &branch,
                                            int64_t snapshot_id) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	auto branch_id = RequireBranchId(database, branch);
	StoredFile root;
	auto root_id = RequireSnapshotRoot(database_id, database, snapshot_id, root);
	int64_t head = -1;
	{
		auto stmt = db.Prepare("SELECT head_snapshot_id FROM branches WHERE branch_id = ?");
		stmt.Bind(1, branch_id);
		if (stmt.Step() && !stmt.IsNull(0)) {
			head = stmt.Int(0);
		}
	}
	int64_t new_id;
	{
		auto next = db.Prepare("SELECT next_snapshot_id FROM databases WHERE database_id = ?");
		next.Bind(1, database_id);
		next.Step();
		new_id = next.Int(0);
	}
	auto now = NowMicros();
	auto message = "restored from snapshot " + std::to_string(snapshot_id);
	db.Prepare("INSERT INTO snapshots VALUES (?, ?, NULL, NULL, ?, ?, ?, ?, NULL)")
	    .Bind(1, database_id)
	    .Bind(2, new_id)
	    .Bind(3, message)
	    .Bind(4, now)
	    .Bind(5, branch)
	    .Bind(6, root_id)
	    .Run();
	int ordinal = 0;
	for (auto parent : {head, snapshot_id}) {
		if (parent >= 0 && (ordinal == 0 || parent != head)) {
			db.Prepare("INSERT INTO snapshot_parents VALUES (?, ?, ?, ?)")
			    .Bind(1, database_id)
			    .Bind(2, new_id)
			    .Bind(3, ordinal++)
			    .Bind(4, parent)
			    .Run();
		}
	}
	db.Prepare("UPDATE databases SET next_snapshot_id = ? WHERE database_id = ?")
	    .Bind(1, new_id + 1)
	    .Bind(2, database_id)
	    .Run();
	db.Prepare("UPDATE branches SET head_snapshot_id = ? WHERE branch_id = ?").Bind(1, new_id).Bind(2, branch_id).Run();
	SetBranchRoot(branch_id, root_id, root.length);
	CrashPoint("restore.before_commit");
	txn.Commit();
	SnapshotRecord r;
	r.snapshot_id = new_id;
	r.has_message = true;
	r.message = message;
	r.created_at_us = now;
	r.branch_name = branch;
	r.root_id = root_id;
	return r;
}

DatabaseRecord MetadataStore::CloneDatabase(const std::string &source, const std::string &target, int64_t snapshot_id) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto source_id = RequireDatabaseId(source);
	auto exists = db.Prepare("SELECT 1 FROM databases WHERE database_name = ?");
	exists.Bind(1, target);
	if (exists.Step()) {
		Fail(ErrorKind::CONFLICT, "database_exists",
		     "Database " + QuoteName(target) +
		         " already exists. Clone into a new name, or drop it first with differential_drop_database('" + target +
		         "').");
	}
	StoredFile root;
	auto root_id = RequireSnapshotRoot(source_id, source, snapshot_id, root);
	auto now = NowMicros();
	DatabaseRecord record;
	record.name = target;
	record.uuid = NewUuid();
	record.created_at_us = now;
	record.branch_count = 1;
	db.Prepare("INSERT INTO databases(database_name, database_uuid, created_at_us, cloned_from) VALUES (?, ?, ?, ?)")
	    .Bind(1, target)
	    .Bind(2, record.uuid)
	    .Bind(3, now)
	    .Bind(4, source + "@" + std::to_string(snapshot_id))
	    .Run();
	record.database_id = db.LastInsertRowId();
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us) VALUES (?, 'main', ?)")
	    .Bind(1, record.database_id)
	    .Bind(2, now)
	    .Run();
	SetBranchRoot(db.LastInsertRowId(), root_id, root.length);
	txn.Commit();
	return record;
}

void MetadataStore::DropBranch(const std::string &database, const std::string &branch) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	RequireDatabaseId(database);
	if (branch == "main") {
		Fail(ErrorKind::INVALID_INPUT, "cannot_drop_main",
		     "The main branch of database " + QuoteName(database) +
		         " cannot be dropped. Drop the whole database with differential_drop_database('" + database +
		         "') instead.");
	}
	auto branch_id = RequireBranchId(database, branch);
	db.Prepare("DELETE FROM file_extents WHERE branch_id = ?").Bind(1, branch_id).Run();
	db.Prepare("DELETE FROM branch_files WHERE branch_id = ?").Bind(1, branch_id).Run();
	db.Prepare("DELETE FROM branches WHERE branch_id = ?").Bind(1, branch_id).Run();
	txn.Commit();
}

void MetadataStore::DropDatabase(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	for (auto table : {"file_extents", "branch_files"}) {
		db.Prepare(std::string("DELETE FROM ") + table +
		           " WHERE branch_id IN (SELECT branch_id FROM branches WHERE database_id = ?)")
		    .Bind(1, database_id)
		    .Run();
	}
	for (auto table : {"branches", "snapshots", "snapshot_parents", "expired_snapshots", "merge_requests",
	                   "merge_resolutions", "databases"}) {
		db.Prepare(std::string("DELETE FROM ") + table + " WHERE database_id = ?").Bind(1, database_id).Run();
	}
	txn.Commit();
}

std::vector<int64_t> MetadataStore::ExpireSnapshots(const std::string &database,
                                                    const std::vector<int64_t> &requested) {
	// Each snapshot once, in order, however often it was named.
	std::vector<int64_t> snapshot_ids(requested);
	std::sort(snapshot_ids.begin(), snapshot_ids.end());
	snapshot_ids.erase(std::unique(snapshot_ids.begin(), snapshot_ids.end()), snapshot_ids.end());
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	for (auto id : snapshot_ids) {
		auto exists = db.Prepare("SELECT 1 FROM snapshots WHERE database_id = ? AND snapshot_id = ?");
		exists.Bind(1, database_id).Bind(2, id);
		if (!exists.Step()) {
			Fail(ErrorKind::NOT_FOUND, "snapshot_not_found",
			     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(id) +
			         " (nothing was expired). List its snapshots with differential_snapshots('" + database + "').");
		}
		auto head = db.Prepare("SELECT branch_name FROM branches WHERE database_id = ? AND head_snapshot_id = ?");
		head.Bind(1, database_id).Bind(2, id);
		if (head.Step()) {
			Fail(ErrorKind::INVALID_INPUT, "snapshot_is_branch_head",
			     "Snapshot " + std::to_string(id) + " is the head of " + BranchText(database, head.Text(0)) +
			         " and cannot be expired (nothing was expired). Take a newer snapshot of the branch or drop it "
			         "first.");
		}
	}
	auto now = NowMicros();
	for (auto id : snapshot_ids) {
		db.Prepare("INSERT OR IGNORE INTO expired_snapshots SELECT database_id, snapshot_id, snapshot_name, ? FROM "
		           "snapshots WHERE database_id = ? AND snapshot_id = ?")
		    .Bind(1, now)
		    .Bind(2, database_id)
		    .Bind(3, id)
		    .Run();
		// Parent edges stay: the ancestry of later snapshots still runs through this one.
		db.Prepare("DELETE FROM snapshots WHERE database_id = ? AND snapshot_id = ?")
		    .Bind(1, database_id)
		    .Bind(2, id)
		    .Run();
	}
	txn.Commit();
	return snapshot_ids;
}

std::vector<int64_t> MetadataStore::ExpireSnapshotsBefore(const std::string &database, int64_t cutoff_us) {
	std::vector<int64_t> candidates;
	{
		std::lock_guard<std::mutex> guard(lock);
		auto database_id = RequireDatabaseId(database);
		auto stmt = db.Prepare("SELECT snapshot_id FROM snapshots s WHERE database_id = ? AND created_at_us < ? AND "
		                       "NOT EXISTS (SELECT 1 FROM branches b WHERE b.database_id = s.database_id AND "
		                       "b.head_snapshot_id = s.snapshot_id) ORDER BY snapshot_id");
		stmt.Bind(1, database_id).Bind(2, cutoff_us);
		while (stmt.Step()) {
			candidates.push_back(stmt.Int(0));
		}
	}
	return ExpireSnapshots(database, candidates);
}

std::map<int64_t, std::vector<int64_t>> MetadataStore::SnapshotParents(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	auto database_id = RequireDatabaseId(database);
	std::map<int64_t, std::vector<int64_t>> graph;
	auto ids = db.Prepare("SELECT snapshot_id FROM snapshots WHERE database_id = ?1 UNION "
	                      "SELECT snapshot_id FROM expired_snapshots WHERE database_id = ?1");
	ids.Bind(1, database_id);
	while (ids.Step()) {
		graph[ids.Int(0)];
	}
	auto edges = db.Prepare("SELECT snapshot_id, parent_snapshot_id FROM snapshot_parents WHERE database_id = ? "
	                        "ORDER BY snapshot_id, ordinal");
	edges.Bind(1, database_id);
	while (edges.Step()) {
		graph[edges.Int(0)].push_back(edges.Int(1));
		graph[edges.Int(1)];
	}
	return graph;
}

std::optional<int64_t> MetadataStore::SnapshotExpiredAt(const std::string &database, int64_t snapshot_id) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT e.expired_at_us FROM expired_snapshots e JOIN databases d USING (database_id) "
	                       "WHERE d.database_name = ? AND e.snapshot_id = ?");
	stmt.Bind(1, database).Bind(2, snapshot_id);
	if (stmt.Step()) {
		return stmt.Int(0);
	}
	return std::nullopt;
}

} // namespace differential
