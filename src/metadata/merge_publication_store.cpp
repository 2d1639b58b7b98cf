// The local steps of an S3 merge's publication (docs/DURABILITY.md §13.9): preparing the result (its
// snapshot number, time and destination reserved, its file kept on a private branch), recording each
// later step in the request, and exposing the snapshot and branch with the request's completion.
#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/lookups.hpp"
#include "metadata/merge_request_rows.hpp"
#include "metadata/merge_request_store.hpp"
#include "metadata/remote_store.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

static const char *PUBLICATION_COLUMNS =
    "SELECT request_id, snapshot_id, created_at_us, prepared_branch, store_url, create_destination, start_etag, "
    "start_snapshot_id, start_descriptor, chain, chain_base, extra_info, descriptor FROM merge_publications ";

static MergePublication ReadPublication(SqliteStatement &stmt) {
	MergePublication p;
	p.request_id = stmt.Text(0);
	p.snapshot_id = stmt.Int(1);
	p.created_at_us = stmt.Int(2);
	p.prepared_branch = stmt.Text(3);
	p.store_url = stmt.Text(4);
	p.create_destination = stmt.Int(5) != 0;
	if (!stmt.IsNull(6)) {
		p.start_etag = stmt.Text(6);
	}
	p.start_snapshot_id = stmt.OptionalInt(7);
	if (!stmt.IsNull(8)) {
		p.start_descriptor = HashFromBlob(stmt.Blob(8));
	}
	p.chain = static_cast<uint64_t>(stmt.OptionalInt(9).value_or(0));
	if (!stmt.IsNull(10)) {
		p.chain_base = HashFromBlob(stmt.Blob(10));
	}
	p.extra_info = stmt.Text(11);
	if (!stmt.IsNull(12)) {
		p.descriptor = HashFromBlob(stmt.Blob(12));
	}
	return p;
}

static std::optional<MergePublication> FindPublication(MetadataSession &session, int64_t database_id,
                                                       const std::string &request_id) {
	auto stmt = session.db.Prepare(std::string(PUBLICATION_COLUMNS) + "WHERE database_id = ? AND request_id = ?");
	stmt.Bind(1, database_id).Bind(2, request_id);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	return ReadPublication(stmt);
}

std::optional<MergePublication> MergeRequestStore::FindMergePublication(const std::string &database,
                                                                        const std::string &request_id) {
	auto session = core.Read();
	return FindPublication(session, RequireDatabaseId(session, database), request_id);
}

static void SetState(MetadataSession &session, int64_t database_id, const std::string &request_id, RequestState state,
                     std::optional<int64_t> snapshot_id = std::nullopt) {
	session.db
	    .Prepare("UPDATE merge_requests SET state = ?, snapshot_id = coalesce(?, snapshot_id) WHERE database_id = ? "
	             "AND request_id = ?")
	    .Bind(1, std::string(ToString(state)))
	    .Bind(2, snapshot_id)
	    .Bind(3, database_id)
	    .Bind(4, request_id)
	    .Run();
}

static void InsertPublication(MetadataSession &session, int64_t database_id, const MergePublication &p) {
	session.db
	    .Prepare("INSERT INTO merge_publications(database_id, request_id, snapshot_id, created_at_us, "
	             "prepared_branch, store_url, create_destination, start_etag, start_snapshot_id, start_descriptor, "
	             "chain, chain_base, extra_info) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, p.request_id)
	    .Bind(3, p.snapshot_id)
	    .Bind(4, p.created_at_us)
	    .Bind(5, p.prepared_branch)
	    .Bind(6, p.store_url)
	    .Bind(7, int64_t(p.create_destination ? 1 : 0))
	    .Bind(8, p.start_etag)
	    .Bind(9, p.start_snapshot_id)
	    .BindBlob(10, p.start_descriptor.data(), p.start_descriptor.size())
	    .Bind(11, p.chain ? std::optional<int64_t>(int64_t(p.chain)) : std::nullopt)
	    .BindBlob(12, p.chain_base.data(), p.chain_base.size())
	    .Bind(13, p.extra_info)
	    .Run();
}

MergePublication MergeRequestStore::PrepareMergePublication(const std::string &database,
                                                            const std::string &staging_branch,
                                                            const std::string &destination, const MergeRecord &record,
                                                            MergePublication publication) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	auto current = FindRequest(txn, database_id, "request_id", record.request_id);
	if (!current || current->state != RequestState::PENDING) {
		Fail(ErrorCode::MERGE_ALREADY_COMPLETE,
		     "Request " + QuoteName(record.request_id) +
		         " was completed, aborted or prepared by another attempt while this one ran; nothing more was "
		         "prepared. Run the same call again to continue it.");
	}
	// Checked now, published later: the destination must still be where the merge started (or free).
	if (publication.create_destination) {
		RequireNameNotReserved(txn, database_id, database, destination);
		if (FindBranchId(txn, database, destination)) {
			Fail(ErrorCode::BRANCH_EXISTS,
			     "Branch " + QuoteName(destination) + " of database " + QuoteName(database) +
			         " appeared while the merge ran; nothing was published. Retry with another destination.");
		}
	} else {
		auto head = BranchHead(txn, RequireBranchId(txn, database, destination));
		if (!head || *head != record.ours_snapshot_id) {
			Fail(ErrorCode::MERGE_INPUTS_CHANGED,
			     "Branch " + QuoteName(destination) + " of database " + QuoteName(database) +
			         " moved while the merge ran; nothing was published. Retry the merge.");
		}
	}
	// The staging branch becomes the prepared result's: no longer named after this process, so the
	// sweep of abandoned staging branches leaves it to the request.
	publication.prepared_branch = "__prepared-" + record.request_id;
	txn.db.Prepare("UPDATE branches SET branch_name = ? WHERE branch_id = ?")
	    .Bind(1, publication.prepared_branch)
	    .Bind(2, RequireBranchId(txn, database, staging_branch))
	    .Run();
	publication.snapshot_id = ReserveSnapshotId(txn, database_id);
	publication.created_at_us = NowMicros();
	publication.request_id = record.request_id;
	InsertPublication(txn, database_id, publication);
	txn.db.Prepare("UPDATE merge_requests SET merge_action = ? WHERE database_id = ? AND request_id = ?")
	    .Bind(1, record.merge_action)
	    .Bind(2, database_id)
	    .Bind(3, record.request_id)
	    .Run();
	SetState(txn, database_id, record.request_id, RequestState::PREPARED, publication.snapshot_id);
	CrashPoint("merge.s3.before_prepare_commit");
	txn.Commit();
	return publication;
}

