// Local payload eviction for S3 databases: chunks their DATA_PATH holds are dropped locally (their rows
// say "evicted"), cleanup reclaims the segment space, and reads fetch them back verified; or all come back.
#pragma once

#include "repository/repository.hpp"

#include <atomic>
#include <string>

namespace differential {

//! Evicts the chunks the database's DATA_PATH holds that no database with another DATA_PATH (or none)
//! reaches. Throws no_data_path for a database without one. The segment space comes back at the next
//! differential_cleanup_old_files.
EvictionCounts EvictExported(Repository &repository, const std::string &database);

//! The reverse: fetches every evicted chunk the database reaches (branch files and kept snapshots) back from
//! its store, verified, into local segments, so reads and checkpoints no longer need the store. Durable in
//! batches: a batch's segment appends are synced before one metadata transaction records them.
//! With `stop`, it ends early once that is set, after recording what it fetched.
EvictionCounts FetchEvicted(Repository &repository, const std::string &database,
                            const std::atomic<bool> *stop = nullptr);

} // namespace differential
