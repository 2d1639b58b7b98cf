// differential_merge_branch_preflight(database, target, source, destination, merge options): everything
// the merge would check, now, as one row; nothing is written and nothing is reserved.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/merge_options.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/merge_branch.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &context, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto request = ReadMergeBranchRequest(input);
	auto options = ReadMergeOptions(context, input);
	return BindRows(
	    {{"ready", LogicalType::BOOLEAN},
	     {"merge_action", LogicalType::VARCHAR},
	     {"target_state", LogicalType::VARCHAR},
	     {"validation_state", LogicalType::VARCHAR},
	     {"base_snapshot_id", LogicalType::BIGINT},
	     {"ours_snapshot_id", LogicalType::BIGINT},
	     {"theirs_snapshot_id", LogicalType::BIGINT},
	     {"issues", LogicalType::VARCHAR}},
	    [request, options](ClientContext &context) mutable {
		    MergeLogScope log(context);
		    ReadSessionSettings(context, options);
		    auto repository = CurrentRepository(context);
		    auto p = PreflightMergeBranch(*context.db, *repository->metadata, repository->root, request, options);
		    std::string issues;
		    for (auto &issue : p.issues) {
			    issues += (issues.empty() ? "" : "\n") + issue;
		    }
		    return Rows {{Value::BOOLEAN(p.ready), Value(ToString(p.merge_action)), Value(ToString(p.target_state)),
		                  Value(ToString(p.validation_state)), OptionalId(p.inputs.base), Value::BIGINT(p.inputs.ours),
		                  Value::BIGINT(p.inputs.theirs),
		                  issues.empty() ? Value(LogicalType::VARCHAR) : Value(issues)}};
	    },
	    types, names, options.progress);
}

TableFunction MergeBranchPreflightFunction() {
	auto function = MakeRowsFunction(
	    "differential_merge_branch_preflight",
	    {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR}, TranslatedBind<Bind>);
	AddExpectedSnapshotGuards(function);
	AddMergeOptions(function, MergeOptionSet::PREFLIGHT);
	return function;
}

} // namespace differential
