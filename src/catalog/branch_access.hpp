// Preconditions of operations that replace or remove a branch's state: the branch must be closed
// here (no open file handle, which DETACH alone does not guarantee) and locked against others.
#pragma once

#include "catalog/repository_registry.hpp"
#include "duckdb/main/client_context.hpp"
#include "storage/branch_lock.hpp"

#include <memory>

namespace differential {

//! Refuses with active_attachment_or_transaction while this process has any file of the branch open.
void RequireBranchClosed(const Repository &repository, const std::string &database, const std::string &branch);
//! Checks the branch is closed, then takes its lock (refusing with branch_locked if another process writes it).
std::unique_ptr<BranchLock> LockClosedBranch(const Repository &repository, const std::string &database,
                                             const std::string &branch);
//! Attaches a closed branch privately, checkpoints it (folding its WAL into the database file) and detaches.
void CheckpointClosedBranch(duckdb::ClientContext &context, const Repository &repository, const std::string &database,
                            const std::string &branch);

} // namespace differential
