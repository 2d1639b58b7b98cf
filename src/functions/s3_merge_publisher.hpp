// The S3 side of merges into single-writer S3 databases: a MergePublisher over the export layer, with
// the session's credentials (docs/DURABILITY.md §13.9).
#pragma once

#include "duckdb/main/client_context.hpp"
#include "merge/merge_publisher.hpp"
#include "repository/repository.hpp"

#include <memory>
#include <string>

namespace differential {

//! The publisher for a merge into `database`: none for a local database or a shared-writer one (whose
//! heads move by their own protocol). Exports what is still pending first, so the heads the merge
//! starts from are those of its inputs; a failure there changes nothing the merge would.
std::shared_ptr<MergePublisher> S3MergePublisher(duckdb::ClientContext &context,
                                                 const std::shared_ptr<Repository> &repository,
                                                 const std::string &database);

} // namespace differential
