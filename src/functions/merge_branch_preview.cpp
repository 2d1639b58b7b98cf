// differential_merge_branch_preview(database, target, source, ...) and
// differential_merge_snapshots_preview(database, base, ours, theirs, ...): the comparison of a merge,
// one row per table (and per view whose definition differs), writing nothing anyone can see.
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/merge_options.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/merge_branch.hpp"

namespace differential {

using namespace duckdb;

static LogicalType SchemaChangeType() {
	child_list_t<LogicalType> fields;
	for (auto name : {"column_name", "source", "sql_type", "action"}) {
		fields.emplace_back(Identifier(name), LogicalType::VARCHAR);
	}
	return LogicalType::STRUCT(std::move(fields));
}

static LogicalType ViewChangeType() {
	child_list_t<LogicalType> fields;
	for (auto name : {"action", "source", "sql"}) {
		fields.emplace_back(Identifier(name), LogicalType::VARCHAR);
	}
	return LogicalType::STRUCT(std::move(fields));
}

static LogicalType SchemaConflictType() {
	child_list_t<LogicalType> fields;
	for (auto name : {"kind", "column_name", "message"}) {
		fields.emplace_back(Identifier(name), LogicalType::VARCHAR);
	}
	return LogicalType::STRUCT(std::move(fields));
}

static Value Text(const std::string &text) {
	return text.empty() ? Value(LogicalType::VARCHAR) : Value(text);
}

static std::vector<ResultColumn> PreviewColumns() {
	return {{"object_type", LogicalType::VARCHAR},
	        {"object_name", LogicalType::VARCHAR},
	        {"table_name", LogicalType::VARCHAR},
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
	        {"resolved_conflicts", LogicalType::BIGINT},
	        {"conflict_details", LogicalType::LIST(ConflictDetailType())},
	        {"schema_changes", LogicalType::LIST(SchemaChangeType())},
	        {"table_action", LogicalType::VARCHAR},
	        {"view_change", ViewChangeType()},
	        {"schema_conflicts", LogicalType::BIGINT},
	        {"schema_conflict_details", LogicalType::LIST(SchemaConflictType())},
	        {"validation_state", LogicalType::VARCHAR},
	        {"validation_error", LogicalType::VARCHAR},
	        {"unchanged_sides", LogicalType::LIST(LogicalType::VARCHAR)}};
}

static Value UnchangedSides(const std::vector<MergeSide> &sides) {
	vector<Value> out;
	for (auto side : sides) {
		out.push_back(Value(ToString(side)));
	}
	return Value::LIST(LogicalType::VARCHAR, out);
}

static Rows PreviewRows(const MergePreview &preview) {
	auto &in = preview.inputs;
	Rows rows;
	for (auto &object : in.objects) {
		auto &c = object.counts;
		bool is_table = object.object_type == ObjectType::TABLE;
		vector<Value> changes, conflicts;
		for (auto &change : object.schema_changes) {
			changes.push_back(
			    Value::STRUCT(SchemaChangeType(), {Value(change.column_name), Value(ToString(change.source)),
			                                       Value(change.sql_type), Value(ToString(change.action))}));
		}
		for (auto &conflict : object.schema_conflicts) {
			conflicts.push_back(
			    Value::STRUCT(SchemaConflictType(),
			                  {Value(ToString(conflict.kind)), Text(conflict.column_name), Value(conflict.message)}));
		}
		auto view_change =
		    is_table || object.view_action == ViewAction::NONE
		        ? Value(ViewChangeType())
		        : Value::STRUCT(ViewChangeType(), {Value(ToString(object.view_action)),
		                                           Text(ToString(object.view_source)), Text(object.view_sql)});
		auto count = [&](int64_t v) {
			return is_table ? Value::BIGINT(v) : Value(LogicalType::BIGINT);
		};
		rows.push_back({Value(ToString(object.object_type)),
		                Value(object.name),
		                is_table ? Value(object.name) : Text(""),
		                OptionalId(in.base),
		                Value::BIGINT(in.ours),
		                Value::BIGINT(in.theirs),
		                count(c.ours_inserts),
		                count(c.ours_updates),
		                count(c.ours_deletes),
		                count(c.theirs_inserts),
		                count(c.theirs_updates),
		                count(c.theirs_deletes),
		                Value::BIGINT(c.conflicts),
		                Value::BIGINT(c.resolved_conflicts),
		                Value::LIST(ConflictDetailType(),
		                            vector<Value>(object.conflict_details.begin(), object.conflict_details.end())),
		                Value::LIST(SchemaChangeType(), changes),
		                Text(ToString(object.table_action)),
		                view_change,
		                Value::BIGINT(int64_t(object.schema_conflicts.size())),
		                Value::LIST(SchemaConflictType(), conflicts),
		                Value(ToString(preview.validation_state)),
		                Text(preview.validation_error),
		                UnchangedSides(object.unchanged_sides)});
	}
	return rows;
}

using PreviewRunner = std::function<MergePreview(ClientContext &context, const MergeOptions &options)>;

//! Binds the shared preview options; the comparison itself runs at execution.
static unique_ptr<FunctionData> BindPreview(ClientContext &context, TableFunctionBindInput &input,
                                            vector<LogicalType> &types, vector<Identifier> &names, PreviewRunner run) {
	auto options = ReadMergeOptions(context, input);
	return BindRows(
	    PreviewColumns(),
	    [options, run](ClientContext &context) mutable {
		    MergeLogScope log(context);
		    ReadSessionSettings(context, options);
		    return PreviewRows(run(context, options));
	    },
	    types, names, options.progress);
}

static unique_ptr<FunctionData> BindBranch(ClientContext &context, TableFunctionBindInput &input,
                                           vector<LogicalType> &types, vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	auto target = StringArgument(input, 1, "target branch");
	auto source = StringArgument(input, 2, "source branch");
	ValidateName("database", database);
	ValidateName("branch", target);
	ValidateName("branch", source);
	return BindPreview(context, input, types, names, [=](ClientContext &context, const MergeOptions &options) {
		auto repository = CurrentRepository(context);
		return PreviewMergeBranch(*context.db, *repository->metadata, repository->root, database, target, source,
		                          options);
	});
}

static unique_ptr<FunctionData> BindSnapshots(ClientContext &context, TableFunctionBindInput &input,
                                              vector<LogicalType> &types, vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto base = BaseSnapshotArgument(input, 1);
	auto ours = SnapshotArgument(input, 2, "ours");
	auto theirs = SnapshotArgument(input, 3, "theirs");
	return BindPreview(context, input, types, names, [=](ClientContext &context, const MergeOptions &options) {
		auto repository = CurrentRepository(context);
		return PreviewMergeSnapshots(*context.db, *repository->metadata, repository->root, database, base, ours, theirs,
		                             options);
	});
}

TableFunction MergeBranchPreviewFunction() {
	auto function = MakeRowsFunction("differential_merge_branch_preview",
	                                 {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::VARCHAR},
	                                 TranslatedBind<BindBranch>);
	AddMergeOptions(function, MergeOptionSet::PREVIEW);
	return function;
}

TableFunction MergeSnapshotsPreviewFunction() {
	auto function =
	    MakeRowsFunction("differential_merge_snapshots_preview",
	                     {LogicalType::VARCHAR, LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::BIGINT},
	                     TranslatedBind<BindSnapshots>);
	AddMergeOptions(function, MergeOptionSet::PREVIEW);
	return function;
}

} // namespace differential
