// The repository's metadata in SQLite (WAL mode, synchronous=FULL): databases, branches,
// snapshots, roots, index pages, chunk locations and WAL byte ranges.
#pragma once

#include "metadata/sqlite.hpp"
#include "storage/file_catalog.hpp"

#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace differential {

static constexpr int64_t METADATA_SCHEMA_VERSION = 3;
static constexpr int64_t STORE_FORMAT_VERSION = 1;

struct DatabaseRecord {
	int64_t database_id = 0;
	std::string name;
	std::string uuid;
	int64_t created_at_us = 0;
	int64_t branch_count = 0;
	int64_t snapshot_count = 0;
};

struct BranchRecord {
	int64_t branch_id = 0;
	int64_t database_id = 0;
	std::string name;
	int64_t created_at_us = 0;
	//! The snapshot the branch was created from (NULL for main: -1).
	int64_t base_snapshot_id = -1;
	//! The newest snapshot taken on the branch, or its base (-1 when none).
	int64_t head_snapshot_id = -1;
};

struct SnapshotRecord {
	int64_t snapshot_id = 0;
	std::string name;
	bool has_name = false;
	std::string author;
	bool has_author = false;
	std::string message;
	bool has_message = false;
	int64_t created_at_us = 0;
	std::string branch_name;
	int64_t root_id = 0;
	std::vector<int64_t> parents;
	//! commit_extra_info: JSON provenance of a merge snapshot, empty otherwise.
	std::string extra_info;
};

struct SnapshotRequest {
	std::optional<std::string> name;
	std::optional<std::string> author;
	std::optional<std::string> message;
};

class MetadataStore : public FileCatalog {
public:
	//! Opens (creating if needed) <root>/metadata.sqlite and migrates it to the current schema.
	explicit MetadataStore(const std::string &root);

	// FileCatalog
	bool LoadFile(const FileAddress &file, StoredFile &out, bool pin = false) override;
	void Unpin(int64_t pin_id) override;
	std::vector<uint8_t> LoadIndexPage(const Hash256 &page) override;
	void LookupChunks(const std::vector<Hash256> &hashes, std::vector<ChunkLocation> &out) override;
	void PublishChunked(const FileAddress &file, uint64_t length, const std::vector<Hash256> &pages,
	                    const std::vector<NewIndexPage> &new_pages, const std::vector<NewChunk> &new_chunks,
	                    int64_t pin_id) override;
	void PublishRanged(const FileAddress &file, uint64_t length, uint64_t kept_extents,
	                   const std::vector<ChunkLocation> &new_extents) override;
	void RemoveFile(const FileAddress &file) override;
	void MoveFile(const FileAddress &from, const FileAddress &to) override;
	uint64_t AllocateSegment() override;

	// Databases, branches, snapshots
	std::optional<DatabaseRecord> FindDatabase(const std::string &name);
	//! Creates the database and its main branch unless it exists; returns true when it was created.
	bool EnsureDatabase(const std::string &name);
	std::vector<DatabaseRecord> ListDatabases();
	std::optional<BranchRecord> FindBranch(const std::string &database, const std::string &branch);
	std::vector<BranchRecord> ListBranches(const std::string &database);
	//! Creates a branch whose head is the given snapshot's state. Throws on a duplicate or unknown snapshot.
	BranchRecord CreateBranch(const std::string &database, const std::string &branch, int64_t snapshot_id);
	//! Records the branch's current published state as a new snapshot. The state must be checkpointed.
	SnapshotRecord CreateSnapshot(const std::string &database, const std::string &branch, const SnapshotRequest &req);
	std::vector<SnapshotRecord> ListSnapshots(const std::string &database);
	std::optional<SnapshotRecord> FindSnapshot(const std::string &database, int64_t snapshot_id);
	//! The newest snapshot created at or before the time, if any.
	std::optional<SnapshotRecord> FindSnapshotAsOf(const std::string &database, int64_t timestamp_us);
	//! The latest snapshot of the database, by id.
	std::optional<SnapshotRecord> LatestSnapshot(const std::string &database);

