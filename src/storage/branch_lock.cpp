// Branch lock files; flock (not fcntl) so that two opens in one process also exclude each other.
#include "storage/branch_lock.hpp"

#include "common/errors.hpp"
#include "common/logging.hpp"
#include "common/names.hpp"
#include "storage/diff_file_system.hpp"
#include "storage/system_calls.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace differential {

//! The holder's name as it wrote it into the lock file, for the refusal message.
static std::string HolderOf(int fd) {
	char holder[64] = {};
	auto n = pread(fd, holder, sizeof(holder) - 1, 0);
	std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : std::string("another process");
	while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) {
		who.pop_back();
	}
	return who.empty() ? "another process" : who;
}

BranchLock::BranchLock(const FileAddress &address, bool announce) {
	auto dir = address.repository + "/locks";
	if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
		Fail(ErrorCode::IO_ERROR,
		     "Cannot create the lock directory " + dir + ": " + std::strerror(errno) + ". Check permissions.");
	}
	path = dir + "/" + address.database + "@" + address.branch + ".lock";
	fd = sys::Open("branch_lock.open", path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		Fail(ErrorCode::IO_ERROR,
		     "Cannot open the branch lock " + path + ": " + std::strerror(errno) + ". Check permissions, then retry.");
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		auto error = errno;
		auto who = error == EWOULDBLOCK ? HolderOf(fd) : std::string();
		close(fd);
		fd = -1;
		if (error != EWOULDBLOCK) {
			Fail(ErrorCode::IO_ERROR, "Cannot lock the branch lock " + path + ": " + std::strerror(error) +
			                              ". Retry; if it persists, check that the file system supports flock.");
		}
		Fail(ErrorCode::BRANCH_LOCKED,
		     "Branch " + QuoteName(address.branch) + " of database " + QuoteName(address.database) +
		         " is open for writing by " + who +
		         ". A branch has one writer at a time: detach it there, attach it here with (READ_ONLY), or "
		         "create a branch and write to that.");
	}
	if (announce) {
		Announce();
	}
}

void BranchLock::Announce() {
	// The holder's name only improves another process's refusal message; the flock is the lock.
	auto text = "process " + std::to_string(getpid()) + "\n";
	if (sys::FTruncate("branch_lock.write", fd, 0) != 0 ||
	    sys::PWriteAll("branch_lock.write", fd, text.data(), text.size(), 0) < 0) {
		LogWarning("branch_lock_holder_not_written", "Writing the holder into " + path +
		                                                 " failed: " + std::strerror(errno) +
		                                                 "; the lock is held, refusals elsewhere will not name "
		                                                 "this process.");
	}
}

BranchLock::~BranchLock() {
	// Closing releases the flock; nothing was written that a failed close could lose.
	if (fd >= 0) {
		close(fd);
	}
}

static FileAddress BranchAddress(const std::string &repository, const std::string &database,
                                 const std::string &branch) {
	FileAddress address;
	address.repository = repository;
	address.database = database;
	address.branch = branch;
	return address;
}

void RequireBranchClosed(const std::string &repository, const std::string &database, const std::string &branch) {
	if (DiffFileSystem::OpenHandleCount(BranchAddress(repository, database, branch).OwnerKey()) > 0) {
		Fail(ErrorCode::ACTIVE_ATTACHMENT_OR_TRANSACTION,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " is still open in this process: attached, or held by a transaction after DETACH. DETACH it, "
		         "let open transactions finish, then retry.");
	}
}

std::unique_ptr<BranchLock> LockClosedBranch(const std::string &repository, const std::string &database,
                                             const std::string &branch) {
	RequireBranchClosed(repository, database, branch);
	auto lock = std::make_unique<BranchLock>(BranchAddress(repository, database, branch));
	// Checked again under the lock: an attachment in this process may have raced the first check.
	RequireBranchClosed(repository, database, branch);
	return lock;
}

//! Reserved locks by owner key; weak, so a reservation never outlives the ATTACH that made it.
struct ReservedLocks {
	std::mutex lock;
	std::map<std::string, std::weak_ptr<BranchLock>> by_owner;
};

static ReservedLocks &Reserved() {
	static auto *reserved = new ReservedLocks();
	return *reserved;
}

void RequireNoWriterHere(const std::string &repository, const std::string &database, const std::string &branch) {
	if (DiffFileSystem::HasWriter(BranchPath(repository, database, branch))) {
		Fail(ErrorCode::BRANCH_IN_USE,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " is already attached for writing in this process. Use that attachment, or attach this one with "
		         "(READ_ONLY).");
	}
}

std::shared_ptr<BranchLock> ReserveBranchLock(const std::string &repository, const std::string &database,
                                              const std::string &branch) {
	auto address = BranchAddress(repository, database, branch);
	RequireNoWriterHere(repository, database, branch);
	auto &reserved = Reserved();
	std::lock_guard<std::mutex> guard(reserved.lock);
	auto &slot = reserved.by_owner[address.OwnerKey()];
	if (slot.lock()) {
		Fail(ErrorCode::BRANCH_IN_USE,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " is being attached for writing by another connection of this process. Use that attachment, or "
		         "attach this one with (READ_ONLY).");
	}
	auto lock = std::make_shared<BranchLock>(address, false);
	slot = lock;
	return lock;
}

std::shared_ptr<BranchLock> AdoptOrTakeBranchLock(const FileAddress &branch) {
	{
		auto &reserved = Reserved();
		std::lock_guard<std::mutex> guard(reserved.lock);
		auto it = reserved.by_owner.find(branch.OwnerKey());
		if (it != reserved.by_owner.end()) {
			auto lock = it->second.lock();
			reserved.by_owner.erase(it);
			if (lock) {
				lock->Announce();
				return lock;
			}
		}
	}
	return std::make_shared<BranchLock>(branch);
}

} // namespace differential
