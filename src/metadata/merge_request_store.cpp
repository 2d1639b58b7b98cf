// Merge requests and merge publication: a merge's result becomes visible in one transaction, with
// its request record, or not at all.
#include "metadata/merge_request_store.hpp"

#include "metadata/merge_request_rows.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

static const char *MERGE_REQUEST_COLUMNS =
    "SELECT request_id, arguments, state, merge_action, branch_name, snapshot_id, base_snapshot_id, "
    "ours_snapshot_id, theirs_snapshot_id, last_error_code, created_at_us, completed_at_us, attempts, operation_id, "
    "time_zone, calendar, last_error, aborted_by FROM merge_requests ";

static MergeRecord ReadMergeRecord(SqliteStatement &stmt) {
	MergeRecord r;
	r.request_id = stmt.Text(0);
	r.arguments = stmt.Text(1);
	r.state = ParseRequestState(stmt.Text(2));
	r.merge_action = stmt.Text(3);
	r.branch_name = stmt.Text(4);
	auto id = [&](int col) {
		return stmt.OptionalInt(col).value_or(-1);
	};
	r.snapshot_id = id(5);
	r.base_snapshot_id = id(6);
	r.ours_snapshot_id = id(7);
	r.theirs_snapshot_id = id(8);
	r.last_error_code = stmt.Text(9);
	r.created_at_us = stmt.Int(10);
	r.completed_at_us = id(11);
	r.attempts = stmt.Int(12);
	r.operation_id = stmt.Text(13);
	r.time_zone = stmt.Text(14);
	r.calendar = stmt.Text(15);
	r.last_error = stmt.Text(16);
	r.aborted_by = stmt.Text(17);
	return r;
}

std::string MergeSnapshotMessage(const MergeRecord &record) {
	return "merge of snapshot " + std::to_string(record.theirs_snapshot_id) + " into snapshot " +
	       std::to_string(record.ours_snapshot_id) +
	       (record.base_snapshot_id >= 0 ? " (base " + std::to_string(record.base_snapshot_id) + ")"
	                                     : std::string(" (virtual base)"));
}

std::optional<MergeRecord> FindRequest(MetadataSession &session, int64_t database_id, const char *key_column,
                                       const std::string &key) {
	auto stmt =
	    session.db.Prepare(std::string(MERGE_REQUEST_COLUMNS) + "WHERE database_id = ? AND " + key_column + " = ?");
	stmt.Bind(1, database_id).Bind(2, key);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	return ReadMergeRecord(stmt);
}

std::optional<MergeRecord> MergeRequestStore::FindMergeRequest(const std::string &database,
                                                               const std::string &request_id) {
	auto session = core.Read();
	return FindRequest(session, RequireDatabaseId(session, database), "request_id", request_id);
}

std::vector<MergeRecord> MergeRequestStore::ListMergeRequests(const std::string &database) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare(std::string(MERGE_REQUEST_COLUMNS) +
	                               "WHERE database_id = ? ORDER BY created_at_us, request_id");
	stmt.Bind(1, database_id);
	std::vector<MergeRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadMergeRecord(stmt));
	}
	return out;
}

