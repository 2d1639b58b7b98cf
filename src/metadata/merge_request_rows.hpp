// The row-level steps of merge requests that both the local publication (merge_request_store.cpp) and
// the S3 publication steps (merge_publication_store.cpp) run inside their own transactions.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"

#include <optional>
#include <string>

namespace differential {

std::optional<MergeRecord> FindRequest(MetadataSession &session, int64_t database_id, const char *key_column,
                                       const std::string &key);
//! A merge snapshot's message: "merge of snapshot T into snapshot O (base B)", or "(virtual base)" when the
//! request merged from a virtual base (no base snapshot).
std::string MergeSnapshotMessage(const MergeRecord &record);
//! Marks the request complete with its snapshot (refuses one aborted or completed meanwhile).
void RecordCompletedRequest(MetadataSession &session, int64_t database_id, const MergeRecord &record);
//! The destination's id; an existing one must still have `expected_head`, a new one is created.
int64_t DestinationBranch(MetadataSession &session, int64_t database_id, const std::string &database,
                          const std::string &destination, bool create, int64_t base_snapshot, int64_t expected_head);
//! Refuses (branch_exists) a new branch name that a prepared S3 merge request reserved for its result.
void RequireNameNotReserved(MetadataSession &session, int64_t database_id, const std::string &database,
                            const std::string &branch);
//! Drops a prepared S3 result of the request, if it has one (its branch and its publication row): an
//! abort ends it. Its reserved snapshot number stays used.
void ReleasePreparedResult(MetadataSession &session, int64_t database_id, const std::string &database,
                           const std::string &request_id);

} // namespace differential
