// The steps the merge functions share: the durable request (merge_request.cpp), the selection of
// inputs (merge_inputs.cpp), used by the merges (merge_branch.cpp) and the previews (merge_preview.cpp).
#pragma once

#include "merge/merge_branch.hpp"

#include <functional>

namespace differential {

// The request (merge_request.cpp)

//! The operations, as a request's arguments and a merge snapshot's provenance name them.
static constexpr const char *MERGE_BRANCH_OPERATION = "merge_branch";
static constexpr const char *MERGE_SNAPSHOTS_OPERATION = "merge_snapshots";

//! What an earlier call with the same request id left: a completed result to return, or a pending
//! request whose frozen inputs a retry reuses.
struct PriorRequest {
	std::optional<MergeBranchResult> completed;
	std::optional<MergeRecord> pending;
};
//! Refuses a request id used with other arguments, and an aborted request.
PriorRequest LookupRequest(MetadataStore &metadata, const std::string &database,
                           const std::optional<std::string> &request_id, const std::string &arguments);
MergeRecord NewRecord(const std::optional<std::string> &request_id, const std::string &arguments,
                      const MergeBranchResult &inputs, const std::string &destination, MergeAction action);
//! A retry runs with the TimeZone and Calendar its request froze at the first attempt.
void TakeFrozenSettings(MergeRecord &record, const PriorRequest &prior, const MergeOptions &options);
//! Runs one attempt of a request: records its start, and a failure as the request's latest error.
void Attempt(MetadataStore &metadata, const std::string &database, MergeRecord &record, MergeBranchResult &result,
             MergeOperation &operation, const std::function<void()> &attempt);
//! The request's decisions: frozen by its first attempt whose decisions were valid, or read now
//! (`fresh` tells that they still need freezing).
std::vector<FrozenResolution> Resolutions(MetadataStore &metadata, MergeSession &session, const std::string &database,
                                          const std::string &request_id, const ResolutionMapping &mapping, bool &fresh);
//! Freezes decisions that passed validation: a retry uses exactly these, even if the tables change.
void Freeze(MetadataStore &metadata, const std::string &database, const std::string &request_id,
            const std::vector<FrozenResolution> &resolutions);

// The S3 publication (merge_publication.cpp, docs/DURABILITY.md §13.9)

//! An S3 merge without a request_id: merge_request_required, before anything changes.
void RequireRequestForS3(const MergeOptions &options, const std::optional<std::string> &request_id,
                         const std::string &database);
//! Publishes the staged result of `session` in the four durable steps; `start` is the destination's
//! head as the merge began (none: create-only). Returns the snapshot id.
int64_t PublishStagedOnS3(MetadataStore &metadata, MergePublisher &publisher, const std::string &database,
                          MergeSession &session, bool create_destination, const MergeRecord &record,
                          const std::optional<PublishedHead> &start);
//! Continues a request that is prepared, uploaded or publication_uncertain from that step.
int64_t ResumePublication(MetadataStore &metadata, MergePublisher &publisher, const std::string &database,
                          const MergeRecord &record);

// The inputs (merge_inputs.cpp)

void RequireDatabase(MetadataStore &metadata, const std::string &database);
//! The heads of both branches and their base; refuses unknown names and missing or ambiguous bases.
MergeBranchResult SelectInputs(MetadataStore &metadata, const std::string &database, const std::string &target,
                               const std::string &source, BaseMode mode);
//! The inputs of merging snapshots `ours` and `theirs` with base => 'virtual': their unique best common
//! ancestor as a plain base, or all of them for a virtual one.
MergeBranchResult VirtualInputs(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs);
//! Inputs frozen by an earlier failed attempt of the same request; they must still be kept.
MergeBranchResult FrozenInputs(MetadataStore &metadata, const std::string &database, const MergeRecord &pending);
void RequireKeptInputs(MetadataStore &metadata, const std::string &database, const std::vector<int64_t> &snapshots);
//! Whether the guards expected_*_snapshot_id all hold for the selected inputs.
bool ExpectedInputs(const MergeBranchRequest &request, const MergeBranchResult &inputs);
MergeAction PredictedAction(const MergeBranchResult &inputs, bool create_destination);
//! Nothing to combine: one side is the base, so the result is the other side as it is.
bool Trivial(const MergeBranchResult &inputs);
SessionSettings Settings(const MergeOptions &options, const std::string &time_zone, const std::string &calendar);
MergeInputs Inputs(const MergeBranchResult &result);
int64_t ConflictCount(const MergeBranchResult &result);
std::string ConflictingRows(int64_t conflicts);

} // namespace differential
