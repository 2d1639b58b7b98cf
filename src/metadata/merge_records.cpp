// Merge publication in the metadata: a merge's result becomes visible in one transaction, with
// its request record, or not at all.
#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/metadata_store.hpp"

namespace differential {

static const char *MERGE_REQUEST_COLUMNS =
    "SELECT request_id, arguments, state, merge_action, branch_name, snapshot_id, base_snapshot_id, "
    "ours_snapshot_id, theirs_snapshot_id, last_error_code, created_at_us, completed_at_us, attempts, operation_id, "
    "time_zone, calendar, last_error, aborted_by FROM merge_requests ";

static MetadataStore::MergeRecord ReadMergeRecord(SqliteStatement &stmt) {
	MetadataStore::MergeRecord r;
	r.request_id = stmt.Text(0);
	r.arguments = stmt.Text(1);
	r.state = stmt.Text(2);
	r.merge_action = stmt.Text(3);
	r.branch_name = stmt.Text(4);
	auto id = [&](int col) {
		return stmt.IsNull(col) ? int64_t(-1) : stmt.Int(col);
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

std::optional<MetadataStore::MergeRecord> MetadataStore::FindMergeRequest(const std::string &database,
                                                                          const std::string &request_id) {
	std::lock_guard<std::mutex> guard(lock);
	auto database_id = RequireDatabaseId(database);
	auto stmt = db.Prepare(std::string(MERGE_REQUEST_COLUMNS) + "WHERE database_id = ? AND request_id = ?");
	stmt.Bind(1, database_id).Bind(2, request_id);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	return ReadMergeRecord(stmt);
}

std::vector<MetadataStore::MergeRecord> MetadataStore::ListMergeRequests(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	auto database_id = RequireDatabaseId(database);
	auto stmt =
	    db.Prepare(std::string(MERGE_REQUEST_COLUMNS) + "WHERE database_id = ? ORDER BY created_at_us, request_id");
	stmt.Bind(1, database_id);
	std::vector<MergeRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadMergeRecord(stmt));
	}
	return out;
}

//! Records a pending request with its inputs and frozen settings, or, when the request exists,
//! applies `on_existing` (an UPDATE SET clause, applied only while it is pending). An empty error
//! reads as none.
static void UpsertPendingRequest(SqliteDatabase &db, int64_t database_id, const MetadataStore::MergeRecord &record,
                                 const std::string &error_code, const std::string &error,
                                 const std::string &on_existing) {
	db.Prepare("INSERT INTO merge_requests(database_id, request_id, arguments, state, merge_action, branch_name, "
	           "base_snapshot_id, ours_snapshot_id, theirs_snapshot_id, created_at_us, last_error_code, last_error, "
	           "operation_id, time_zone, calendar) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON "
	           "CONFLICT (database_id, request_id) DO UPDATE SET " +
	           on_existing + " WHERE state = 'pending'")
	    .Bind(1, database_id)
	    .Bind(2, record.request_id)
	    .Bind(3, record.arguments)
	    .Bind(4, record.merge_action)
	    .Bind(5, record.branch_name)
	    .Bind(6, record.base_snapshot_id)
	    .Bind(7, record.ours_snapshot_id)
	    .Bind(8, record.theirs_snapshot_id)
	    .Bind(9, NowMicros())
	    .Bind(10, error_code)
	    .Bind(11, error)
	    .Bind(12, NewUuid())
	    .Bind(13, record.time_zone)
	    .Bind(14, record.calendar)
	    .Run();
}

std::string MetadataStore::BeginMergeAttempt(const std::string &database, const MergeRecord &record) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	UpsertPendingRequest(db, database_id, record, "", "", "attempts = attempts + 1");
	auto stmt = db.Prepare("SELECT operation_id FROM merge_requests WHERE database_id = ? AND request_id = ?");
	stmt.Bind(1, database_id).Bind(2, record.request_id);
	stmt.Step();
	auto operation_id = stmt.Text(0);
	txn.Commit();
	return operation_id;
}

void MetadataStore::RecordPendingMerge(const std::string &database, const MergeRecord &record,
                                       const std::string &error_code, const std::string &error) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	UpsertPendingRequest(db, database_id, record, error_code, error,
	                     "last_error_code = excluded.last_error_code, last_error = excluded.last_error");
	txn.Commit();
}

void MetadataStore::FreezeResolutions(const std::string &database, const std::string &request_id,
                                      const std::vector<std::pair<std::string, std::string>> &decisions) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	for (auto &entry : decisions) {
		db.Prepare("INSERT OR IGNORE INTO merge_resolutions VALUES (?, ?, ?, ?)")
		    .Bind(1, database_id)
		    .Bind(2, request_id)
		    .Bind(3, entry.first)
		    .BindBlob(4, entry.second.data(), entry.second.size())
		    .Run();
	}
	txn.Commit();
}

