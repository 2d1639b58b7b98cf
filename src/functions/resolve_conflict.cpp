// differential_resolve_conflict(database, keep => 'branch', branch => 'main'): settles a shared writer's
// branch_conflict: the kept snapshot goes to its own branch, and the branch follows the head in S3.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "replication/shared_writers.hpp"
#include "storage/branch_lock.hpp"

namespace differential {

using namespace duckdb;

static Rows Resolve(ClientContext &context, const std::string &database, const std::string &branch) {
	auto repository = CurrentRepository(context);
	auto &metadata = *repository->metadata;
	if (!metadata.history.FindBranch(database, branch)) {
		Fail(metadata.history.FindDatabase(database) ? ErrorCode::BRANCH_NOT_FOUND : ErrorCode::DATABASE_NOT_FOUND,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " does not exist. List branches with differential_branches('" + database + "').");
	}
	auto kept = metadata.shared.Conflict(database, branch);
	auto data_path = metadata.remote.DataPath(database);
	if (!kept || !data_path) {
		Fail(ErrorCode::NO_CONFLICT,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " has no unresolved branch_conflict, so there is nothing to resolve (nothing was changed). "
		         "Conflicts come from differential_create_snapshot on a database attached with WRITERS 'shared'.");
	}
	RequireBranchClosed(repository->root, database, branch);
	auto lock = LockClosedBranch(repository->root, database, branch);
	bool has_wal = false;
	if (metadata.history.HasUnsnapshottedChanges(database, branch, has_wal)) {
		Fail(ErrorCode::BRANCH_CHANGED,
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " has changes made after its kept snapshot " + std::to_string(*kept) +
		         " that are in no snapshot (nothing was changed). Attach it, take a snapshot (it is kept as well), "
		         "DETACH, and resolve again.");
	}
	auto name = ConflictBranchName(branch, *kept);
	if (!metadata.history.FindBranch(database, name)) {
		metadata.history.CreateBranch(database, name, *kept);
	}
	metadata.shared.SettleConflict(database, branch, *kept);
	FollowStoreHead(context, *repository, database, branch, data_path->store_url);
	auto now = metadata.history.FindBranch(database, branch);
	return Rows {{Value(name), Value::BIGINT(*kept), Value(branch),
	              now && now->head_snapshot_id ? Value::BIGINT(*now->head_snapshot_id) : Value(LogicalType::BIGINT)}};
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto keep = NamedString(input, "keep");
	if (!keep || *keep != "branch") {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "differential_resolve_conflict needs keep => 'branch' (the kept snapshot goes to a branch of its own, "
		     "and the branch follows S3)" +
		         (keep ? ", got '" + *keep + "'." : std::string(".")));
	}
	auto branch = NamedString(input, "branch").value_or("main");
	ValidateName("branch", branch);
	return BindRows(
	    {{"kept_branch", LogicalType::VARCHAR},
	     {"kept_snapshot_id", LogicalType::BIGINT},
	     {"branch_name", LogicalType::VARCHAR},
	     {"snapshot_id", LogicalType::BIGINT}},
	    [database, branch](ClientContext &context) { return Resolve(context, database, branch); }, types, names);
}

TableFunction ResolveConflictFunction() {
	auto function = MakeRowsFunction("differential_resolve_conflict", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	for (auto name : {"keep", "branch"}) {
		function.GetSignature().AddKeywordOnly(name, LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	}
	return function;
}

} // namespace differential
