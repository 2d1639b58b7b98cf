// differential_merge_branch_preview(database, target, source, validate =>): the comparison of a
// branch merge, one row per table, writing nothing that anyone can see.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/merge_branch.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	auto target = StringArgument(input, 1, "target branch");
	auto source = StringArgument(input, 2, "source branch");
	ValidateName("database", database);
	ValidateName("branch", target);
	ValidateName("branch", source);
	bool validate = false;
	for (auto &entry : input.named_parameters) {
		if (StringUtil::Lower(entry.first.GetIdentifierName()) == "validate" && !entry.second.IsNull()) {
			validate = entry.second.GetValue<bool>();
		}
	}
	return BindRows(
	    {{"table_name", LogicalType::VARCHAR},
	     {"base_snapshot_id", LogicalType::BIGINT},
	     {"ours_snapshot_id", LogicalType::BIGINT},
	     {"theirs_snapshot_id", LogicalType::BIGINT},
	     {"ours_inserts", LogicalType::BIGINT},
	     {"ours_updates", LogicalType::BIGINT},
	     {"ours_deletes", LogicalType::BIGINT},
	     {"theirs_inserts", LogicalType::BIGINT},
	     {"theirs_updates", LogicalType::BIGINT},
	     {"theirs_deletes", LogicalType::BIGINT},
	     {"conflicts", LogicalType::BIGINT},
	     {"validation_state", LogicalType::VARCHAR},
	     {"validation_error", LogicalType::VARCHAR}},
	    [=](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    auto preview = PreviewMergeBranch(*context.db, *repository->metadata, repository->root, database, target,
		                                      source, validate);
		    auto &in = preview.inputs;
		    Rows rows;
		    for (auto &t : in.tables) {
			    auto &c = t.counts;
			    rows.push_back(
			        {Value(t.table), Value::BIGINT(in.base), Value::BIGINT(in.ours), Value::BIGINT(in.theirs),
			         Value::BIGINT(c.ours_inserts), Value::BIGINT(c.ours_updates), Value::BIGINT(c.ours_deletes),
			         Value::BIGINT(c.theirs_inserts), Value::BIGINT(c.theirs_updates), Value::BIGINT(c.theirs_deletes),
			         Value::BIGINT(c.conflicts), Value(preview.validation_state),
			         preview.validation_error.empty() ? Value(LogicalType::VARCHAR) : Value(preview.validation_error)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction MergeBranchPreviewFunction() {
	auto function =
	    MakeRowsFunction("differential_merge_branch_preview",
	                     {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("validate", LogicalType::BOOLEAN, Value(LogicalType::BOOLEAN));
	return function;
}

} // namespace differential
