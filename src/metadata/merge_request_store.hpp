// Durable merge requests in the metadata: pending records with frozen inputs and decisions,
// aborts, and the publication of a merge's result with its record in one transaction.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"
#include "metadata/remote_store.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace differential {

class MergeRequestStore {
public:
	explicit MergeRequestStore(MetadataCore &core) : core(core) {
	}

	std::optional<MergeRecord> FindMergeRequest(const std::string &database, const std::string &request_id);
	std::vector<MergeRecord> ListMergeRequests(const std::string &database);
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

	// The S3 publication steps (merge_publication_store.cpp, docs/DURABILITY.md §13.9).

	//! Step 1, one FULL transaction: keeps the staged result on a private branch named after the
	//! request, reserves the next snapshot number (and the time the snapshot will carry), checks the
	//! destination is still where the merge started (or still free), records `publication` and makes the
	//! request `prepared`. Returns the publication with its reservations.
	MergePublication PrepareMergePublication(const std::string &database, const std::string &staging_branch,
	                                         const std::string &destination, const MergeRecord &record,
	                                         MergePublication publication);
	std::optional<MergePublication> FindMergePublication(const std::string &database, const std::string &request_id);
	//! Step 2 done: the result's descriptor, and the request `uploaded`.
	void RecordMergeUploaded(const std::string &database, const std::string &request_id, const Hash256 &descriptor);
	//! `publication_uncertain` before a head write is sent; `uploaded` again once the head is known not
	//! to be ours (head_conflict).
	void RecordPublicationState(const std::string &database, const std::string &request_id, RequestState state);
	//! Step 4, one transaction: the snapshot under its reserved number, the destination at it, the
	//! export and the head recorded, the prepared branch gone, the request complete.
	int64_t CompleteMergePublication(const std::string &database, const MergeRecord &record,
	                                 const MergePublication &publication, const PublishedHead &head);

private:
	MetadataCore &core;
};

} // namespace differential
