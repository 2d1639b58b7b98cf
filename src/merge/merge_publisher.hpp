// What a merge into an S3 database needs from the export layer, declared here so that merge/ knows nothing of S3
// (export/s3_merge_publisher.cpp implements it): the head it starts from, the export of the prepared result, and
// the conditional head write with the reading that resolves an unknown outcome.
#pragma once

#include "metadata/records.hpp"
#include "metadata/remote_store.hpp"

#include <optional>
#include <string>

namespace differential {

//! What the destination's head holds, after a write or a read.
enum class HeadWrite {
	OURS,     //! exactly the merge's head: published
	START,    //! still the version the merge started from (or still absent): not published
	OTHER,    //! another writer moved it: head_conflict
	UNCERTAIN //! a write was sent and its answer lost
};

struct HeadWriteOutcome {
	HeadWrite state = HeadWrite::UNCERTAIN;
	std::string etag; //! when OURS
	std::string detail;
};

class MergePublisher {
public:
	virtual ~MergePublisher() = default;
	virtual const std::string &StoreUrl() const = 0;
	//! The version of `branch`'s head this repository published last: the one the merge starts from
	//! (none for a branch without a head, whose write is then create-only).
	virtual std::optional<PublishedHead> StartHead(const std::string &branch) = 0;
	//! Step 2: exports the prepared result; returns its descriptor.
	virtual Hash256 Export(const MergePublication &publication) = 0;
	//! Step 3: the conditional head write (If-Match the start etag, or If-None-Match: *).
	virtual HeadWriteOutcome PutHead(const std::string &branch, const MergePublication &publication) = 0;
	//! Reads the head to resolve an earlier write whose outcome is unknown (never UNCERTAIN).
	virtual HeadWriteOutcome ReadHead(const std::string &branch, const MergePublication &publication) = 0;
	//! Milliseconds this process spent so far reading evicted chunks back from the store (a merge
	//! reports the difference over its run as materialization_ms).
	virtual int64_t MaterializationMs() const = 0;
};

} // namespace differential
