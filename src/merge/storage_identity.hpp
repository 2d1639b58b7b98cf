// The storage shortcut (docs/MERGES.md §10a): a table whose storage a side left byte-identical to the
// base's did not change on that side, so the merge need not read that side of it.
#pragma once

#include "merge/schema_plan.hpp"
#include "storage/block_identity.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace duckdb {
class Connection;
}

namespace differential {

//! Where a snapshot's database file is published.
FileAddress SnapshotDatabaseFile(const std::string &repository, const std::string &database, int64_t snapshot_id);

//! A table's storage, row group by row group, as comparable text: the group's first rowid, every
//! column segment's layout and statistics, the hashes of the blocks it reads, and the group's live
//! row count. Row group i holds rowids [starts[i], starts[i + 1]). Not `known` when it cannot vouch
//! for the table (segments held in memory, blocks the file does not hold): such a table counts
//! as changed everywhere.
struct TableLayout {
	bool known = false;
	std::vector<int64_t> starts;
	std::vector<std::string> groups;
	//! Per row group: its live rows, and each column's segments (by lowercase column name) as
	//! comparable text: equal text, equal values at every position of the group.
	std::vector<int64_t> live;
	std::vector<std::map<std::string, std::string>> columns;
};
TableLayout ReadTableLayout(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                            const BlockIdentity &blocks);

//! Which row groups of a side equal the base's (same index, same layout, same live rows).
std::vector<bool> SameRowGroups(const TableLayout &base, const TableLayout &side);

//! Whether `snapshot`'s database file was built from `ancestor`'s by a chain of ordinary snapshots:
//! every step has exactly one parent. A merge or restore snapshot records two parents, and its file
//! comes from only one of them, so the chain stops there (it is or is not `ancestor` itself).
bool IsStorageAncestor(const std::map<int64_t, std::vector<int64_t>> &parents, int64_t ancestor, int64_t snapshot);

//! One input as the shortcut sees it: its attachment, and its file's blocks when the shortcut may
//! trust them (the base always; a side only when IsStorageAncestor holds for it).
struct InputStorage {
	std::string alias;
	std::optional<BlockIdentity> blocks;
};

//! What to read of each planned table (by plan index): a side that left a table as in the base is
//! not read, and of a table both sides changed only the row groups either side changed.
std::vector<InputReads> UnchangedStorageReads(duckdb::Connection &connection, const std::vector<TablePlan> &tables,
                                              const InputStorage &base, const InputStorage &ours,
                                              const InputStorage &theirs);

} // namespace differential
