// The one-writer-per-branch lock: an flock on <repository>/locks/<database>@<branch>.lock, held by
// a writable attachment, or briefly by an operation that replaces a closed branch's state.
#pragma once

#include "storage/diff_path.hpp"

#include <memory>
#include <string>

namespace differential {

class BranchLock {
public:
	//! Takes the lock or throws branch_locked naming the holder; `announce` writes this process into the
	//! lock file as the holder (a lock reserved ahead of an open announces when the open adopts it, so a
	//! refused ATTACH never rewrites the file).
	explicit BranchLock(const FileAddress &branch, bool announce = true);
	//! Writes this process into the lock file as the holder, for other processes' refusal messages.
	void Announce();
	~BranchLock();
	BranchLock(const BranchLock &) = delete;
	BranchLock &operator=(const BranchLock &) = delete;

private:
	int fd = -1;
	std::string path;
};

//! Refuses with branch_in_use when this process already writes the branch. ReserveBranchLock checks it again (with
//! the reservation, atomically); this is for a caller that wants the cheap refusal before slower checks.
void RequireNoWriterHere(const std::string &repository, const std::string &database, const std::string &branch);

//! Refuses with active_attachment_or_transaction while this process has any file of the branch
//! open: attached, or held by a transaction after DETACH (DETACH alone does not close files).
void RequireBranchClosed(const std::string &repository, const std::string &database, const std::string &branch);
//! Checks the branch is closed, then takes its lock (branch_locked if another process writes it).
std::unique_ptr<BranchLock> LockClosedBranch(const std::string &repository, const std::string &database,
                                             const std::string &branch);
//! Takes the lock of a branch about to be opened for writing, so that ATTACH refuses (branch_in_use in this
//! process, branch_locked in another) before it writes anything. The first writable open of the branch's
//! database file adopts it; dropping the result before that releases it.
std::shared_ptr<BranchLock> ReserveBranchLock(const std::string &repository, const std::string &database,
                                              const std::string &branch);
//! The lock a writable open of `branch`'s database file holds: the one reserved for it, or a new one.
std::shared_ptr<BranchLock> AdoptOrTakeBranchLock(const FileAddress &branch);

} // namespace differential