//! Records a new pending request with its inputs, frozen settings and error (empty reads as none);
//! true when it was new.
static bool InsertPendingRequest(MetadataSession &session, int64_t database_id, const MergeRecord &record,
                                 const std::string &error_code, const std::string &error) {
	session.db
	    .Prepare(
	        "INSERT OR IGNORE INTO merge_requests(database_id, request_id, arguments, state, merge_action, "
	        "branch_name, base_snapshot_id, ours_snapshot_id, theirs_snapshot_id, created_at_us, "
	        "last_error_code, last_error, operation_id, time_zone, calendar) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
	        "?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, record.request_id)
	    .Bind(3, record.arguments)
	    .Bind(4, std::string(ToString(RequestState::PENDING)))
	    .Bind(5, record.merge_action)
	    .Bind(6, record.branch_name)
	    .Bind(7, record.base_snapshot_id)
	    .Bind(8, record.ours_snapshot_id)
	    .Bind(9, record.theirs_snapshot_id)
	    .Bind(10, NowMicros())
	    .Bind(11, error_code)
	    .Bind(12, error)
	    .Bind(13, NewUuid())
	    .Bind(14, record.time_zone)
	    .Bind(15, record.calendar)
	    .Run();
	return session.db.Changes() > 0;
}

std::string MergeRequestStore::BeginMergeAttempt(const std::string &database, const MergeRecord &record) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	if (!InsertPendingRequest(txn, database_id, record, "", "")) {
		txn.db
		    .Prepare("UPDATE merge_requests SET attempts = attempts + 1 WHERE database_id = ? AND request_id = ? AND "
		             "state NOT IN (?, ?)")
		    .Bind(1, database_id)
		    .Bind(2, record.request_id)
		    .Bind(3, std::string(ToString(RequestState::COMPLETE)))
		    .Bind(4, std::string(ToString(RequestState::ABORTED)))
		    .Run();
	}
	auto stored = FindRequest(txn, database_id, "request_id", record.request_id);
	txn.Commit();
	return stored ? stored->operation_id : std::string();
}

void MergeRequestStore::RecordPendingMerge(const std::string &database, const MergeRecord &record,
                                           const std::string &error_code, const std::string &error) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	if (!InsertPendingRequest(txn, database_id, record, error_code, error)) {
		txn.db
		    .Prepare("UPDATE merge_requests SET last_error_code = ?, last_error = ? WHERE database_id = ? AND "
		             "request_id = ? AND state NOT IN (?, ?)")
		    .Bind(1, error_code)
		    .Bind(2, error)
		    .Bind(3, database_id)
		    .Bind(4, record.request_id)
		    .Bind(5, std::string(ToString(RequestState::COMPLETE)))
		    .Bind(6, std::string(ToString(RequestState::ABORTED)))
		    .Run();
	}
	txn.Commit();
}

void MergeRequestStore::FreezeResolutions(const std::string &database, const std::string &request_id,
                                          const std::vector<std::pair<std::string, std::string>> &decisions) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	auto insert = txn.db.Prepare("INSERT OR IGNORE INTO merge_resolutions(database_id, request_id, table_name, "
	                             "decisions) VALUES (?, ?, ?, ?)");
	for (auto &entry : decisions) {
		insert.Reset();
		insert.Bind(1, database_id)
		    .Bind(2, request_id)
		    .Bind(3, entry.first)
		    .BindBlob(4, entry.second.data(), entry.second.size())
		    .Run();
	}
	txn.Commit();
}

std::vector<std::pair<std::string, std::string>> MergeRequestStore::FrozenResolutions(const std::string &database,
                                                                                      const std::string &request_id) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare("SELECT table_name, decisions FROM merge_resolutions WHERE database_id = ? AND "
	                               "request_id = ? ORDER BY table_name");
	stmt.Bind(1, database_id).Bind(2, request_id);
	std::vector<std::pair<std::string, std::string>> out;
	while (stmt.Step()) {
		auto blob = stmt.Blob(1);
		out.emplace_back(stmt.Text(0), std::string(blob.begin(), blob.end()));
	}
	return out;
}

