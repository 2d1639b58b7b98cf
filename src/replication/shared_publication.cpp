// A shared writer's snapshot: read the head first (one GET), take the snapshot, publish it If-Match the
// head it started from; a head someone else moved keeps the work as a local snapshot (branch_conflict).
#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "host/database_export.hpp"
#include "host/object_store_access.hpp"
#include "replication/shared_writers.hpp"

namespace differential {

//! Every unexported snapshot of the branch is kept (never published as its head), and the conflict recorded.
static void KeepWork(Repository &repository, const std::string &database, const std::string &branch, int64_t kept) {
	auto &metadata = *repository.metadata;
	for (auto &pending : metadata.remote.PendingExports(database, std::nullopt)) {
		if (pending.branch_name == branch && pending.snapshot_id != kept) {
			metadata.shared.RecordConflict(database, branch, pending.snapshot_id);
		}
	}
	metadata.shared.RecordConflict(database, branch, kept);
}

[[noreturn]] static void RaiseBranchConflict(Repository &repository, const std::string &store_url,
                                             const std::string &database, const std::string &branch,
                                             const std::optional<StoreHead> &now, int64_t kept) {
	auto seen = repository.metadata->remote.Head(store_url, database, branch);
	if (SeenByUs(repository, store_url, database, branch, now)) {
		// The head did not move: this branch was built on work kept after an earlier conflict.
		Fail(ErrorCode::BRANCH_CONFLICT,
		     "Branch " + branch + " of database " + database +
		         " holds work kept after an earlier branch_conflict, which is never published on " + branch +
		         ". This repository's work is kept as local snapshot " + std::to_string(kept) +
		         " (not published). DETACH " + database + " and ATTACH it again: " + branch +
		         " then starts from the head in S3 (after SELECT kept_branch FROM differential_resolve_conflict('" +
		         database + "', keep => 'branch') when the conflict is not resolved yet).");
	}
	auto moved = now ? "moved in S3 to snapshot " + std::to_string(now->head.snapshot_id) : std::string("moved in S3");
	auto since =
	    seen ? "snapshot " + std::to_string(repository.metadata->shared.StoreSnapshotId(database, seen->snapshot_id))
	         : std::string("no published snapshot");
	Fail(ErrorCode::BRANCH_CONFLICT,
	     "Branch " + branch + " of database " + database + " " + moved +
	         ", published by another writer, since this repository last saw it at " + since +
	         ". Nothing there was overwritten, and this repository's work is kept as local snapshot " +
	         std::to_string(kept) + " (not published). DETACH " + database +
	         ", then SELECT kept_branch FROM differential_resolve_conflict('" + database +
	         "', keep => 'branch') keeps it on a branch and lets " + branch +
	         " follow S3; ATTACH with ON_CONFLICT 'branch' does that by itself.");
}

//! The conflict's outcome: with ON_CONFLICT 'branch' the kept snapshot goes to a new branch (the branch
//! itself follows the store from its next ATTACH); otherwise branch_conflict.
static SnapshotRecord KeepConflict(Repository &repository, const std::string &store_url, const std::string &database,
                                   const std::string &branch, SnapshotRecord snapshot,
                                   const std::optional<StoreHead> &now) {
	auto &metadata = *repository.metadata;
	KeepWork(repository, database, branch, snapshot.snapshot_id);
	if (now) {
		metadata.shared.ReserveSnapshotIdsAbove(database, now->head.snapshot_id);
	}
	if (!metadata.shared.Settings(database).conflict_to_branch) {
		RaiseBranchConflict(repository, store_url, database, branch, now, snapshot.snapshot_id);
	}
	auto name = ConflictBranchName(branch, snapshot.snapshot_id);
	metadata.history.CreateBranch(database, name, snapshot.snapshot_id);
	metadata.shared.SettleConflict(database, branch, snapshot.snapshot_id);
	LogEvent("branch_conflict", -1,
	         database + "/" + branch + ": snapshot " + std::to_string(snapshot.snapshot_id) + " kept on " + name);
	snapshot.branch_name = name;
	return snapshot;
}

SnapshotRecord TakeSharedSnapshot(duckdb::ClientContext &context, Repository &repository, const std::string &database,
                                  const std::string &branch, const SnapshotRequest &request) {
	auto &metadata = *repository.metadata;
	auto data_path = metadata.remote.DataPath(database);
	if (!data_path) {
		return metadata.history.CreateSnapshot(database, branch, request);
	}
	auto store_url = data_path->store_url;
	std::optional<StoreHead> before;
	{
		DuckDBLogScope log(context);
		auto store = OpenObjectStore(context, store_url);
		before = ReadStoreHead(*store, store_url, database, branch);
	}
	// Kept work must not reach the head through a later snapshot built on it: that is a conflict too.
	auto record = metadata.history.FindBranch(database, branch);
	bool on_kept = record && record->head_snapshot_id && metadata.shared.IsKept(database, *record->head_snapshot_id);
	bool moved = on_kept || !SeenByUs(repository, store_url, database, branch, before);
	if (moved && before) {
		// The work can no longer publish; its snapshot takes an id the store's branch has not used.
		metadata.shared.ReserveSnapshotIdsAbove(database, before->head.snapshot_id);
	}
	auto snapshot = metadata.history.CreateSnapshot(database, branch, request);
	if (moved) {
		return KeepConflict(repository, store_url, database, branch, snapshot, before);
	}
	try {
		ExportDatabase(context, repository, database);
	} catch (DifferentialError &e) {
		if (e.code != ErrorCode::HEAD_CONFLICT) {
			throw;
		}
		// Lost the race: another writer's commit record or head move landed first. Read where it is now.
		DuckDBLogScope log(context);
		auto store = OpenObjectStore(context, store_url);
		return KeepConflict(repository, store_url, database, branch, snapshot,
		                    ReadStoreHead(*store, store_url, database, branch));
	}
	return snapshot;
}

} // namespace differential
