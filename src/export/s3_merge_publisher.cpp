// A merge's remote steps through the export layer: the result is exported like a snapshot, the head is
// moved from the exact version the merge started from, and every failure says the request's state.
#include "export/s3_merge_publisher.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "export/merge_export.hpp"
#include "remote/export_format.hpp"
#include "repository/evicted_chunk_reader.hpp"

namespace differential {

namespace {

class S3Publisher : public MergePublisher {
public:
	S3Publisher(std::shared_ptr<Repository> repository, std::string database, std::string url,
	            std::shared_ptr<ObjectStore> store)
	    : repository(std::move(repository)), database(std::move(database)), url(std::move(url)),
	      store(std::move(store)) {
	}

	const std::string &StoreUrl() const override {
		return url;
	}

	std::optional<PublishedHead> StartHead(const std::string &branch) override {
		return repository->metadata->remote.Head(url, database, branch);
	}

	Hash256 Export(const MergePublication &publication) override {
		auto context = Context();
		ExportStats stats;
		try {
			return ExportMergeResult(context, publication.prepared_branch, publication.snapshot_id,
			                         publication.created_at_us, stats);
		} catch (ExportFailure &e) {
			Fail(e.status == ObjectStatus::DENIED ? ErrorCode::ACCESS_DENIED : ErrorCode::EXPORT_FAILED,
			     "Exporting the prepared result of merge request " + QuoteName(publication.request_id) + " to " + url +
			         " failed (" + e.what() +
			         "). The request stays prepared and nothing was published; retry the same call (check the TYPE s3 "
			         "secret if access was denied).");
		} catch (RemoteConflict &e) {
			Fail(ErrorCode::HEAD_CONFLICT, "Another copy of database " + QuoteName(database) + " publishes to " + url +
			                                   ": " + e.what() + ". Merge request " +
			                                   QuoteName(publication.request_id) +
			                                   " was not published; end it with differential_abort_merge.");
		}
	}

	HeadWriteOutcome PutHead(const std::string &branch, const MergePublication &publication) override {
		auto context = Context();
		ExportStats stats;
		try {
			return Convert(PutMergeHead(context, HeadKey(database, branch), HeadText(branch, publication),
			                            publication.start_etag, stats));
		} catch (ProbeRefusal &e) {
			Fail(ErrorCode::CONDITIONAL_WRITES_UNSUPPORTED,
			     "The store " + url + " does not honour conditional writes (" + e.what() +
			         "), so the merge's head was not written. Retry the same call against an S3 service that honours "
			         "If-Match and If-None-Match on PUT.");
		} catch (ExportFailure &e) {
			HeadWriteOutcome outcome;
			outcome.detail = e.what(); // the probe could not finish; the head was not written
			return outcome;
		}
	}

	HeadWriteOutcome ReadHead(const std::string &branch, const MergePublication &publication) override {
		auto context = Context();
		ExportStats stats;
		try {
			return Convert(ReadMergeHead(context, HeadKey(database, branch), HeadText(branch, publication),
			                             publication.start_etag, stats));
		} catch (ExportFailure &e) {
			Fail(ErrorCode::PUBLICATION_UNCERTAIN,
			     "Reading the head of branch " + QuoteName(branch) + " in " + url + " failed (" + e.what() +
			         "), so the outcome of merge request " + QuoteName(publication.request_id) +
			         "'s head write is still unknown; the request stays publication_uncertain. Retry the same call.");
		}
	}

	int64_t MaterializationMs() const override {
		return EvictedFetchMicros() / 1000;
	}

private:
	ExportContext Context() {
		return ExportContext {*repository, database, *store, url, nullptr, 4};
	}

	//! The head text is a function of the publication alone, so every retry writes and recognises the same bytes.
	std::string HeadText(const std::string &branch, const MergePublication &publication) const {
		BranchHead head;
		head.database = database;
		head.branch = branch;
		head.snapshot_id = publication.snapshot_id;
		head.descriptor = *publication.descriptor;
		head.previous = publication.start_descriptor;
		head.chain = publication.chain;
		head.chain_base = publication.chain_base;
		return EncodeHead(head);
	}

	static HeadWriteOutcome Convert(const MergeHeadOutcome &outcome) {
		HeadWriteOutcome out;
		out.etag = outcome.etag;
		out.detail = outcome.detail;
		switch (outcome.state) {
		case MergeHeadState::OURS:
			out.state = HeadWrite::OURS;
			break;
		case MergeHeadState::START:
			out.state = HeadWrite::START;
			break;
		case MergeHeadState::OTHER:
			out.state = HeadWrite::OTHER;
			break;
		case MergeHeadState::UNCERTAIN:
			out.state = HeadWrite::UNCERTAIN;
			break;
		}
		return out;
	}

	std::shared_ptr<Repository> repository;
	std::string database;
	std::string url;
	std::shared_ptr<ObjectStore> store;
};

} // namespace

std::shared_ptr<MergePublisher> MakeS3MergePublisher(std::shared_ptr<Repository> repository, std::string database,
                                                     std::string url, std::shared_ptr<ObjectStore> store) {
	return std::make_shared<S3Publisher>(std::move(repository), std::move(database), std::move(url), std::move(store));
}

} // namespace differential
