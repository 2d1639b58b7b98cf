// Shared lookups and history writes: the one place that knows how a snapshot row, a branch's state
// and a root are laid out in the schema.
#include "metadata/lookups.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/sqlite.hpp"

#include <cstring>
#include <memory>

namespace differential {

RangeExtent ExtentAt(SqliteStatement &stmt, int first_col, const std::string &file) {
	RangeExtent extent;
	extent.location = {static_cast<uint64_t>(stmt.Int(first_col)), static_cast<uint64_t>(stmt.Int(first_col + 1)),
	                   static_cast<uint32_t>(stmt.Int(first_col + 2)), static_cast<uint32_t>(stmt.Int(first_col + 3))};
	if (stmt.IsNull(first_col + 4)) {
		return extent;
	}
	auto bytes = std::make_shared<std::vector<uint8_t>>(stmt.Blob(first_col + 4));
	if (bytes->size() != extent.location.length) {
		Fail(ErrorCode::CORRUPT_METADATA, "An inline byte range of " + file + " holds " +
		                                      std::to_string(bytes->size()) + " bytes, its row says " +
		                                      std::to_string(extent.location.length) + ". Run differential_verify().");
	}
	extent.inline_bytes = std::move(bytes);
	return extent;
}

std::optional<int64_t> FindDatabaseId(MetadataSession &session, const std::string &database) {
	auto stmt = session.db.Prepare("SELECT database_id FROM databases WHERE database_name = ?");
	stmt.Bind(1, database);
	return stmt.Step() ? std::optional<int64_t>(stmt.Int(0)) : std::nullopt;
}

int64_t RequireDatabaseId(MetadataSession &session, const std::string &database) {
	auto id = FindDatabaseId(session, database);
	if (!id) {
		Fail(ErrorCode::DATABASE_NOT_FOUND,
		     "Database " + QuoteName(database) +
		         " does not exist in this repository. List databases with differential_databases(), or create it "
		         "with ATTACH 'differential:" +
		         database + "'.");
	}
	return *id;
}

std::optional<int64_t> FindBranchId(MetadataSession &session, const std::string &database, const std::string &branch) {
	auto stmt = session.db.Prepare("SELECT b.branch_id FROM branches b JOIN databases d USING (database_id) "
	                               "WHERE d.database_name = ? AND b.branch_name = ?");
	stmt.Bind(1, database).Bind(2, branch);
	if (stmt.Step()) {
		return stmt.Int(0);
	}
	return std::nullopt;
}

int64_t RequireBranchId(MetadataSession &session, const std::string &database, const std::string &branch) {
	auto id = FindBranchId(session, database, branch);
	if (!id) {
		Fail(ErrorCode::BRANCH_NOT_FOUND,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " does not exist (it may have been dropped). List branches with differential_branches('" + database +
		         "').");
	}
	return *id;
}

Hash256 HashFromBlob(const std::vector<uint8_t> &blob) {
	Hash256 hash {};
	std::memcpy(hash.data(), blob.data(), std::min<size_t>(32, blob.size()));
	return hash;
}

void LoadRoot(MetadataSession &session, int64_t root_id, StoredFile &out) {
	auto stmt = session.db.Prepare("SELECT file_length, pages FROM roots WHERE root_id = ?");
	stmt.Bind(1, root_id);
	if (!stmt.Step()) {
		Fail(ErrorCode::CORRUPT_METADATA,
		     "Root " + std::to_string(root_id) + " is referenced but missing. Run differential_verify().");
	}
	out.length = static_cast<uint64_t>(stmt.Int(0));
	out.pages = SplitHashes(stmt.Blob(1));
}

int64_t RequireSnapshotRoot(MetadataSession &session, int64_t database_id, const std::string &database,
                            int64_t snapshot_id, StoredFile &root) {
	auto snap = session.db.Prepare("SELECT root_id FROM snapshots WHERE database_id = ? AND snapshot_id = ?");
	snap.Bind(1, database_id).Bind(2, snapshot_id);
	if (!snap.Step()) {
		Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
		     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(snapshot_id) +
		         ". List its snapshots with differential_snapshots('" + database + "').");
	}
	auto root_id = snap.Int(0);
	LoadRoot(session, root_id, root);
	return root_id;
}