	// History lifecycle (metadata/lifecycle.cpp)
	//! True when the branch's state differs from its head snapshot; `has_wal` tells whether WAL
	//! bytes (uncheckpointed commits) are part of the difference.
	bool HasUnsnapshottedChanges(const std::string &database, const std::string &branch, bool &has_wal);
	//! Points the branch at a snapshot's state and records that as a new snapshot (parents: the
	//! branch head and the restored snapshot). The branch must be closed (checked by the caller).
	SnapshotRecord RestoreBranch(const std::string &database, const std::string &branch, int64_t snapshot_id);
	//! A new database whose main branch starts at a snapshot of another; it shares every chunk.
	DatabaseRecord CloneDatabase(const std::string &source, const std::string &target, int64_t snapshot_id);
	void DropBranch(const std::string &database, const std::string &branch);
	void DropDatabase(const std::string &database);
	//! Expires the given snapshots, all or nothing; refuses unknown ones and branch heads.
	std::vector<int64_t> ExpireSnapshots(const std::string &database, const std::vector<int64_t> &snapshot_ids);
	//! Expires every snapshot created before the cutoff, except branch heads.
	std::vector<int64_t> ExpireSnapshotsBefore(const std::string &database, int64_t cutoff_us);
	//! Parent edges of every snapshot of the database, expired ones included (ancestry runs through
	//! them): snapshot id -> parents in recorded order.
	std::map<int64_t, std::vector<int64_t>> SnapshotParents(const std::string &database);
	//! When the snapshot was expired, if it was.
	std::optional<int64_t> SnapshotExpiredAt(const std::string &database, int64_t snapshot_id);

	// Merge publication (metadata/merge_records.cpp)
	struct MergeRecord {
		std::string request_id;
		std::string arguments;
		std::string state;
		std::string merge_action;
		std::string branch_name;
		int64_t snapshot_id = -1;
		int64_t base_snapshot_id = -1;
		int64_t ours_snapshot_id = -1;
		int64_t theirs_snapshot_id = -1;
		std::string last_error_code;
		int64_t created_at_us = 0;
		int64_t completed_at_us = -1;
		int64_t attempts = 0;
		//! Names the request for differential_abort_merge, also when it has no request id of its own.
		std::string operation_id;
		//! The session's TimeZone and Calendar at the first attempt: every retry runs with them.
		std::string time_zone;
		std::string calendar;
		std::string last_error;
		//! The request id of the abort that ended it.
		std::string aborted_by;
		//! Provenance stored with a merge snapshot as its commit_extra_info (JSON).
		std::string extra_info;
	};
	std::optional<MergeRecord> FindMergeRequest(const std::string &database, const std::string &request_id);
	//! Records a failed attempt: the request stays pending with its (frozen) inputs and the error,
	//! so a retry with the same arguments recomputes from the same snapshots. A completed request is
	//! never touched.
	void RecordPendingMerge(const std::string &database, const MergeRecord &record, const std::string &error_code,
	                        const std::string &error);
	//! Records the start of an attempt: a new request is pending with attempt 1, a pending one counts
	//! another attempt. Returns the request's operation id.
	std::string BeginMergeAttempt(const std::string &database, const MergeRecord &record);
	//! Stores the request's decisions (table -> serialized rows) unless the request already has some:
	//! the first attempt that compares freezes them.
	void FreezeResolutions(const std::string &database, const std::string &request_id,
	                       const std::vector<std::pair<std::string, std::string>> &decisions);
	std::vector<std::pair<std::string, std::string>> FrozenResolutions(const std::string &database,
	                                                                   const std::string &request_id);
	//! Ends a pending request for good (aborted is terminal); refuses unknown and completed ones.
	MergeRecord AbortMergeRequest(const std::string &database, const std::string &operation_id,
	                              const std::string &abort_request_id);
	std::vector<MergeRecord> ListMergeRequests(const std::string &database);
	//! Makes the staging branch's state a snapshot with parents [ours, theirs] and points the
	//! destination at it (creating the destination when `create_destination`), drops the staging
	//! branch and records the request: one transaction, so nothing of a merge is visible before all
	//! of it is. Returns the new snapshot id.
	int64_t PublishMerge(const std::string &database, const std::string &staging_branch, const std::string &destination,
	                     bool create_destination, const MergeRecord &record);
	//! Points the destination (created when `create_destination`) at an existing snapshot, and
	//! records the request (fast-forward, already up to date, or a new branch at either side).
	void PublishExistingSnapshot(const std::string &database, const std::string &destination, bool create_destination,
	                             const MergeRecord &record);