std::vector<std::pair<std::string, std::string>> MetadataStore::FrozenResolutions(const std::string &database,
                                                                                  const std::string &request_id) {
	std::lock_guard<std::mutex> guard(lock);
	auto database_id = RequireDatabaseId(database);
	auto stmt = db.Prepare("SELECT table_name, decisions FROM merge_resolutions WHERE database_id = ? AND "
	                       "request_id = ? ORDER BY table_name");
	stmt.Bind(1, database_id).Bind(2, request_id);
	std::vector<std::pair<std::string, std::string>> out;
	while (stmt.Step()) {
		auto blob = stmt.Blob(1);
		out.emplace_back(stmt.Text(0), std::string(blob.begin(), blob.end()));
	}
	return out;
}

MetadataStore::MergeRecord MetadataStore::AbortMergeRequest(const std::string &database,
                                                            const std::string &operation_id,
                                                            const std::string &abort_request_id) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	auto find = db.Prepare(std::string(MERGE_REQUEST_COLUMNS) + "WHERE database_id = ? AND operation_id = ?");
	find.Bind(1, database_id).Bind(2, operation_id);
	if (!find.Step()) {
		Fail(ErrorKind::NOT_FOUND, "merge_request_not_found",
		     "Database " + QuoteName(database) + " has no merge operation " + QuoteName(operation_id) +
		         "; nothing was aborted. List operations with differential_merge_requests('" + database + "').");
	}
	auto record = ReadMergeRecord(find);
	if (record.state == "complete") {
		Fail(ErrorKind::CONFLICT, "merge_already_complete",
		     "Merge request " + QuoteName(record.request_id) + " already completed with snapshot " +
		         std::to_string(record.snapshot_id) +
		         "; a completed merge cannot be aborted. Restore the branch to undo its result.");
	}
	if (record.state == "pending") {
		db.Prepare("UPDATE merge_requests SET state = 'aborted', aborted_by = ?, completed_at_us = ? WHERE "
		           "database_id = ? AND operation_id = ?")
		    .Bind(1, abort_request_id)
		    .Bind(2, NowMicros())
		    .Bind(3, database_id)
		    .Bind(4, operation_id)
		    .Run();
		record.state = "aborted";
		record.aborted_by = abort_request_id;
	}
	txn.Commit();
	return record;
}

void MetadataStore::RecordMergeLocked(int64_t database_id, const MergeRecord &record) {
	if (record.request_id.empty()) {
		return;
	}
	// An abort that landed while this attempt ran wins: the publication rolls back with it.
	auto state = db.Prepare("SELECT state FROM merge_requests WHERE database_id = ? AND request_id = ?");
	state.Bind(1, database_id).Bind(2, record.request_id);
	auto current = state.Step() ? state.Text(0) : std::string();
	if (current == "aborted") {
		Fail(ErrorKind::INVALID_INPUT, "merge_aborted",
		     "Request " + QuoteName(record.request_id) +
		         " was aborted while it ran; nothing was published. Start the merge again under a new request_id.");
	}
	// Two attempts of one request can race (two processes retrying it): only one may publish.
	if (current == "complete") {
		Fail(ErrorKind::CONFLICT, "merge_already_complete",
		     "Request " + QuoteName(record.request_id) +
		         " was completed by another attempt while this one ran; nothing more was published. Run the same "
		         "call again to get its result.");
	}
	auto now = NowMicros();
	// Completes a pending request (an earlier failed attempt) or records a new one.
	db.Prepare("INSERT INTO merge_requests(database_id, request_id, arguments, state, merge_action, branch_name, "
	           "snapshot_id, base_snapshot_id, ours_snapshot_id, theirs_snapshot_id, created_at_us, completed_at_us, "
	           "operation_id) VALUES (?, ?, ?, 'complete', ?, ?, ?, ?, ?, ?, ?, ?, ?) ON "
	           "CONFLICT (database_id, request_id) DO UPDATE "
	           "SET state = 'complete', merge_action = excluded.merge_action, snapshot_id = excluded.snapshot_id, "
	           "completed_at_us = excluded.completed_at_us, last_error_code = NULL, last_error = NULL")
	    .Bind(1, database_id)
	    .Bind(2, record.request_id)
	    .Bind(3, record.arguments)
	    .Bind(4, record.merge_action)
	    .Bind(5, record.branch_name)
	    .Bind(6, record.snapshot_id)
	    .Bind(7, record.base_snapshot_id)
	    .Bind(8, record.ours_snapshot_id)
	    .Bind(9, record.theirs_snapshot_id)
	    .Bind(10, now)
	    .Bind(11, now)
	    .Bind(12, NewUuid())
	    .Run();
}

