// Exports of S3 databases from SQL, a merge's publication among them: opens the DATA_PATH's object store with the
// session's credentials and runs the export layer, with its events in duckdb_logs.
#pragma once

#include "duckdb/main/client_context.hpp"
#include "export/export_pending.hpp"
#include "merge/merge_publisher.hpp"
#include "repository/repository.hpp"

#include <atomic>
#include <memory>
#include <optional>
#include <string>

namespace differential {

//! Exports the database's unexported snapshots (up to `up_to`) to its DATA_PATH and moves its heads;
//! nothing (nullopt) for a database without a DATA_PATH. Called after every operation that records
//! snapshots, once they are durable locally; its refusals say that the snapshots stay local. `progress`, when
//! given, follows the run in percent (the calling table function's progress bar).
std::optional<ExportRun> ExportDatabase(duckdb::ClientContext &context, Repository &repository,
                                        const std::string &database, std::optional<int64_t> up_to = std::nullopt,
                                        const std::shared_ptr<std::atomic<double>> &progress = nullptr);

//! The publisher for a merge into `database`: none for a local database or a shared-writer one (whose
//! heads move by their own protocol). Exports what is still pending first, so the heads the merge
//! starts from are those of its inputs; a failure there changes nothing the merge would.
std::shared_ptr<MergePublisher> OpenMergePublisher(duckdb::ClientContext &context,
                                                   const std::shared_ptr<Repository> &repository,
                                                   const std::string &database);

} // namespace differential
