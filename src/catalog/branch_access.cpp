// Closed-branch checks and the private checkpoint used before a branch's state is replaced.
#include "catalog/branch_access.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/main/connection.hpp"
#include "storage/diff_file_system.hpp"

namespace differential {

static FileAddress BranchAddress(const Repository &repository, const std::string &database, const std::string &branch) {
	FileAddress address;
	address.repository = repository.root;
	address.database = database;
	address.branch = branch;
	return address;
}

void RequireBranchClosed(const Repository &repository, const std::string &database, const std::string &branch) {
	if (DiffFileSystem::OpenHandleCount(BranchAddress(repository, database, branch).OwnerKey()) > 0) {
		Fail(ErrorKind::CONFLICT, "active_attachment_or_transaction",
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " is still open in this process: attached, or held by a transaction after DETACH. DETACH it, "
		         "let open transactions finish, then retry.");
	}
}

std::unique_ptr<BranchLock> LockClosedBranch(const Repository &repository, const std::string &database,
                                             const std::string &branch) {
	RequireBranchClosed(repository, database, branch);
	auto lock = std::make_unique<BranchLock>(BranchAddress(repository, database, branch));
	// Checked again under the lock: an attachment in this process may have raced the first check.
	RequireBranchClosed(repository, database, branch);
	return lock;
}

void CheckpointClosedBranch(duckdb::ClientContext &context, const Repository &repository, const std::string &database,
                            const std::string &branch) {
	duckdb::Connection connection(*context.db);
	auto alias = SqlIdentifier("__differential_checkpoint@" + database + "@" + branch);
	for (auto &sql : {"ATTACH " + SqlLiteral("differential:" + database) + " AS " + alias + " (BRANCH " +
	                      SqlLiteral(branch) + ", REPOSITORY " + SqlLiteral(repository.root) + ")",
	                  "CHECKPOINT " + alias, "DETACH " + alias}) {
		auto result = connection.Query(sql);
		if (result->HasError()) {
			// Never leave the private attachment behind: it would keep the branch open for good.
			connection.Query("DETACH DATABASE IF EXISTS " + alias);
			result->ThrowError();
		}
	}
}

} // namespace differential
