// Shared-writer state (schema 11), keyed by database_id so a dropped database leaves none behind: the options,
// the unresolved conflict per branch, the settled one, the kept snapshots exports must skip, store ids.
#include "metadata/shared_writer_store.hpp"

#include "common/errors.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

#include <algorithm>

namespace differential {

SharedWriterSettings SharedWriterStore::Settings(const std::string &database) {
	auto session = core.Read();
	SharedWriterSettings settings;
	auto stmt = session.db.Prepare("SELECT w.conflict_to_branch FROM shared_writers w JOIN databases d USING "
	                               "(database_id) WHERE d.database_name = ?");
	stmt.Bind(1, database);
	settings.shared = stmt.Step();
	settings.conflict_to_branch = settings.shared && stmt.Int(0) != 0;
	return settings;
}

void SharedWriterStore::SetSettings(const std::string &database, const SharedWriterSettings &settings) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	if (settings.shared) {
		txn.db.Prepare("INSERT OR REPLACE INTO shared_writers(database_id, conflict_to_branch) VALUES (?, ?)")
		    .Bind(1, database_id)
		    .Bind(2, settings.conflict_to_branch ? 1 : 0)
		    .Run();
	} else {
		txn.db.Prepare("DELETE FROM shared_writers WHERE database_id = ?").Bind(1, database_id).Run();
	}
	txn.Commit();
}

//! One column of the branch's shared_branches row (conflict_snapshot_id or settled_snapshot_id).
static std::optional<int64_t> BranchMark(MetadataSession &session, int64_t database_id, const std::string &branch,
                                         const char *column) {
	auto stmt = session.db.Prepare(std::string("SELECT ") + column +
	                               " FROM shared_branches WHERE database_id = ? AND branch_name = ? AND " + column +
	                               " IS NOT NULL");
	stmt.Bind(1, database_id).Bind(2, branch);
	return stmt.Step() ? std::optional<int64_t>(stmt.Int(0)) : std::nullopt;
}

static void SetBranchMark(MetadataSession &session, int64_t database_id, const std::string &branch, const char *column,
                          std::optional<int64_t> value) {
	auto stmt = session.db.Prepare(std::string("INSERT INTO shared_branches(database_id, branch_name, ") + column +
	                               ") VALUES (?1, ?2, ?3) ON CONFLICT(database_id, branch_name) DO UPDATE SET " +
	                               column + " = ?3");
	stmt.Bind(1, database_id).Bind(2, branch);
	if (value) {
		stmt.Bind(3, *value);
	}
	stmt.Run();
}

std::optional<int64_t> SharedWriterStore::Conflict(const std::string &database, const std::string &branch) {
	auto session = core.Read();
	auto database_id = FindDatabaseId(session, database);
	return database_id ? BranchMark(session, *database_id, branch, "conflict_snapshot_id") : std::nullopt;
}

void SharedWriterStore::RecordConflict(const std::string &database, const std::string &branch, int64_t kept) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	SetBranchMark(txn, database_id, branch, "conflict_snapshot_id", kept);
	txn.db.Prepare("INSERT OR REPLACE INTO kept_snapshots(database_id, snapshot_id, branch_name) VALUES (?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, kept)
	    .Bind(3, branch)
	    .Run();
	txn.Commit();
}

bool SharedWriterStore::IsKept(const std::string &database, int64_t snapshot_id) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT 1 FROM kept_snapshots k JOIN databases d USING (database_id) WHERE "
	                               "d.database_name = ? AND k.snapshot_id = ?");
	stmt.Bind(1, database).Bind(2, snapshot_id);
	return stmt.Step();
}

void SharedWriterStore::SettleConflict(const std::string &database, const std::string &branch, int64_t kept) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	SetBranchMark(txn, database_id, branch, "conflict_snapshot_id", std::nullopt);
	SetBranchMark(txn, database_id, branch, "settled_snapshot_id", kept);
	txn.Commit();
}

static void ReserveIds(MetadataSession &session, int64_t database_id, int64_t above) {
	session.db.Prepare("UPDATE databases SET next_snapshot_id = max(next_snapshot_id, ?) WHERE database_id = ?")
	    .Bind(1, above + 1)
	    .Bind(2, database_id)
	    .Run();
}

void SharedWriterStore::ReserveSnapshotIdsAbove(const std::string &database, int64_t above) {
	auto txn = core.Write();
	ReserveIds(txn, RequireDatabaseId(txn, database), above);
	txn.Commit();
}

//! Whether the branch's head snapshot is one the store has (the head last seen there) or one kept safe on
//! another branch (a settled conflict); a branch without snapshots holds nothing either.
static bool BranchAtSafeBase(MetadataSession &session, int64_t branch_id, const ImportedHead &head) {
	auto current = BranchHead(session, branch_id);
	if (!current) {
		return true;
	}
	auto seen = session.db.Prepare(
	    "SELECT snapshot_id FROM remote_heads WHERE store_url = ? AND database_name = ? AND branch_name = ?");
	seen.Bind(1, head.image.store_url).Bind(2, head.image.database).Bind(3, head.branch);
	if (seen.Step() && seen.Int(0) == *current) {
		return true;
	}
	auto database_id = FindDatabaseId(session, head.image.database);
	auto settled = database_id ? BranchMark(session, *database_id, head.branch, "settled_snapshot_id") : std::nullopt;
	return settled && *settled == *current;
}

