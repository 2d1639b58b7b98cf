// Publishing a merge into an S3 database in durable steps (docs/DURABILITY.md §13.9): there is no
// transaction spanning the metadata and the bucket, so each step is recorded in the request before the
// next one starts, and a retry continues from the recorded state without publishing a second time.
#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "merge/merge_steps.hpp"

namespace differential {

void RequireRequestForS3(const MergeOptions &options, const std::optional<std::string> &request_id,
                         const std::string &database) {
	if (options.publisher && !request_id) {
		Fail(ErrorCode::MERGE_REQUEST_REQUIRED,
		     "S3 merge requires a request_id: database " + QuoteName(database) + " publishes to " +
		         options.publisher->StoreUrl() +
		         ", and its merge publishes in durable steps that a retry must find again. Nothing was merged. "
		         "Call the merge again with request_id => '<a name for this merge>'.");
	}
}

[[noreturn]] static void RaiseUncertain(const MergeRecord &record, const MergePublication &publication,
                                        const std::string &detail) {
	Fail(ErrorCode::PUBLICATION_UNCERTAIN,
	     "The head write of merge request " + QuoteName(record.request_id) + " (snapshot " +
	         std::to_string(publication.snapshot_id) + " to " + QuoteName(record.branch_name) + " in " +
	         publication.store_url + ") was sent, but its outcome is unknown (" + detail +
	         "). The request stays publication_uncertain and cannot be aborted; retry the same call: it reads the "
	         "head and completes the merge, publishes it, or reports head_conflict.");
}

[[noreturn]] static void RaiseHeadConflict(MetadataStore &metadata, const std::string &database,
                                           const MergeRecord &record, const MergePublication &publication,
                                           const std::string &detail) {
	// Known not published: the request may be aborted now.
	metadata.merges.RecordPublicationState(database, record.request_id, RequestState::UPLOADED);
	Fail(ErrorCode::HEAD_CONFLICT,
	     "Another copy of database " + QuoteName(database) + " moved the head of branch " +
	         QuoteName(record.branch_name) + " in " + publication.store_url + " since merge request " +
	         QuoteName(record.request_id) + " started (" + detail +
	         "). The merge was not published and the other version was not adopted; snapshot " +
	         std::to_string(publication.snapshot_id) +
	         " stays reserved by the request. Attach the head read-only to see the other version, then end the request "
	         "with differential_abort_merge and merge again from a copy that has the new state.");
}

//! Steps 2 to 4 from the request's recorded state.
static int64_t FinishPublication(MetadataStore &metadata, MergePublisher &publisher, const std::string &database,
                                 const MergeRecord &record, MergePublication publication, RequestState state) {
	if (state == RequestState::PREPARED) {
		publication.descriptor = publisher.Export(publication);
		metadata.merges.RecordMergeUploaded(database, record.request_id, *publication.descriptor);
		CrashPoint("merge.s3.after_upload");
		state = RequestState::UPLOADED;
	}
	HeadWriteOutcome head;
	head.state = HeadWrite::START;
	if (state == RequestState::PUBLICATION_UNCERTAIN) {
		// An earlier write may have landed (or may still land): read before writing again.
		head = publisher.ReadHead(record.branch_name, publication);
	}
	if (head.state == HeadWrite::START) {
		metadata.merges.RecordPublicationState(database, record.request_id, RequestState::PUBLICATION_UNCERTAIN);
		CrashPoint("merge.s3.before_head_put");
		PausePoint("merge.s3.before_head_put"); // tests move the head from another copy here
		head = publisher.PutHead(record.branch_name, publication);
	}
	if (head.state == HeadWrite::UNCERTAIN) {
		RaiseUncertain(record, publication, head.detail);
	}
	if (head.state != HeadWrite::OURS) {
		RaiseHeadConflict(metadata, database, record, publication, head.detail);
	}
	CrashPoint("merge.s3.after_head_put");
	PublishedHead published {publication.snapshot_id, *publication.descriptor, head.etag};
	published.chain = publication.chain;
	published.chain_base = publication.chain_base;
	return metadata.merges.CompleteMergePublication(database, record, publication, published);
}

int64_t PublishStagedOnS3(MetadataStore &metadata, MergePublisher &publisher, const std::string &database,
                          MergeSession &session, bool create_destination, const MergeRecord &record,
                          const std::optional<PublishedHead> &start) {
	MergePublication draft;
	draft.store_url = publisher.StoreUrl();
	draft.create_destination = create_destination;
	draft.extra_info = record.extra_info;
	if (start) {
		draft.start_etag = start->etag;
		draft.start_snapshot_id = start->snapshot_id;
		draft.start_descriptor = start->descriptor;
		draft.chain = start->chain;
		draft.chain_base = start->chain_base;
	}
	auto publication =
	    metadata.merges.PrepareMergePublication(database, session.staging, record.branch_name, record, draft);
	session.published = true; // the staging branch now belongs to the request
	CrashPoint("merge.s3.after_prepare");
	return FinishPublication(metadata, publisher, database, record, publication, RequestState::PREPARED);
}

int64_t ResumePublication(MetadataStore &metadata, MergePublisher &publisher, const std::string &database,
                          const MergeRecord &record) {
	auto publication = metadata.merges.FindMergePublication(database, record.request_id);
	if (!publication) {
		Fail(ErrorCode::INTERNAL,
		     "Merge request " + QuoteName(record.request_id) +
		         " is prepared but its prepared result is missing; abort it with differential_abort_merge and merge "
		         "again under a new request_id.");
	}
	if (publication->store_url != publisher.StoreUrl()) {
		Fail(ErrorCode::DATA_PATH_MISMATCH,
		     "Merge request " + QuoteName(record.request_id) + " was prepared for " + publication->store_url +
		         ", but database " + QuoteName(database) + " now publishes to " + publisher.StoreUrl() +
		         "; nothing was published. Abort the request with differential_abort_merge.");
	}
	return FinishPublication(metadata, publisher, database, record, *publication, record.state);
}

} // namespace differential
