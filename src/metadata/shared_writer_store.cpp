// Shared-writer state lives in repository_meta rows keyed by database (no schema change): the options,
// the unresolved conflict per branch, the settled one, and the kept snapshots exports must skip.
#include "metadata/shared_writer_store.hpp"

#include "common/errors.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

#include <algorithm>

namespace differential {

static std::string SettingsKey(const std::string &database) {
	return "shared_writers/" + database;
}
static std::string ConflictKey(const std::string &database, const std::string &branch) {
	return "conflict/" + database + "/" + branch;
}
static std::string SettledKey(const std::string &database, const std::string &branch) {
	return "settled/" + database + "/" + branch;
}

static std::optional<std::string> MetaValue(MetadataSession &session, const std::string &key) {
	auto stmt = session.db.Prepare("SELECT value FROM repository_meta WHERE key = ?");
	stmt.Bind(1, key);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	return stmt.Text(0);
}

static void SetMeta(MetadataSession &session, const std::string &key, const std::string &value) {
	session.db.Prepare("INSERT OR REPLACE INTO repository_meta(key, value) VALUES (?, ?)")
	    .Bind(1, key)
	    .Bind(2, value)
	    .Run();
}

SharedWriterSettings SharedWriterStore::Settings(const std::string &database) {
	auto session = core.Read();
	SharedWriterSettings settings;
	auto value = MetaValue(session, SettingsKey(database));
	settings.shared = value.has_value();
	settings.conflict_to_branch = value && *value == "shared branch";
	return settings;
}

void SharedWriterStore::SetSettings(const std::string &database, const SharedWriterSettings &settings) {
	auto txn = core.Write();
	RequireDatabaseId(txn, database);
	if (settings.shared) {
		SetMeta(txn, SettingsKey(database), settings.conflict_to_branch ? "shared branch" : "shared fail");
	} else {
		txn.db.Prepare("DELETE FROM repository_meta WHERE key = ?").Bind(1, SettingsKey(database)).Run();
	}
	txn.Commit();
}

std::optional<int64_t> SharedWriterStore::Conflict(const std::string &database, const std::string &branch) {
	auto session = core.Read();
	auto value = MetaValue(session, ConflictKey(database, branch));
	return value ? std::optional<int64_t>(std::stoll(*value)) : std::nullopt;
}

void SharedWriterStore::RecordConflict(const std::string &database, const std::string &branch, int64_t kept) {
	auto txn = core.Write();
	SetMeta(txn, ConflictKey(database, branch), std::to_string(kept));
	SetMeta(txn, "kept/" + database + "/" + std::to_string(kept), branch);
	txn.Commit();
}

bool SharedWriterStore::IsKept(const std::string &database, int64_t snapshot_id) {
	auto session = core.Read();
	return MetaValue(session, "kept/" + database + "/" + std::to_string(snapshot_id)).has_value();
}

void SharedWriterStore::SettleConflict(const std::string &database, const std::string &branch, int64_t kept) {
	auto txn = core.Write();
	txn.db.Prepare("DELETE FROM repository_meta WHERE key = ?").Bind(1, ConflictKey(database, branch)).Run();
	SetMeta(txn, SettledKey(database, branch), std::to_string(kept));
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
	auto settled = MetaValue(session, SettledKey(head.image.database, head.branch));
	return settled && std::stoll(*settled) == *current;
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
		SetMeta(txn, "store_id/" + database + "/" + std::to_string(local_id), std::to_string(head.snapshot_id));
	}
	txn.Commit();
	return local_id;
}

int64_t SharedWriterStore::StoreSnapshotId(const std::string &database, int64_t local_id) {
	auto session = core.Read();
	auto value = MetaValue(session, "store_id/" + database + "/" + std::to_string(local_id));
	return value ? std::stoll(*value) : local_id;
}

} // namespace differential