MergeRecord MergeRequestStore::AbortMergeRequest(const std::string &database, const std::string &operation_id,
                                                 const std::string &abort_request_id) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	auto found = FindRequest(txn, database_id, "operation_id", operation_id);
	if (!found) {
		Fail(ErrorCode::MERGE_REQUEST_NOT_FOUND,
		     "Database " + QuoteName(database) + " has no merge operation " + QuoteName(operation_id) +
		         "; nothing was aborted. List operations with differential_merge_requests('" + database + "').");
	}
	auto record = *found;
	if (record.state == RequestState::COMPLETE) {
		Fail(ErrorCode::MERGE_ALREADY_COMPLETE,
		     "Merge request " + QuoteName(record.request_id) + " already completed with snapshot " +
		         std::to_string(record.snapshot_id) +
		         "; a completed merge cannot be aborted. Restore the branch to undo its result.");
	}
	if (record.state == RequestState::PUBLICATION_UNCERTAIN) {
		Fail(ErrorCode::MERGE_PUBLICATION_UNCERTAIN,
		     "Merge request " + QuoteName(record.request_id) +
		         " sent a head write to S3 whose outcome is unknown; it may still land, so the result cannot be "
		         "discarded. Retry the same merge call: it reads the head and completes the merge or reports "
		         "head_conflict, after which the request can be aborted.");
	}
	if (record.state != RequestState::ABORTED) {
		ReleasePreparedResult(txn, database_id, database, record.request_id);
		txn.db
		    .Prepare("UPDATE merge_requests SET state = ?, aborted_by = ?, completed_at_us = ?, snapshot_id = NULL "
		             "WHERE database_id = ? AND operation_id = ?")
		    .Bind(1, std::string(ToString(RequestState::ABORTED)))
		    .Bind(2, abort_request_id)
		    .Bind(3, NowMicros())
		    .Bind(4, database_id)
		    .Bind(5, operation_id)
		    .Run();
		record.state = RequestState::ABORTED;
		record.aborted_by = abort_request_id;
		record.snapshot_id = -1; // a reserved number is no result
	}
	txn.Commit();
	return record;
}