void MergeRequestStore::RecordMergeUploaded(const std::string &database, const std::string &request_id,
                                            const Hash256 &descriptor) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	txn.db.Prepare("UPDATE merge_publications SET descriptor = ? WHERE database_id = ? AND request_id = ?")
	    .BindBlob(1, descriptor.data(), descriptor.size())
	    .Bind(2, database_id)
	    .Bind(3, request_id)
	    .Run();
	SetState(txn, database_id, request_id, RequestState::UPLOADED);
	txn.Commit();
}

void MergeRequestStore::RecordPublicationState(const std::string &database, const std::string &request_id,
                                               RequestState state) {
	auto txn = core.Write();
	SetState(txn, RequireDatabaseId(txn, database), request_id, state);
	txn.Commit();
}

//! Appends the merge snapshot under its reserved number and time, with parents [ours, theirs].
static void AppendReservedSnapshot(MetadataSession &session, int64_t database_id, int64_t root_id,
                                   const MergeRecord &record, const MergePublication &publication) {
	NewSnapshot snapshot;
	snapshot.database_id = database_id;
	snapshot.root_id = root_id;
	snapshot.reserved_id = publication.snapshot_id;
	snapshot.reserved_created_at_us = publication.created_at_us;
	snapshot.message = MergeSnapshotMessage(record);
	snapshot.branch_name = record.branch_name;
	snapshot.extra_info = publication.extra_info;
	snapshot.parents.push_back(record.ours_snapshot_id);
	if (record.theirs_snapshot_id != record.ours_snapshot_id) {
		snapshot.parents.push_back(record.theirs_snapshot_id);
	}
	AppendSnapshot(session, snapshot);
}

int64_t MergeRequestStore::CompleteMergePublication(const std::string &database, const MergeRecord &record,
                                                    const MergePublication &publication, const PublishedHead &head) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	auto prepared_id = RequireBranchId(txn, database, publication.prepared_branch);
	auto file = txn.db.Prepare("SELECT root_id, length FROM branch_files WHERE branch_id = ? AND file_name = ?");
	file.Bind(1, prepared_id).Bind(2, MAIN_FILE_NAME);
	if (!file.Step() || file.IsNull(0)) {
		Fail(ErrorCode::INTERNAL, "The prepared merge result has no database file; nothing was exposed.");
	}
	auto root_id = file.Int(0);
	auto length = static_cast<uint64_t>(file.Int(1));
	auto destination_id =
	    DestinationBranch(txn, database_id, database, record.branch_name, publication.create_destination,
	                      record.ours_snapshot_id, record.ours_snapshot_id);
	AppendReservedSnapshot(txn, database_id, root_id, record, publication);
	SetBranchRoot(txn, destination_id, root_id, length);
	SetBranchHead(txn, destination_id, publication.snapshot_id);
	DeleteBranch(txn, prepared_id);
	WriteSnapshotExport(txn, database_id, publication.snapshot_id, publication.store_url, head.descriptor);
	WriteRemoteHead(txn, publication.store_url, database, record.branch_name, head);
	txn.db.Prepare("DELETE FROM merge_publications WHERE database_id = ? AND request_id = ?")
	    .Bind(1, database_id)
	    .Bind(2, record.request_id)
	    .Run();
	auto completed = record;
	completed.snapshot_id = publication.snapshot_id;
	RecordCompletedRequest(txn, database_id, completed);
	CrashPoint("merge.s3.before_complete_commit");
	txn.Commit();
	return publication.snapshot_id;
}

void RequireNameNotReserved(MetadataSession &session, int64_t database_id, const std::string &database,
                            const std::string &branch) {
	auto stmt = session.db.Prepare(
	    "SELECT p.request_id FROM merge_publications p JOIN merge_requests r ON r.database_id = p.database_id AND "
	    "r.request_id = p.request_id WHERE p.database_id = ? AND p.create_destination = 1 AND r.branch_name = ?");
	stmt.Bind(1, database_id).Bind(2, branch);
	if (stmt.Step()) {
		Fail(ErrorCode::BRANCH_EXISTS,
		     "Branch name " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " is reserved by the prepared S3 merge request " + QuoteName(stmt.Text(0)) +
		         "; nothing was created. Retry that merge call to publish it, abort the request, or choose another "
		         "name.");
	}
}

void ReleasePreparedResult(MetadataSession &session, int64_t database_id, const std::string &database,
                           const std::string &request_id) {
	auto publication = FindPublication(session, database_id, request_id);
	if (!publication) {
		return;
	}
	if (auto branch_id = FindBranchId(session, database, publication->prepared_branch)) {
		DeleteBranch(session, *branch_id);
	}
	session.db.Prepare("DELETE FROM merge_publications WHERE database_id = ? AND request_id = ?")
	    .Bind(1, database_id)
	    .Bind(2, request_id)
	    .Run();
}

} // namespace differential