int64_t MetadataStore::BranchForMergeLocked(int64_t database_id, const std::string &database,
                                            const std::string &destination, bool create, int64_t base_snapshot,
                                            int64_t expected_head) {
	if (!create) {
		auto branch_id = RequireBranchId(database, destination);
		// The publication moves the head only from the snapshot the merge was built on.
		auto head = db.Prepare("SELECT head_snapshot_id FROM branches WHERE branch_id = ?");
		head.Bind(1, branch_id);
		if (!head.Step() || head.IsNull(0) || head.Int(0) != expected_head) {
			Fail(ErrorKind::CONFLICT, "merge_inputs_changed",
			     "Branch " + QuoteName(destination) + " of database " + QuoteName(database) +
			         " moved while the merge ran; nothing was published. Retry the merge.");
		}
		return branch_id;
	}
	if (BranchId(database, destination)) {
		Fail(ErrorKind::CONFLICT, "branch_exists",
		     "Branch " + QuoteName(destination) + " of database " + QuoteName(database) +
		         " appeared while the merge ran; nothing was published. Retry with another destination.");
	}
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us, base_snapshot_id) VALUES (?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, destination)
	    .Bind(3, NowMicros())
	    .Bind(4, base_snapshot)
	    .Run();
	return db.LastInsertRowId();
}

int64_t MetadataStore::PublishMerge(const std::string &database, const std::string &staging_branch,
                                    const std::string &destination, bool create_destination,
                                    const MergeRecord &record) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	auto staging_id = RequireBranchId(database, staging_branch);
	auto file = db.Prepare("SELECT root_id, length FROM branch_files WHERE branch_id = ? AND file_name = ?");
	file.Bind(1, staging_id).Bind(2, MAIN_FILE_NAME);
	if (!file.Step() || file.IsNull(0)) {
		Fail(ErrorKind::INTERNAL, "internal",
		     "The merge's staging branch has no database file; nothing was published.");
	}
	auto root_id = file.Int(0);
	auto length = static_cast<uint64_t>(file.Int(1));
	int64_t snapshot_id;
	{
		auto next = db.Prepare("SELECT next_snapshot_id FROM databases WHERE database_id = ?");
		next.Bind(1, database_id);
		next.Step();
		snapshot_id = next.Int(0);
	}
	auto destination_id = BranchForMergeLocked(database_id, database, destination, create_destination,
	                                           record.ours_snapshot_id, record.ours_snapshot_id);
	auto message = "merge of snapshot " + std::to_string(record.theirs_snapshot_id) + " into snapshot " +
	               std::to_string(record.ours_snapshot_id) + " (base " + std::to_string(record.base_snapshot_id) + ")";
	db.Prepare("INSERT INTO snapshots VALUES (?, ?, NULL, NULL, ?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, snapshot_id)
	    .Bind(3, message)
	    .Bind(4, NowMicros())
	    .Bind(5, destination)
	    .Bind(6, root_id)
	    .Bind(7, record.extra_info)
	    .Run();
	int64_t ordinal = 0;
	// Merging a snapshot with itself records it once as the parent.
	std::vector<int64_t> parents {record.ours_snapshot_id};
	if (record.theirs_snapshot_id != record.ours_snapshot_id) {
		parents.push_back(record.theirs_snapshot_id);
	}
	for (auto parent : parents) {
		db.Prepare("INSERT INTO snapshot_parents VALUES (?, ?, ?, ?)")
		    .Bind(1, database_id)
		    .Bind(2, snapshot_id)
		    .Bind(3, ordinal++)
		    .Bind(4, parent)
		    .Run();
	}
	db.Prepare("UPDATE databases SET next_snapshot_id = ? WHERE database_id = ?")
	    .Bind(1, snapshot_id + 1)
	    .Bind(2, database_id)
	    .Run();
	SetBranchRoot(destination_id, root_id, length);
	db.Prepare("UPDATE branches SET head_snapshot_id = ? WHERE branch_id = ?")
	    .Bind(1, snapshot_id)
	    .Bind(2, destination_id)
	    .Run();
	for (auto table : {"file_extents", "branch_files", "branches"}) {
		db.Prepare(std::string("DELETE FROM ") + table + " WHERE branch_id = ?").Bind(1, staging_id).Run();
	}
	auto completed = record;
	completed.snapshot_id = snapshot_id;
	completed.branch_name = destination;
	RecordMergeLocked(database_id, completed);
	CrashPoint("merge.before_publish_commit");
	txn.Commit();
	return snapshot_id;
}

void MetadataStore::PublishExistingSnapshot(const std::string &database, const std::string &destination,
                                            bool create_destination, const MergeRecord &record) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	StoredFile root;
	auto root_id = RequireSnapshotRoot(database_id, database, record.snapshot_id, root);
	auto destination_id = BranchForMergeLocked(database_id, database, destination, create_destination,
	                                           record.snapshot_id, record.ours_snapshot_id);
	if (record.merge_action != "already_up_to_date") {
		SetBranchRoot(destination_id, root_id, root.length);
		db.Prepare("UPDATE branches SET head_snapshot_id = ? WHERE branch_id = ?")
		    .Bind(1, record.snapshot_id)
		    .Bind(2, destination_id)
		    .Run();
	}
	RecordMergeLocked(database_id, record);
	txn.Commit();
}

} // namespace differential
