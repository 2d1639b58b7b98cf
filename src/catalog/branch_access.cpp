// Closed-branch checks and the private checkpoint used before a branch's state is replaced.
#include "catalog/branch_access.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/main/connection.hpp"
#include "storage/diff_file_system.hpp"

namespace differential {

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