std::optional<int64_t> BranchHead(MetadataSession &session, int64_t branch_id) {
	auto stmt = session.db.Prepare("SELECT head_snapshot_id FROM branches WHERE branch_id = ?");
	stmt.Bind(1, branch_id);
	return stmt.Step() ? stmt.OptionalInt(0) : std::nullopt;
}

SnapshotRecord AppendSnapshot(MetadataSession &session, const NewSnapshot &snapshot) {
	auto &db = session.db;
	SnapshotRecord r;
	r.snapshot_id = snapshot.reserved_id ? *snapshot.reserved_id : ReserveSnapshotId(session, snapshot.database_id);
	r.name = snapshot.name;
	r.author = snapshot.author;
	r.message = snapshot.message;
	r.created_at_us = snapshot.reserved_created_at_us ? *snapshot.reserved_created_at_us : NowMicros();
	r.branch_name = snapshot.branch_name;
	r.root_id = snapshot.root_id;
	r.parents = snapshot.parents;
	r.extra_info = snapshot.extra_info;
	db.Prepare("INSERT INTO snapshots(database_id, snapshot_id, snapshot_name, author, commit_message, created_at_us, "
	           "branch_name, root_id, commit_extra_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
	    .Bind(1, snapshot.database_id)
	    .Bind(2, r.snapshot_id)
	    .Bind(3, r.name)
	    .Bind(4, r.author)
	    .Bind(5, r.message)
	    .Bind(6, r.created_at_us)
	    .Bind(7, r.branch_name)
	    .Bind(8, r.root_id)
	    .Bind(9, r.extra_info)
	    .Run();
	auto parent = db.Prepare("INSERT INTO snapshot_parents(database_id, snapshot_id, ordinal, parent_snapshot_id) "
	                         "VALUES (?, ?, ?, ?)");
	for (size_t ordinal = 0; ordinal < r.parents.size(); ordinal++) {
		parent.Reset();
		parent.Bind(1, snapshot.database_id)
		    .Bind(2, r.snapshot_id)
		    .Bind(3, static_cast<int64_t>(ordinal))
		    .Bind(4, r.parents[ordinal])
		    .Run();
	}
	return r;
}

int64_t ReserveSnapshotId(MetadataSession &session, int64_t database_id) {
	auto next = session.db.Prepare("SELECT next_snapshot_id FROM databases WHERE database_id = ?");
	next.Bind(1, database_id);
	if (!next.Step()) {
		Fail(ErrorCode::INTERNAL, "A snapshot was recorded for a database that does not exist.");
	}
	auto id = next.Int(0);
	session.db.Prepare("UPDATE databases SET next_snapshot_id = ? WHERE database_id = ?")
	    .Bind(1, id + 1)
	    .Bind(2, database_id)
	    .Run();
	return id;
}

void SetBranchRoot(MetadataSession &session, int64_t branch_id, int64_t root_id, uint64_t length) {
	// The branch's whole state becomes the root: no WAL companion of an older state may remain.
	session.db.Prepare("DELETE FROM file_extents WHERE branch_id = ?").Bind(1, branch_id).Run();
	session.db.Prepare("DELETE FROM branch_files WHERE branch_id = ?").Bind(1, branch_id).Run();
	session.db.Prepare("INSERT INTO branch_files(branch_id, file_name, root_id, length) VALUES (?, ?, ?, ?)")
	    .Bind(1, branch_id)
	    .Bind(2, MAIN_FILE_NAME)
	    .Bind(3, root_id)
	    .Bind(4, static_cast<int64_t>(length))
	    .Run();
}

void SetBranchHead(MetadataSession &session, int64_t branch_id, int64_t snapshot_id) {
	session.db.Prepare("UPDATE branches SET head_snapshot_id = ? WHERE branch_id = ?")
	    .Bind(1, snapshot_id)
	    .Bind(2, branch_id)
	    .Run();
}

void DeleteBranch(MetadataSession &session, int64_t branch_id) {
	for (auto table : {"file_extents", "branch_files", "branches"}) {
		session.db.Prepare(std::string("DELETE FROM ") + table + " WHERE branch_id = ?").Bind(1, branch_id).Run();
	}
}

} // namespace differential
