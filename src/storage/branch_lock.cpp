// Branch lock files; flock (not fcntl) so that two opens in one process also exclude each other.
#include "storage/branch_lock.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "storage/diff_file_system.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace differential {

BranchLock::BranchLock(const FileAddress &address) {
	auto dir = address.repository + "/locks";
	mkdir(dir.c_str(), 0755);
	auto path = dir + "/" + address.database + "@" + address.branch + ".lock";
	fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		Fail(ErrorKind::IO, "io_error",
		     "Cannot open the branch lock " + path + ": " + std::strerror(errno) + ". Check permissions.");
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		char holder[64] = {};
		auto n = pread(fd, holder, sizeof(holder) - 1, 0);
		close(fd);
		fd = -1;
		std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : std::string("another process");
		while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) {
			who.pop_back();
		}
		Fail(ErrorKind::CONFLICT, "branch_locked",
		     "Branch " + QuoteName(address.branch) + " of database " + QuoteName(address.database) +
		         " is open for writing by " + who +
		         ". A branch has one writer at a time: detach it there, attach it here with (READ_ONLY), or "
		         "create a branch and write to that.");
	}
	auto text = "process " + std::to_string(getpid()) + "\n";
	if (ftruncate(fd, 0) == 0) {
		auto ignored = pwrite(fd, text.data(), text.size(), 0);
		(void)ignored;
	}
}

BranchLock::~BranchLock() {
	if (fd >= 0) {
		close(fd);
	}
}

int BranchLock::Release() {
	auto out = fd;
	fd = -1;
	return out;
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
		Fail(ErrorKind::CONFLICT, "active_attachment_or_transaction",
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

} // namespace differential
