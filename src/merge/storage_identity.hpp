// The storage shortcut of DESIGN section 5: a table whose storage a side left byte-identical to the
// base's did not change on that side, so the merge need not read that side of it.
#pragma once

#include "common/hash.hpp"
#include "metadata/metadata_store.hpp"

#include <string>
#include <vector>

namespace duckdb {
class Connection;
}

namespace differential {

//! The chunk hashes of a snapshot's database file, by chunk index (chunk k >= 1 holds block k - 1).
std::vector<Hash256> SnapshotChunkHashes(MetadataStore &metadata, const std::string &repository,
                                         const std::string &database, int64_t snapshot_id);

//! The content root of a snapshot's database file: SHA-256 over its length and the hashes of its index
//! pages, as hex. Equal roots mean byte-identical files.
std::string SnapshotContentRoot(MetadataStore &metadata, const std::string &repository, const std::string &database,
                                int64_t snapshot_id);

//! A table's storage, row group by row group, as comparable text: the group's first rowid, every
//! column segment's layout and statistics, the hashes of the blocks it reads, and the group's live
//! row count. Row group i holds rowids [starts[i], starts[i + 1]). Not `known` when it cannot vouch
//! for the table (segments held in memory, blocks the file does not hold): such a table counts
//! as changed everywhere.
struct TableLayout {
	bool known = false;
	std::vector<int64_t> starts;
	std::vector<std::string> groups;
};
TableLayout ReadTableLayout(duckdb::Connection &connection, const std::string &alias, const std::string &table,
                            const std::vector<Hash256> &chunks);

//! Which row groups of a side equal the base's (same index, same layout, same live rows).
std::vector<bool> SameRowGroups(const TableLayout &base, const TableLayout &side);

//! Whether `snapshot`'s database file was built from `ancestor`'s by a chain of ordinary snapshots:
//! every step has exactly one parent. A merge or restore snapshot records two parents, and its file
//! comes from only one of them, so the chain stops there (it is or is not `ancestor` itself).
bool IsStorageAncestor(const std::map<int64_t, std::vector<int64_t>> &parents, int64_t ancestor, int64_t snapshot);

} // namespace differential
