// differential_merge_ancestry(database, ours, theirs [, page_size =>, before_snapshot_id =>]): the snapshot graph
// behind a merge's base selection, one row per snapshot reachable from either side; a page, newest first. And
// differential_merge_virtual_base(database, ours, theirs): the makeup of the virtual base base => 'virtual' builds.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "merge/ancestry.hpp"
#include "merge/merge_states.hpp"
#include "merge/virtual_base.hpp"

namespace differential {

using namespace duckdb;

static void RequireSnapshots(const std::string &database, const std::map<int64_t, std::vector<int64_t>> &graph,
                             std::initializer_list<int64_t> ids) {
	for (auto id : ids) {
		if (!graph.count(id)) {
			Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
			     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(id) +
			         ". List its snapshots with differential_snapshots('" + database + "').");
		}
	}
}

static Rows AncestryRows(MetadataStore &metadata, const std::string &database, const std::vector<AncestryNode> &nodes,
                         const Ancestry &selection) {
	auto base = selection.base ? Value::BIGINT(*selection.base) : Value(LogicalType::BIGINT);
	// One read for all nodes: a lookup (and statement) per node was most of the time on long histories.
	std::vector<int64_t> ids;
	for (auto &node : nodes) {
		ids.push_back(node.snapshot_id);
	}
	auto kept = metadata.history.KeptAmong(database, ids);
	Rows rows;
	for (auto &node : nodes) {
		vector<Value> parents;
		for (auto parent : node.parents) {
			parents.push_back(Value::BIGINT(parent));
		}
		auto side = node.from_ours && node.from_theirs ? MergeSide::BOTH
		            : node.from_ours                   ? MergeSide::OURS
		                                               : MergeSide::THEIRS;
		rows.push_back({Value::BIGINT(node.snapshot_id), Value(ToString(node.kind)),
		                Value::LIST(LogicalType::BIGINT, parents), Value(ToString(side)),
		                Value::BOOLEAN(node.candidate), base, Value(ToString(selection.selection)),
		                Value::BOOLEAN(!kept.count(node.snapshot_id))});
	}
	return rows;
}

//! The whole graph, ordered by id: its time follows the reachable history.
static Rows AllRows(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs) {
	auto graph = metadata.history.ReachableParents(database, {ours, theirs});
	RequireSnapshots(database, graph, {ours, theirs});
	auto ancestry = ComputeAncestry(graph, ours, theirs);
	return AncestryRows(metadata, database, ancestry.nodes, ancestry);
}

//! One page, newest first: the walk reads the edges above the page's lowest row, and the base selection what
//! lies above the base, so a page near the heads costs the same whatever history lies below it.
static Rows PageRows(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs,
                     const AncestryPageBounds &page) {
	int64_t floor = 0;
	auto graph = metadata.history.ReachableParentsPage(database, {ours, theirs}, page.before, page.limit, floor);
	if (!graph) { // a parent above its child: no order to walk in, so the page is cut from the whole answer
		auto whole = metadata.history.ReachableParents(database, {ours, theirs});
		RequireSnapshots(database, whole, {ours, theirs});
		auto ancestry = ComputeAncestry(whole, ours, theirs);
		std::vector<AncestryNode> nodes;
		for (auto it = ancestry.nodes.rbegin(); it != ancestry.nodes.rend(); ++it) {
			if ((!page.before || it->snapshot_id < *page.before) && int64_t(nodes.size()) < page.limit) {
				nodes.push_back(*it);
			}
		}
		return AncestryRows(metadata, database, nodes, ancestry);
	}
	RequireSnapshots(database, *graph, {ours, theirs});
	auto selection = SelectBaseByWalk(metadata.history.ParentReader(database), ours, theirs);
	if (!selection) {
		selection = ComputeAncestry(metadata.history.ReachableParents(database, {ours, theirs}), ours, theirs);
	}
	auto nodes = AncestryPage(*graph, floor, ours, theirs, page, selection->candidates);
	return AncestryRows(metadata, database, nodes, *selection);
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto ours = SnapshotArgument(input, 1, "first");
	auto theirs = SnapshotArgument(input, 2, "second");
	auto page_size = NamedInteger(input, "page_size");
	auto before = NamedInteger(input, "before_snapshot_id");
	if ((page_size && *page_size < 1) || (before && !page_size)) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "differential_merge_ancestry pages with page_size => n (n >= 1), and "
		     "before_snapshot_id => id to start below id; call it without both for every row.");
	}
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
		    if (page_size) {
			    return PageRows(metadata, database, ours, theirs, AncestryPageBounds {before, *page_size});
		    }
		    return AllRows(metadata, database, ours, theirs);
	    },
	    types, names);
}

//! Three rows per step, in the order the steps run: its base, ours and theirs, each a snapshot or an earlier step.
static Rows VirtualBaseRows(MetadataStore &metadata, const std::string &database, int64_t ours, int64_t theirs) {
	RequireSnapshots(database, metadata.history.ReachableParents(database, {ours, theirs}), {ours, theirs});
	auto plan = VirtualBaseOf(metadata, database, ours, theirs);
	Rows rows;
	for (size_t i = 0; i < plan.steps.size(); i++) {
		auto &step = plan.steps[i];
		for (auto input : {std::make_pair("base", &step.base), std::make_pair("ours", &step.ours),
		                   std::make_pair("theirs", &step.theirs)}) {
			auto &in = *input.second;
			rows.push_back({Value::BIGINT(int64_t(i) + 1), Value(input.first),
			                in.IsStep() ? Value(LogicalType::BIGINT) : Value::BIGINT(in.snapshot),
			                in.IsStep() ? Value::BIGINT(in.step + 1) : Value(LogicalType::BIGINT),
			                Value::BOOLEAN(i + 1 == plan.steps.size())});
		}
	}
	return rows;
}

static unique_ptr<FunctionData> BindVirtualBase(ClientContext &, TableFunctionBindInput &input,
                                                vector<LogicalType> &types, vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto ours = SnapshotArgument(input, 1, "ours");
	auto theirs = SnapshotArgument(input, 2, "theirs");
	return BindRows(
	    {{"step", LogicalType::BIGINT},
	     {"role", LogicalType::VARCHAR},
	     {"snapshot_id", LogicalType::BIGINT},
	     {"from_step", LogicalType::BIGINT},
	     {"final", LogicalType::BOOLEAN}},
	    [=](ClientContext &context) {
		    return VirtualBaseRows(*CurrentRepository(context)->metadata, database, ours, theirs);
	    },
	    types, names);
}

TableFunction MergeVirtualBaseFunction() {
	return MakeRowsFunction("differential_merge_virtual_base",
	                        {LogicalType::VARCHAR, LogicalType::BIGINT, LogicalType::BIGINT},
	                        TranslatedBind<BindVirtualBase>);
}

TableFunction MergeAncestryFunction() {
	auto function =
	    MakeRowsFunction("differential_merge_ancestry",
	                     {LogicalType::VARCHAR, LogicalType::BIGINT, LogicalType::BIGINT}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("page_size", LogicalType::BIGINT, Value(LogicalType::BIGINT));
	function.GetSignature().AddKeywordOnly("before_snapshot_id", LogicalType::BIGINT, Value(LogicalType::BIGINT));
	return function;
}

} // namespace differential
