// Folding a closed branch's WAL into its database file before its state is replaced; the closed-
// branch checks themselves are storage facts (storage/branch_lock.hpp).
#pragma once

#include "duckdb/main/client_context.hpp"
#include "repository/repository.hpp"
#include "storage/branch_lock.hpp"

#include <memory>

namespace differential {

//! Attaches a closed branch privately, checkpoints it (folding its WAL into the database file) and detaches.
void CheckpointClosedBranch(duckdb::ClientContext &context, const Repository &repository, const std::string &database,
                            const std::string &branch);

} // namespace differential