static int64_t InsertImportedSnapshot(MetadataSession &session, int64_t database_id, int64_t branch_id, int64_t root_id,
                                      const ImportedHead &head) {
	// The store's id when it is free here (it is, unless this repository took it for work of its own).
	auto next = session.db.Prepare("SELECT next_snapshot_id FROM databases WHERE database_id = ?");
	next.Bind(1, database_id);
	next.Step();
	auto next_id = next.Int(0);
	auto used = session.db.Prepare("SELECT 1 FROM snapshots WHERE database_id = ?1 AND snapshot_id = ?2 UNION ALL "
	                               "SELECT 1 FROM expired_snapshots WHERE database_id = ?1 AND snapshot_id = ?2");
	used.Bind(1, database_id).Bind(2, head.snapshot_id);
	if (!used.Step()) {
		session.db.Prepare("UPDATE databases SET next_snapshot_id = ? WHERE database_id = ?")
		    .Bind(1, head.snapshot_id)
		    .Bind(2, database_id)
		    .Run();
	}
	NewSnapshot snapshot;
	snapshot.database_id = database_id;
	auto taken = session.db.Prepare("SELECT 1 FROM snapshots WHERE database_id = ? AND snapshot_name = ?");
	taken.Bind(1, database_id).Bind(2, head.snapshot_name.value_or(""));
	if (head.snapshot_name && !taken.Step()) {
		snapshot.name = head.snapshot_name;
	}
	snapshot.message = "published by another writer as snapshot " + std::to_string(head.snapshot_id);
	snapshot.branch_name = head.branch;
	snapshot.root_id = root_id;
	if (auto parent = BranchHead(session, branch_id)) {
		snapshot.parents.push_back(*parent);
	}
	auto local_id = AppendSnapshot(session, snapshot).snapshot_id;
	ReserveIds(session, database_id, std::max(next_id - 1, local_id));
	return local_id;
}

std::optional<int64_t> SharedWriterStore::ImportHead(const ImportedHead &head) {
	auto txn = core.Write();
	auto &db = txn.db;
	auto &database = head.image.database;
	auto database_id = RequireDatabaseId(txn, database);
	auto branch_id = RequireBranchId(txn, database, head.branch);
	if (!BranchAtSafeBase(txn, branch_id, head)) {
		return std::nullopt;
	}
	InsertRecoveredChunks(db, head.image);
	auto blob = JoinHashes(head.image.pages.data(), head.image.pages.size());
	db.Prepare("INSERT INTO roots(file_length, pages) VALUES (?, ?)")
	    .Bind(1, static_cast<int64_t>(head.image.length))
	    .BindBlob(2, blob.data(), blob.size())
	    .Run();
	auto root_id = db.LastInsertRowId();
	auto local_id = InsertImportedSnapshot(txn, database_id, branch_id, root_id, head);
	SetBranchRoot(txn, branch_id, root_id, head.image.length);
	SetBranchHead(txn, branch_id, local_id);
	db.Prepare("INSERT OR REPLACE INTO snapshot_exports(database_id, snapshot_id, store_url, descriptor, "
	           "exported_at_us) VALUES (?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, local_id)
	    .Bind(3, head.image.store_url)
	    .BindBlob(4, head.descriptor.data(), head.descriptor.size())
	    .Bind(5, NowMicros())
	    .Run();
	db.Prepare("INSERT OR REPLACE INTO remote_heads(store_url, database_name, branch_name, snapshot_id, descriptor, "
	           "etag, published_at_us) VALUES (?, ?, ?, ?, ?, ?, ?)")
	    .Bind(1, head.image.store_url)
	    .Bind(2, database)
	    .Bind(3, head.branch)
	    .Bind(4, local_id)
	    .BindBlob(5, head.descriptor.data(), head.descriptor.size())
	    .Bind(6, head.etag)
	    .Bind(7, NowMicros())
	    .Run();
	if (local_id != head.snapshot_id) {
		db.Prepare("INSERT OR REPLACE INTO store_snapshot_ids(database_id, snapshot_id, store_snapshot_id) VALUES "
		           "(?, ?, ?)")
		    .Bind(1, database_id)
		    .Bind(2, local_id)
		    .Bind(3, head.snapshot_id)
		    .Run();
	}
	txn.Commit();
	return local_id;
}

int64_t SharedWriterStore::StoreSnapshotId(const std::string &database, int64_t local_id) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT s.store_snapshot_id FROM store_snapshot_ids s JOIN databases d USING "
	                               "(database_id) WHERE d.database_name = ? AND s.snapshot_id = ?");
	stmt.Bind(1, database).Bind(2, local_id);
	return stmt.Step() ? stmt.Int(0) : local_id;
}

} // namespace differential
