// The history in the metadata: databases, branches and snapshots, their creation and the queries
// over them (time travel, ancestry, the catalog functions).
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace differential {

class HistoryStore {
public:
	explicit HistoryStore(MetadataCore &core) : core(core) {
	}

	//! The database's row; its branch_count and snapshot_count are counted only `with_counts` (else -1).
	std::optional<DatabaseRecord> FindDatabase(const std::string &name, bool with_counts = false);
	//! Creates the database and its main branch unless it exists; returns true when it was created.
	bool EnsureDatabase(const std::string &name);
	std::vector<DatabaseRecord> ListDatabases();
	std::optional<BranchRecord> FindBranch(const std::string &database, const std::string &branch);
	std::vector<BranchRecord> ListBranches(const std::string &database);
	//! Creates a branch whose head is the given snapshot's state. Throws on a duplicate or unknown snapshot.
	BranchRecord CreateBranch(const std::string &database, const std::string &branch, int64_t snapshot_id);
	//! Records the branch's current published state as a new snapshot. The state must be checkpointed.
	SnapshotRecord CreateSnapshot(const std::string &database, const std::string &branch, const SnapshotRequest &req);
	//! Kept snapshots by id, ascending; a page when bounded: only ids below `before`, and of those the
	//! newest `page_size` (read backwards on the primary key, so a page costs the same in any history).
	std::vector<SnapshotRecord> ListSnapshots(const std::string &database, std::optional<int64_t> before = std::nullopt,
	                                          std::optional<int64_t> page_size = std::nullopt);
	std::optional<SnapshotRecord> FindSnapshot(const std::string &database, int64_t snapshot_id);
	//! The newest snapshot created at or before the time, if any.
	std::optional<SnapshotRecord> FindSnapshotAsOf(const std::string &database, int64_t timestamp_us);
	//! The latest snapshot of the database's main branch, by id.
	std::optional<SnapshotRecord> LatestSnapshot(const std::string &database);
	//! True when the branch's state differs from its head snapshot; `has_wal` tells whether WAL
	//! bytes (uncheckpointed commits) are part of the difference.
	bool HasUnsnapshottedChanges(const std::string &database, const std::string &branch, bool &has_wal);
	//! Parent edges of every snapshot reachable from the heads, expired ones included (ancestry runs
	//! through them): snapshot id -> parents in recorded order. A head that is neither a kept nor an
	//! expired snapshot of the database is not a key. Reads the edges between the lowest snapshot reached
	//! and the highest head, not the history below them.
	std::map<int64_t, std::vector<int64_t>> ReachableParents(const std::string &database,
	                                                         const std::vector<int64_t> &heads);
	//! A page of ReachableParents: the walk from the heads stops once it has completed `limit` snapshots below
	//! `before` (all, without `before`), so a page near the heads reads the edges above it, not the history
	//! below. `floor` gets the lowest complete snapshot: keys at or above it have all their parents; keys below
	//! it were reached but not read (INT64_MIN when the walk ended). nullopt when a parent's id is not below
	//! its child's (the caller then pages ReachableParents).
	std::optional<std::map<int64_t, std::vector<int64_t>>> ReachableParentsPage(const std::string &database,
	                                                                            const std::vector<int64_t> &heads,
	                                                                            std::optional<int64_t> before,
	                                                                            int64_t limit, int64_t &floor);
	//! A reader of one snapshot's parents (recorded order) at a time, for walks in descending id order that stop
	//! early: it reads the edges of a growing range of ids below the one asked for; refuses a missing database now
	//! (database_not_found).
	std::function<std::vector<int64_t>(int64_t)> ParentReader(const std::string &database);
	//! Which of the ids are kept snapshots of the database: one range read over the ids' span.
	std::set<int64_t> KeptAmong(const std::string &database, const std::vector<int64_t> &snapshot_ids);
	//! When the snapshot was expired, if it was.
	std::optional<int64_t> SnapshotExpiredAt(const std::string &database, int64_t snapshot_id);
	//! Refuses a snapshot id that is not kept: `snapshot_expired` when it was expired, else
	//! `snapshot_not_found`; `listing` names the function that lists the kept ones.
	void RequireKeptSnapshot(const std::string &database, int64_t snapshot_id, const std::string &listing);
	//! The branch's head snapshot; refuses a missing branch (`branch_not_found`) and one without a
	//! snapshot (`snapshot_not_found`, saying that `reader`, e.g. "merges read", reads snapshots only).
	int64_t RequireBranchHead(const std::string &database, const std::string &branch, const std::string &reader);

private:
	std::optional<SnapshotRecord> FirstSnapshot(const std::string &where, const std::string &database,
	                                            std::optional<int64_t> value);
	MetadataCore &core;
};

} // namespace differential
