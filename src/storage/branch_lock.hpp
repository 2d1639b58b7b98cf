// The one-writer-per-branch lock: an flock on <repository>/locks/<database>@<branch>.lock, held by
// a writable attachment, or briefly by an operation that replaces a closed branch's state.
#pragma once

#include "storage/diff_path.hpp"

#include <memory>

namespace differential {

class BranchLock {
public:
	//! Takes the lock or throws branch_locked naming the holder.
	explicit BranchLock(const FileAddress &branch);
	~BranchLock();
	BranchLock(const BranchLock &) = delete;
	BranchLock &operator=(const BranchLock &) = delete;

private:
	int fd = -1;
};

//! Refuses with active_attachment_or_transaction while this process has any file of the branch
//! open: attached, or held by a transaction after DETACH (DETACH alone does not close files).
void RequireBranchClosed(const std::string &repository, const std::string &database, const std::string &branch);
//! Checks the branch is closed, then takes its lock (branch_locked if another process writes it).
std::unique_ptr<BranchLock> LockClosedBranch(const std::string &repository, const std::string &database,
                                             const std::string &branch);

} // namespace differential