//! Records the request as complete with the publication (nothing when it has no request id). An
//! abort, or another attempt's completion, that landed while this attempt ran wins: the caller's
//! transaction rolls back with the refusal.
void RecordCompletedRequest(MetadataSession &session, int64_t database_id, const MergeRecord &record) {
	if (record.request_id.empty()) {
		return;
	}
	auto current = FindRequest(session, database_id, "request_id", record.request_id);
	if (current && current->state == RequestState::ABORTED) {
		Fail(ErrorCode::MERGE_ABORTED,
		     "Request " + QuoteName(record.request_id) +
		         " was aborted while it ran; nothing was published. Start the merge again under a new request_id.");
	}
	if (current && current->state == RequestState::COMPLETE) {
		Fail(ErrorCode::MERGE_ALREADY_COMPLETE,
		     "Request " + QuoteName(record.request_id) +
		         " was completed by another attempt while this one ran; nothing more was published. Run the same "
		         "call again to get its result.");
	}
	auto now = NowMicros();
	auto complete = std::string(ToString(RequestState::COMPLETE));
	if (current) {
		session.db
		    .Prepare("UPDATE merge_requests SET state = ?, merge_action = ?, snapshot_id = ?, completed_at_us = ?, "
		             "last_error_code = NULL, last_error = NULL WHERE database_id = ? AND request_id = ?")
		    .Bind(1, complete)
		    .Bind(2, record.merge_action)
		    .Bind(3, record.snapshot_id)
		    .Bind(4, now)
		    .Bind(5, database_id)
		    .Bind(6, record.request_id)
		    .Run();
		return;
	}
	session.db
	    .Prepare("INSERT INTO merge_requests(database_id, request_id, arguments, state, merge_action, branch_name, "
	             "snapshot_id, base_snapshot_id, ours_snapshot_id, theirs_snapshot_id, created_at_us, completed_at_us, "
	             "operation_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, record.request_id)
	    .Bind(3, record.arguments)
	    .Bind(4, complete)
	    .Bind(5, record.merge_action)
	    .Bind(6, record.branch_name)
	    .Bind(7, record.snapshot_id)
	    .Bind(8, record.base_snapshot_id)
	    .Bind(9, record.ours_snapshot_id)
	    .Bind(10, record.theirs_snapshot_id)
	    .Bind(11, now)
	    .Bind(12, now)
	    .Bind(13, NewUuid())
	    .Run();
}

//! The destination's id; an existing one must still have `expected_head` (merge_inputs_changed), a
//! new one must still be free.
int64_t DestinationBranch(MetadataSession &session, int64_t database_id, const std::string &database,
                          const std::string &destination, bool create, int64_t base_snapshot, int64_t expected_head) {
	if (!create) {
		auto branch_id = RequireBranchId(session, database, destination);
		// The publication moves the head only from the snapshot the merge was built on.
		auto head = BranchHead(session, branch_id);
		if (!head || *head != expected_head) {
			Fail(ErrorCode::MERGE_INPUTS_CHANGED,
			     "Branch " + QuoteName(destination) + " of database " + QuoteName(database) +
			         " moved while the merge ran; nothing was published. Retry the merge.");
		}
		return branch_id;
	}
	if (FindBranchId(session, database, destination)) {
		Fail(ErrorCode::BRANCH_EXISTS,
		     "Branch " + QuoteName(destination) + " of database " + QuoteName(database) +
		         " appeared while the merge ran; nothing was published. Retry with another destination.");
	}
	session.db
	    .Prepare("INSERT INTO branches(database_id, branch_name, created_at_us, base_snapshot_id) VALUES (?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, destination)
	    .Bind(3, NowMicros())
	    .Bind(4, base_snapshot)
	    .Run();
	return session.db.LastInsertRowId();
}

int64_t MergeRequestStore::PublishMerge(const std::string &database, const std::string &staging_branch,
                                        const std::string &destination, bool create_destination,
                                        const MergeRecord &record) {
	auto txn = core.Write();
	NewSnapshot snapshot;
	snapshot.database_id = RequireDatabaseId(txn, database);
	auto staging_id = RequireBranchId(txn, database, staging_branch);
	auto file = txn.db.Prepare("SELECT root_id, length FROM branch_files WHERE branch_id = ? AND file_name = ?");
	file.Bind(1, staging_id).Bind(2, MAIN_FILE_NAME);
	if (!file.Step() || file.IsNull(0)) {
		Fail(ErrorCode::INTERNAL, "The merge's staging branch has no database file; nothing was published.");
	}
	snapshot.root_id = file.Int(0);
	auto length = static_cast<uint64_t>(file.Int(1));
	auto destination_id = DestinationBranch(txn, snapshot.database_id, database, destination, create_destination,
	                                        record.ours_snapshot_id, record.ours_snapshot_id);
	snapshot.message = MergeSnapshotMessage(record);
	snapshot.branch_name = destination;
	snapshot.extra_info = record.extra_info;
	// Merging a snapshot with itself records it once as the parent.
	snapshot.parents.push_back(record.ours_snapshot_id);
	if (record.theirs_snapshot_id != record.ours_snapshot_id) {
		snapshot.parents.push_back(record.theirs_snapshot_id);
	}
	auto published = AppendSnapshot(txn, snapshot);
	SetBranchRoot(txn, destination_id, snapshot.root_id, length);
	SetBranchHead(txn, destination_id, published.snapshot_id);
	DeleteBranch(txn, staging_id);
	auto completed = record;
	completed.snapshot_id = published.snapshot_id;
	completed.branch_name = destination;
	RecordCompletedRequest(txn, snapshot.database_id, completed);
	CrashPoint("merge.before_publish_commit");
	txn.Commit();
	return published.snapshot_id;
}

void MergeRequestStore::PublishExistingSnapshot(const std::string &database, const std::string &destination,
                                                bool create_destination, const MergeRecord &record) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	StoredFile root;
	auto root_id = RequireSnapshotRoot(txn, database_id, database, record.snapshot_id, root);
	auto destination_id = DestinationBranch(txn, database_id, database, destination, create_destination,
	                                        record.snapshot_id, record.ours_snapshot_id);
	if (record.merge_action != "already_up_to_date") {
		SetBranchRoot(txn, destination_id, root_id, root.length);
		SetBranchHead(txn, destination_id, record.snapshot_id);
	}
	RecordCompletedRequest(txn, database_id, record);
	txn.Commit();
}

} // namespace differential
