// The S3 side of merges into single-writer S3 databases: a MergePublisher over the export layer, on a store the
// caller opened with the session's credentials (docs/DURABILITY.md §13.9).
#pragma once

#include "merge/merge_publisher.hpp"
#include "repository/repository.hpp"
#include "storage/object_store.hpp"

#include <memory>
#include <string>

namespace differential {

//! The publisher for a merge into `database`, whose DATA_PATH is `url`, opened as `store`.
std::shared_ptr<MergePublisher> MakeS3MergePublisher(std::shared_ptr<Repository> repository, std::string database,
                                                     std::string url, std::shared_ptr<ObjectStore> store);

} // namespace differential
