// Lookups and writes every metadata store shares, each working inside the caller's session.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"

#include <optional>
#include <string>

namespace differential {

//! The database's id, if it exists.
std::optional<int64_t> FindDatabaseId(MetadataSession &session, const std::string &database);
//! The database's id; refuses database_not_found.
int64_t RequireDatabaseId(MetadataSession &session, const std::string &database);
std::optional<int64_t> FindBranchId(MetadataSession &session, const std::string &database, const std::string &branch);
//! The branch's id; refuses branch_not_found.
int64_t RequireBranchId(MetadataSession &session, const std::string &database, const std::string &branch);
//! Loads a root's length and page hashes; a missing root is corrupt_metadata.
void LoadRoot(MetadataSession &session, int64_t root_id, StoredFile &out);
//! The root of a snapshot, loaded into `root`; refuses snapshot_not_found.
int64_t RequireSnapshotRoot(MetadataSession &session, int64_t database_id, const std::string &database,
                            int64_t snapshot_id, StoredFile &root);
//! The branch's head snapshot, if it has one.
std::optional<int64_t> BranchHead(MetadataSession &session, int64_t branch_id);
Hash256 HashFromBlob(const std::vector<uint8_t> &blob);
class SqliteStatement;
//! A file_extents row from its columns segment_id, payload_offset, length, crc32c and inline_data, starting
//! at `first_col`; an inline row whose bytes disagree with its length is corrupt_metadata, naming `file`.
RangeExtent ExtentAt(SqliteStatement &stmt, int first_col, const std::string &file);

//! A new snapshot row with its parents, as every kind of snapshot (ordinary, restore, merge) records it.
struct NewSnapshot {
	int64_t database_id = 0;
	std::optional<std::string> name;
	std::optional<std::string> author;
	std::optional<std::string> message;
	std::string branch_name;
	int64_t root_id = 0;
	std::vector<int64_t> parents;
	std::optional<std::string> extra_info;
	//! A number and time reserved earlier (a prepared S3 merge): the snapshot takes them instead of the
	//! database's next id and now.
	std::optional<int64_t> reserved_id;
	std::optional<int64_t> reserved_created_at_us;
};
//! Takes the database's next snapshot id and records the snapshot; returns it as read back.
SnapshotRecord AppendSnapshot(MetadataSession &session, const NewSnapshot &snapshot);
//! Makes a root the branch's whole state (a copy of a chunk map: no data moves); its WAL companions go.
//! Takes the database's next snapshot id for a snapshot recorded later (AppendSnapshot with reserved_id).
int64_t ReserveSnapshotId(MetadataSession &session, int64_t database_id);
void SetBranchRoot(MetadataSession &session, int64_t branch_id, int64_t root_id, uint64_t length);
void SetBranchHead(MetadataSession &session, int64_t branch_id, int64_t snapshot_id);
//! Removes a branch's files and row.
void DeleteBranch(MetadataSession &session, int64_t branch_id);

} // namespace differential
