// differential_merge_branch(database, target, source, destination, request_id =>,
// expected_*_snapshot_id =>, merge options) and differential_merge_snapshots(database, base, ours,
// theirs, destination, request_id =>, merge options).
#include "merge/merge_branch.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/transaction/transaction_context.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/merge_options.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/database_export.hpp"

namespace differential {

using namespace duckdb;

static const std::vector<ResultColumn> RESULT_COLUMNS = {
    {"branch_name", LogicalType::VARCHAR},      {"snapshot_id", LogicalType::BIGINT},
    {"merge_action", LogicalType::VARCHAR},     {"base_snapshot_id", LogicalType::BIGINT},
    {"ours_snapshot_id", LogicalType::BIGINT},  {"theirs_snapshot_id", LogicalType::BIGINT},
    {"request_id", LogicalType::VARCHAR},       {"operation_id", LogicalType::VARCHAR},
    {"selection_ms", LogicalType::BIGINT},      {"planning_ms", LogicalType::BIGINT},
    {"comparison_ms", LogicalType::BIGINT},     {"application_ms", LogicalType::BIGINT},
    {"publication_ms", LogicalType::BIGINT},    {"target_check_ms", LogicalType::BIGINT},
    {"materialization_ms", LogicalType::BIGINT}};

//! A merge publishes in the repository's own transaction, which a ROLLBACK of the caller's could not
//! undo: it runs only in autocommit mode.
static void RequireAutoCommit(ClientContext &context) {
	if (!context.transaction.IsAutoCommit()) {
		Fail(ErrorCode::AUTOCOMMIT_REQUIRED,
		     "Merges run in autocommit mode only: the published result could not be rolled back with your "
		     "transaction. COMMIT or ROLLBACK first, then run the merge on its own.");
	}
}

static Rows ResultRow(const MergeBranchResult &r, const std::optional<std::string> &request_id) {
	return Rows {{Value(r.branch_name), OptionalId(r.snapshot_id), Value(ToString(r.merge_action)), OptionalId(r.base),
	              OptionalId(r.ours), OptionalId(r.theirs),
	              request_id ? Value(*request_id) : Value(LogicalType::VARCHAR),
	              r.operation_id.empty() ? Value(LogicalType::VARCHAR) : Value(r.operation_id),
	              Value::BIGINT(r.timings.selection_ms), Value::BIGINT(r.timings.planning_ms),
	              Value::BIGINT(r.timings.comparison_ms), Value::BIGINT(r.timings.application_ms),
	              Value::BIGINT(r.timings.publication_ms), Value::BIGINT(r.timings.target_check_ms),
	              Value::BIGINT(r.timings.materialization_ms)}};
}

using MergeRunner =
    std::function<MergeBranchResult(ClientContext &context, const Repository &repository, MergeOptions &options)>;

//! Binds the shared merge options; the merge runs at execution, in autocommit mode only.
static unique_ptr<FunctionData> BindMerge(ClientContext &context, TableFunctionBindInput &input,
                                          vector<LogicalType> &types, vector<Identifier> &names,
                                          const std::string &database, const std::optional<std::string> &request_id,
                                          MergeRunner run) {
	auto options = ReadMergeOptions(context, input);
	return BindRows(
	    RESULT_COLUMNS,
	    [options, database, request_id, run](ClientContext &context) mutable {
		    RequireAutoCommit(context);
		    MergeLogScope log(context);
		    ReadSessionSettings(context, options);
		    auto repository = CurrentRepository(context);
		    // A single-writer S3 database publishes its merges in durable steps (docs/DURABILITY.md §13.9).
		    options.publisher = OpenMergePublisher(context, repository, database);
		    auto rows = ResultRow(run(context, *repository, options), request_id);
		    // The merge's snapshot is published; an S3 database exports it now.
		    ExportDatabase(context, *repository, database);
		    return rows;
	    },
	    types, names, options.progress);
}

static unique_ptr<FunctionData> BindSnapshots(ClientContext &context, TableFunctionBindInput &input,
                                              vector<LogicalType> &types, vector<Identifier> &names) {
	MergeSnapshotsRequest request;
	request.database = StringArgument(input, 0, "database name");
	ValidateName("database", request.database);
	request.base = BaseSnapshotArgument(input, 1);
	request.ours = SnapshotArgument(input, 2, "ours");
	request.theirs = SnapshotArgument(input, 3, "theirs");
	request.destination = StringArgument(input, 4, "destination branch");
	ValidateNewBranchName(request.destination);
	request.request_id = NamedString(input, "request_id");
	if (request.request_id) {
		ValidateName("request", *request.request_id);
	}
	return BindMerge(context, input, types, names, request.database, request.request_id,
	                 [request](ClientContext &context, const Repository &repository, MergeOptions &options) {
		                 return MergeSnapshots(*context.db, *repository.metadata, repository.root, request, options);
	                 });
}

static unique_ptr<FunctionData> Bind(ClientContext &context, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto request = ReadMergeBranchRequest(input);
	return BindMerge(context, input, types, names, request.database, request.request_id,
	                 [request](ClientContext &context, const Repository &repository, MergeOptions &options) {
		                 return MergeBranch(*context.db, *repository.metadata, repository.root, request, options);
	                 });
}

TableFunction MergeSnapshotsFunction() {
	auto function = MakeRowsFunction(
	    "differential_merge_snapshots",
	    {LogicalType::VARCHAR, LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::VARCHAR},
	    TranslatedBind<BindSnapshots>);
	function.GetSignature().AddKeywordOnly("request_id", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	AddMergeOptions(function, MergeOptionSet::MERGE);
	return function;
}

TableFunction MergeBranchFunction() {
	auto function = MakeRowsFunction(
	    "differential_merge_branch",
	    {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("request_id", LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	AddExpectedSnapshotGuards(function);
	AddMergeOptions(function, MergeOptionSet::MERGE);
	return function;
}

} // namespace differential
