// The diff:// paths DuckDB opens: the file system sees only the path, so it carries repository,
// database, branch (or snapshot) and file name: diff://<repo>/@/<database>/<branch | ~snapshot>/<file>.
#pragma once

#include <cstdint>
#include <string>

namespace differential {

static constexpr const char *DIFF_SCHEME = "diff://";
static constexpr const char *MAIN_FILE_NAME = "database.duckdb";

struct FileAddress {
	std::string repository;
	std::string database;
	//! Empty when the path names a snapshot.
	std::string branch;
	int64_t snapshot_id = -1;
	std::string file_name;

	bool IsSnapshot() const {
		return snapshot_id >= 0;
	}
	//! The database file itself is stored in chunks; its WAL companions are stored as byte ranges.
	bool IsMainFile() const {
		return file_name == MAIN_FILE_NAME;
	}
	//! Identifies the branch (or snapshot) the file belongs to, for locks and open-handle counts.
	std::string OwnerKey() const;
	std::string ToPath() const;
};

bool IsDiffPath(const std::string &path);
//! Throws invalid_path for anything that is not a well-formed diff:// path.
FileAddress ParseDiffPath(const std::string &path);
std::string BranchPath(const std::string &repository, const std::string &database, const std::string &branch);
std::string SnapshotPath(const std::string &repository, const std::string &database, int64_t snapshot_id);

} // namespace differential
