// The records the metadata stores hand out. One convention for optional fields: a value that may
// be absent is a std::optional, never a sentinel.
#pragma once

#include "common/hash.hpp"
#include "common/merge_request_states.hpp"
#include "storage/file_catalog.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace differential {

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
	//! The snapshot the branch was created from (none for main).
	std::optional<int64_t> base_snapshot_id;
	//! The newest snapshot taken on the branch, or its base (none before the first snapshot).
	std::optional<int64_t> head_snapshot_id;
};

struct SnapshotRecord {
	int64_t snapshot_id = 0;
	std::optional<std::string> name;
	std::optional<std::string> author;
	std::optional<std::string> message;
	int64_t created_at_us = 0;
	std::string branch_name;
	int64_t root_id = 0;
	std::vector<int64_t> parents;
	//! commit_extra_info: JSON provenance of a merge snapshot.
	std::optional<std::string> extra_info;
};

struct SnapshotRequest {
	std::optional<std::string> name;
	std::optional<std::string> author;
	std::optional<std::string> message;
};

//! A merge request as recorded. Its snapshot ids are -1 while unknown (a request that failed
//! before its selection), the one place that keeps a sentinel: the merge layer computes with them.
struct MergeRecord {
	std::string request_id;
	std::string arguments;
	//! Stored as text through the one string table of common/merge_request_states.hpp.
	RequestState state = RequestState::PENDING;
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

//! A merge result prepared for an S3 database (schema 7, merge_publications): what the later publication
//! steps need, so a retry after a crash resumes it instead of recomputing.
struct MergePublication {
	std::string request_id;
	//! The snapshot number and time reserved at preparation: the descriptor and commit record carry them.
	int64_t snapshot_id = 0;
	int64_t created_at_us = 0;
	//! The private branch that holds the result's file until it is exposed.
	std::string prepared_branch;
	std::string store_url;
	bool create_destination = false;
	//! The head the merge started from: its etag (absent: no head, the PUT is create-only), snapshot,
	//! descriptor and WAL chain (kept in the new head, as every head move does).
	std::optional<std::string> start_etag;
	std::optional<int64_t> start_snapshot_id;
	Hash256 start_descriptor {};
	uint64_t chain = 0;
	Hash256 chain_base {};
	std::string extra_info;
	//! The exported result's descriptor, once uploaded.
	std::optional<Hash256> descriptor;
};

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

//! A record still referenced in a segment: a chunk (by hash) or a WAL extent (by file and position).
struct LiveRecord {
	bool is_chunk = true;
	Hash256 hash {};
	int64_t branch_id = 0;
	std::string file_name;
	int64_t seq = 0;
	ChunkLocation location;
};

struct StorageTotals {
	uint64_t logical_bytes = 0;
	uint64_t unique_chunk_bytes = 0;
	uint64_t wal_bytes = 0;
	int64_t chunks = 0;
	int64_t segments = 0;
};

struct ChunkRow {
	Hash256 hash;
	ChunkLocation location;
};

//! A root still referenced by a branch file or a snapshot: who holds it, its length and page hashes.
struct RootRow {
	std::string owner;
	uint64_t length;
	std::vector<Hash256> pages;
};

} // namespace differential
