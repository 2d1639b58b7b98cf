// The remote steps of an S3 merge's publication (docs/DURABILITY.md §13.9): exporting the prepared
// result like any snapshot, and moving the destination's head by one conditional PUT from the exact
// version the merge started from, or reading the head to learn what an earlier write did.
#pragma once

#include "export/snapshot_export.hpp"

#include <optional>
#include <string>

namespace differential {

//! Step 2: uploads the file of `prepared_branch` as snapshot `snapshot_id` (packs, export index pages,
//! descriptor, create-only commit record), under the repository's export lock and a "being written"
//! marker. Idempotent: a retry re-sends nothing the store holds. Returns the descriptor's hash. Throws
//! ExportFailure, or RemoteConflict when another writer's commit record holds the number.
Hash256 ExportMergeResult(ExportContext &context, const std::string &prepared_branch, int64_t snapshot_id,
                          int64_t created_at_us, ExportStats &stats);

//! What a head write did, or what reading the head shows.
enum class MergeHeadState {
	OURS,     //! the head holds exactly the merge's head text
	START,    //! the head is still the version the merge started from (or still absent for a new one)
	OTHER,    //! another writer moved it: head_conflict
	UNCERTAIN //! the write was sent and its answer lost
};

struct MergeHeadOutcome {
	MergeHeadState state = MergeHeadState::UNCERTAIN;
	std::string etag; //! of the head when OURS
	std::string detail;
};

//! Step 3, the publication point: PUT `text` at `key` with If-Match `start_etag`, or If-None-Match: *
//! when there is none. A refusal is checked by reading the head (a lost answer to our own write leaves
//! exactly our bytes there). Runs the conditional-write probe first.
MergeHeadOutcome PutMergeHead(ExportContext &context, const std::string &key, const std::string &text,
                              const std::optional<std::string> &start_etag, ExportStats &stats);
//! Reads the head to resolve an unknown outcome: OURS, START or OTHER (never UNCERTAIN; a failed read
//! throws ExportFailure).
MergeHeadOutcome ReadMergeHead(ExportContext &context, const std::string &key, const std::string &text,
                               const std::optional<std::string> &start_etag, ExportStats &stats);

} // namespace differential