	// Garbage collection (metadata/garbage.cpp)
	struct SegmentUsage {
		uint64_t segment_id = 0;
		int64_t created_at_us = 0;
		int64_t owner_pid = 0;
		uint64_t owner_start = 0;
		uint64_t live_bytes = 0;
		uint64_t live_records = 0;
	};
	struct GarbageReport {
		int64_t pins_released = 0;
		int64_t roots_deleted = 0;
		int64_t pages_deleted = 0;
		int64_t chunks_deleted = 0;
		std::vector<SegmentUsage> segments;
	};
	//! Mark and sweep in one transaction: releases pins of dead processes, then deletes every root,
	//! index page and chunk row that no branch file, snapshot or pin reaches. Reports segment usage.
	GarbageReport CollectGarbage();
	struct LiveRecord {
		bool is_chunk = true;
		Hash256 hash {};
		int64_t branch_id = 0;
		std::string file_name;
		int64_t seq = 0;
		ChunkLocation location;
	};
	std::vector<LiveRecord> LiveRecordsIn(uint64_t segment_id);
	//! Points records at their copies, where they still point at the originals.
	void RelocateRecords(const std::vector<std::pair<LiveRecord, ChunkLocation>> &moves);
	//! Marks the segment removed (its row stays, so its id is never reused) when nothing references
	//! it any more; true if it did.
	bool ForgetSegmentIfUnused(uint64_t segment_id);

	// Storage accounting (metadata/garbage.cpp)
	struct StorageTotals {
		uint64_t logical_bytes = 0;
		uint64_t unique_chunk_bytes = 0;
		uint64_t wal_bytes = 0;
		int64_t chunks = 0;
		int64_t segments = 0;
	};
	//! Totals over the whole repository, or one database when `database` is not empty.
	StorageTotals Totals(const std::string &database);
	//! Segments not removed.
	std::vector<uint64_t> AllSegmentIds();
	//! Segments marked removed; their files may be left over from an interrupted cleanup.
	std::vector<uint64_t> RemovedSegmentIds();
	uint64_t HighestSegmentId();
	//! Folds SQLite's WAL back into the metadata file and truncates it (after a cleanup).
	void CheckpointMetadata();

	// Verification
	struct ChunkRow {
		Hash256 hash;
		ChunkLocation location;
	};
	std::vector<ChunkRow> AllChunks();
	//! Every root still referenced by a branch file or a snapshot: (description, length, page hashes).
	struct RootRow {
		std::string owner;
		uint64_t length;
		std::vector<Hash256> pages;
	};
	std::vector<RootRow> LiveRoots();
	std::vector<std::pair<std::string, ChunkLocation>> AllExtents();
	bool HasIndexPage(const Hash256 &page);
	bool HasChunk(const Hash256 &hash);

	const std::string root;

private:
	void Migrate();
	bool LoadFileLocked(const FileAddress &file, StoredFile &out);
	//! The root of a snapshot, loaded into `root`; refuses snapshot_not_found.
	int64_t RequireSnapshotRoot(int64_t database_id, const std::string &database, int64_t snapshot_id,
	                            StoredFile &root);
	//! Makes a root the branch's whole state (a copy of a chunk map: no data moves); its WAL
	//! companions go.
	void SetBranchRoot(int64_t branch_id, int64_t root_id, uint64_t length);
	int64_t RequireBranchId(const std::string &database, const std::string &branch);
	void RecordMergeLocked(int64_t database_id, const MergeRecord &record);
	//! The destination's id; an existing one must still have `expected_head` (merge_inputs_changed).
	int64_t BranchForMergeLocked(int64_t database_id, const std::string &database, const std::string &destination,
	                             bool create, int64_t base_snapshot, int64_t expected_head);
	int64_t RequireBranchId(const FileAddress &file);
	std::optional<int64_t> BranchId(const std::string &database, const std::string &branch);
	int64_t RequireDatabaseId(const std::string &database);
	bool LoadRoot(int64_t root_id, StoredFile &out);
	SnapshotRecord ReadSnapshotRow(SqliteStatement &stmt);

	//! Runs `apply` inside a metadata transaction shared with every publication queued meanwhile
	//! (group commit): concurrent syncs of different databases cost one transaction and one flush.
	void RunGrouped(const std::function<void()> &apply);

	std::mutex lock;
	SqliteDatabase db;

	struct GroupedPublication {
		const std::function<void()> *apply = nullptr;
		std::exception_ptr error;
		bool done = false;
	};
	std::mutex group_lock;
	std::condition_variable group_done;
	std::vector<GroupedPublication *> group_queue;
	bool group_leader_active = false;
};

int64_t NowMicros();
std::string NewUuid();

} // namespace differential
