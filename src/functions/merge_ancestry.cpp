// differential_merge_ancestry(database, ours, theirs): the snapshot graph behind a merge's base
// selection, one row per snapshot reachable from either side.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/ancestry.hpp"
#include "merge/merge_states.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto ours = SnapshotArgument(input, 1, "first");
	auto theirs = SnapshotArgument(input, 2, "second");
	return BindRows(
	    {{"snapshot_id", LogicalType::BIGINT},
	     {"kind", LogicalType::VARCHAR},
	     {"parents", LogicalType::LIST(LogicalType::BIGINT)},
	     {"reachable_from", LogicalType::VARCHAR},
	     {"candidate", LogicalType::BOOLEAN},
	     {"selected_base", LogicalType::BIGINT},
	     {"selection_state", LogicalType::VARCHAR},
	     {"expired", LogicalType::BOOLEAN}},
	    [=](ClientContext &context) {
		    auto &metadata = *CurrentRepository(context)->metadata;
		    auto graph = metadata.history.ReachableParents(database, {ours, theirs});
		    for (auto id : {ours, theirs}) {
			    if (!graph.count(id)) {
				    Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
				         "Database " + QuoteName(database) + " has no snapshot " + std::to_string(id) +
				             ". List its snapshots with differential_snapshots('" + database + "').");
			    }
		    }
		    auto ancestry = ComputeAncestry(graph, ours, theirs);
		    auto base = ancestry.base ? Value::BIGINT(*ancestry.base) : Value(LogicalType::BIGINT);
		    // One read for all nodes: a lookup (and statement) per node was most of the time on long histories.
		    std::vector<int64_t> ids;
		    for (auto &node : ancestry.nodes) {
			    ids.push_back(node.snapshot_id);
		    }
		    auto kept = metadata.history.KeptAmong(database, ids);
		    Rows rows;
		    for (auto &node : ancestry.nodes) {
			    vector<Value> parents;
			    for (auto parent : node.parents) {
				    parents.push_back(Value::BIGINT(parent));
			    }
			    auto side = node.from_ours && node.from_theirs ? MergeSide::BOTH
			                : node.from_ours                   ? MergeSide::OURS
			                                                   : MergeSide::THEIRS;
			    bool expired = !kept.count(node.snapshot_id);
			    rows.push_back({Value::BIGINT(node.snapshot_id), Value(ToString(node.kind)),
			                    Value::LIST(LogicalType::BIGINT, parents), Value(ToString(side)),
			                    Value::BOOLEAN(node.candidate), base, Value(ToString(ancestry.selection)),
			                    Value::BOOLEAN(expired)});
		    }
		    return rows;
	    },
	    types, names);
}

TableFunction MergeAncestryFunction() {
	return MakeRowsFunction("differential_merge_ancestry",
	                        {LogicalType::VARCHAR, LogicalType::BIGINT, LogicalType::BIGINT}, TranslatedBind<Bind>);
}

} // namespace differential
