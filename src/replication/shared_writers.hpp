// Shared writers (ATTACH ... WRITERS 'shared'): several repositories publish one database through its branch
// heads in the store, each moving a head only from the version it started from (docs/REPLICATION.md §8).
#pragma once

#include "duckdb/main/client_context.hpp"
#include "metadata/records.hpp"
#include "metadata/remote_store.hpp"
#include "remote/export_format.hpp"
#include "repository/repository.hpp"
#include "storage/object_store.hpp"
#include "storage/remote_image.hpp"

#include <optional>
#include <string>

namespace differential {

//! WRITERS and ON_CONFLICT as one ATTACH gave them (unset: keep what the database has stored).
struct SharedWriterRequest {
	std::optional<bool> shared;             //! WRITERS 'shared' | 'single'
	std::optional<bool> conflict_to_branch; //! ON_CONFLICT 'branch' | 'fail'
};

//! Reads one of the two options into `request`; refuses other values with invalid_option.
void ReadSharedWriterOption(const std::string &key, const std::string &value, SharedWriterRequest &request);

//! Refusals before ATTACH changes anything: ON_CONFLICT without WRITERS 'shared', shared writing without a
//! DATA_PATH (given now or stored), or either option on a read-only ATTACH.
void CheckSharedWriterRequest(Repository &repository, const std::string &database, const SharedWriterRequest &request,
                              bool has_data_path, bool read_only);

//! What a writable ATTACH does about shared writing, decided before it writes anything.
struct SharedWriterPlan {
	//! The options to store once the attachment opened, when this ATTACH changes them.
	std::optional<SharedWriterSettings> settings;
	//! A writable attachment of a shared database: its branch starts from the store's newest head.
	bool active = false;
	std::optional<std::string> store_url;
};

//! Decides the plan and, for an active one, reads the branch's head in the store once, so an unreachable
//! store or a refused secret refuses the ATTACH (export_failed) before anything is written.
SharedWriterPlan PlanSharedWriters(duckdb::ClientContext &context, Repository &repository, const std::string &database,
                                   const std::string &branch, const SharedWriterRequest &request,
                                   const std::optional<std::string> &store_url, bool read_only);

//! Imports the newest head of the branch from the database's DATA_PATH when it moved since this repository
//! saw it. Returns the local snapshot id the branch now starts from, or nothing when nothing was imported.
std::optional<int64_t> FollowStoreHead(duckdb::ClientContext &context, Repository &repository,
                                       const std::string &database, const std::string &branch,
                                       const std::string &store_url);

//! differential_create_snapshot for a shared database: takes the snapshot and publishes it. When another
//! writer moved the head, the work is kept as a local snapshot and either raises branch_conflict or, with
//! ON_CONFLICT 'branch', goes to the branch `<branch>-conflict-<id>` (returned in branch_name).
SnapshotRecord TakeSharedSnapshot(duckdb::ClientContext &context, Repository &repository, const std::string &database,
                                  const std::string &branch, const SnapshotRequest &request);

//! The branch's head in the store as it is now (one GET), with its ETag.
struct StoreHead {
	BranchHead head;
	std::string etag;
};
//! Nothing when the store has no head; refuses export_failed (unreadable) and corrupt_head.
std::optional<StoreHead> ReadStoreHead(ObjectStore &store, const std::string &store_url, const std::string &database,
                                       const std::string &branch);
//! Whether the store's head is the version this repository last saw (or both are absent).
bool SeenByUs(Repository &repository, const std::string &store_url, const std::string &database,
              const std::string &branch, const std::optional<StoreHead> &head);

//! The name of the branch a conflict's kept snapshot goes to.
std::string ConflictBranchName(const std::string &branch, int64_t kept);

} // namespace differential
