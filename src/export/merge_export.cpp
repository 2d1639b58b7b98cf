// An S3 merge's export and head write. The export reuses the snapshot export's steps; the head write is
// the one place where an answer can be lost after the write landed, so its outcome is reported as data
// and resolved by reading the head, never by writing again blindly.
#include "export/merge_export.hpp"

#include "common/errors.hpp"
#include "common/fault_points.hpp"
#include "export/export_marker.hpp"
#include "export/export_pending.hpp"
#include "storage/diff_path.hpp"

namespace differential {

Hash256 ExportMergeResult(ExportContext &context, const std::string &prepared_branch, int64_t snapshot_id,
                          int64_t created_at_us, ExportStats &stats) {
	ExportLock lock(context.repository.root);
	ExportMarker marker(context, stats);
	FileAddress address;
	address.repository = context.repository.root;
	address.database = context.database;
	address.branch = prepared_branch;
	address.file_name = MAIN_FILE_NAME;
	StoredFile file;
	// The prepared branch is the request's alone: nothing else writes or drops it while it exists.
	if (!context.repository.storage->catalog->LoadFile(address, file)) {
		Fail(ErrorCode::INTERNAL,
		     "The prepared merge result " + prepared_branch + " has no database file; nothing was exported.");
	}
	ExportDescriptor descriptor;
	descriptor.database = context.database;
	descriptor.snapshot_id = snapshot_id;
	descriptor.created_unix_ms = created_at_us / 1000;
	descriptor.length = file.length;
	return ExportAsSnapshot(context, PublishedChunkHashes(*context.repository.storage->catalog, file), descriptor,
	                        std::nullopt, stats);
}

//! What the head holds now, against our text and the version the merge started from.
MergeHeadOutcome ReadMergeHead(ExportContext &context, const std::string &key, const std::string &text,
                               const std::optional<std::string> &start_etag, ExportStats &stats) {
	ExportUploader uploader(context.store, stats);
	auto current = uploader.Get(key);
	MergeHeadOutcome outcome;
	if (!current.outcome.Ok()) { // NOT_FOUND: no head at all
		outcome.state = start_etag ? MergeHeadState::OTHER : MergeHeadState::START;
		outcome.detail = "the head " + key + " is gone";
		return outcome;
	}
	if (current.data == text) {
		outcome.state = MergeHeadState::OURS;
		outcome.etag = current.etag;
		return outcome;
	}
	outcome.state = start_etag && current.etag == *start_etag ? MergeHeadState::START : MergeHeadState::OTHER;
	outcome.detail = "the head " + key + " holds another version";
	return outcome;
}

MergeHeadOutcome PutMergeHead(ExportContext &context, const std::string &key, const std::string &text,
                              const std::optional<std::string> &start_etag, ExportStats &stats) {
	RequireConditionalWrites(context);
	MergeHeadOutcome outcome;
	// Fault points for the tests: the write is lost on the way, or lands with its answer lost.
	bool lost = InjectedFault("merge.head_put_lost") != 0;
	bool unanswered = InjectedFault("merge.head_put_unanswered") != 0;
	if (lost) {
		outcome.detail = "injected: the head write was lost in transit";
		return outcome;
	}
	ExportUploader uploader(context.store, stats);
	PutResult result;
	try {
		result = uploader.PutConditional(key, text,
		                                 start_etag ? PutCondition::IfMatch(*start_etag) : PutCondition::CreateOnly());
	} catch (ExportFailure &e) {
		outcome.detail = e.what(); // sent, answer unknown (or refused after retries: reading tells)
		return outcome;
	}
	if (unanswered) {
		outcome.detail = "injected: the head write landed but its answer was lost";
		return outcome;
	}
	if (result.outcome.Ok()) {
		outcome.state = MergeHeadState::OURS;
		outcome.etag = result.etag;
		return outcome;
	}
	if (result.outcome.status == ObjectStatus::CONFLICT) {
		outcome.detail = "a concurrent write to " + key + " was in flight";
		return outcome;
	}
	// Refused (412, or 404 for If-Match on a deleted head): ours only if a lost answer to a retry hides it.
	outcome = ReadMergeHead(context, key, text, start_etag, stats);
	if (outcome.state == MergeHeadState::START) {
		outcome.state = MergeHeadState::OTHER; // refused, so it was not the start version when we wrote
	}
	return outcome;
}

} // namespace differential
