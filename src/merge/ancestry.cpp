// Reachability by walking parent edges; best common ancestors by removing every common ancestor
// that is a proper ancestor of another one.
#include "merge/ancestry.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace differential {

namespace {

//! The graph's snapshots (keys and parents) by dense index in id order, so that a walk marks a vector
//! instead of growing a set: the sets' allocations were most of an ancestry's time on long histories.
struct IndexedGraph {
	explicit IndexedGraph(const SnapshotGraph &graph) {
		for (auto &entry : graph) {
			ids.push_back(entry.first);
			ids.insert(ids.end(), entry.second.begin(), entry.second.end());
		}
		std::sort(ids.begin(), ids.end());
		ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
		parents.resize(ids.size());
		for (auto &entry : graph) {
			auto &out = parents[IndexOf(entry.first)];
			for (auto parent : entry.second) {
				out.push_back(IndexOf(parent));
			}
		}
	}
	size_t IndexOf(int64_t id) const {
		return static_cast<size_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
	}
	//! Marks every snapshot reachable from any of `from` (which are included) by parent edges.
	std::vector<bool> Reachable(const std::vector<size_t> &from) const {
		std::vector<bool> seen(ids.size(), false);
		std::vector<size_t> todo;
		for (auto index : from) {
			if (!seen[index]) {
				seen[index] = true;
				todo.push_back(index);
			}
		}
		while (!todo.empty()) {
			auto index = todo.back();
			todo.pop_back();
			for (auto parent : parents[index]) {
				if (!seen[parent]) {
					seen[parent] = true;
					todo.push_back(parent);
				}
			}
		}
		return seen;
	}

	std::vector<int64_t> ids;
	std::vector<std::vector<size_t>> parents;
};

} // namespace

static SnapshotKind KindByParents(const std::vector<int64_t> &parents) {
	return parents.empty() ? SnapshotKind::ROOT : parents.size() == 1 ? SnapshotKind::LINEAR : SnapshotKind::MERGE;
}

Ancestry ComputeAncestry(const SnapshotGraph &graph, int64_t ours, int64_t theirs) {
	IndexedGraph indexed(graph);
	auto from_ours = indexed.Reachable({indexed.IndexOf(ours)});
	auto from_theirs = indexed.Reachable({indexed.IndexOf(theirs)});
	// A common ancestor is dominated when it is a proper ancestor of another common one: reachable from
	// the parents of some common ancestor. Every ancestor of a common ancestor is common, so one walk
	// from all their parents finds them all (a walk per common ancestor grew with the square of history).
	std::vector<size_t> parents_of_common;
	for (size_t i = 0; i < indexed.ids.size(); i++) {
		if (from_ours[i] && from_theirs[i]) {
			parents_of_common.insert(parents_of_common.end(), indexed.parents[i].begin(), indexed.parents[i].end());
		}
	}
	auto dominated = indexed.Reachable(parents_of_common);
	Ancestry result;
	for (size_t i = 0; i < indexed.ids.size(); i++) {
		if (!from_ours[i] && !from_theirs[i]) {
			continue;
		}
		AncestryNode node;
		node.snapshot_id = indexed.ids[i];
		auto it = graph.find(node.snapshot_id);
		if (it != graph.end()) {
			node.parents = it->second;
		}
		node.kind = KindByParents(node.parents);
		node.from_ours = from_ours[i];
		node.from_theirs = from_theirs[i];
		node.candidate = node.from_ours && node.from_theirs && !dominated[i];
		if (node.candidate) {
			result.candidates.push_back(node.snapshot_id);
		}
		result.nodes.push_back(std::move(node));
	}
	if (result.candidates.size() == 1) {
		result.selection = BaseSelection::SELECTED;
		result.base = result.candidates[0];
	} else if (result.candidates.size() > 1) {
		result.selection = BaseSelection::AMBIGUOUS;
	}
	return result;
}

std::vector<AncestryNode> AncestryPage(const SnapshotGraph &graph, int64_t floor, int64_t ours, int64_t theirs,
                                       const AncestryPageBounds &page, const std::vector<int64_t> &candidates) {
	// Descending ids: a snapshot's children (larger ids) all come before it, so its flags are final when reached.
	std::map<int64_t, std::pair<bool, bool>> reached {{ours, {true, false}}};
	reached[theirs].second = true;
	std::vector<AncestryNode> nodes;
	for (auto it = graph.rbegin(); it != graph.rend() && it->first >= floor; ++it) {
		auto flags = reached[it->first];
		for (auto parent : it->second) {
			auto &to = reached[parent];
			to.first |= flags.first;
			to.second |= flags.second;
		}
		if ((page.before && it->first >= *page.before) || int64_t(nodes.size()) >= page.limit) {
			continue;
		}
		AncestryNode node;
		node.snapshot_id = it->first;
		node.parents = it->second;
		node.kind = KindByParents(node.parents);
		node.from_ours = flags.first;
		node.from_theirs = flags.second;
		node.candidate = std::find(candidates.begin(), candidates.end(), node.snapshot_id) != candidates.end();
		nodes.push_back(std::move(node));
	}
	return nodes;
}

namespace {

//! The walk's frontier: snapshots still to read, largest id first, with what reaches each.
class Frontier {
public:
	static constexpr uint8_t OURS = 1, THEIRS = 2, STALE = 4;

	void Add(int64_t id, uint8_t reached_by) {
		auto &flags = reached[id];
		if (pending.count(id) && !(flags & STALE)) {
			live--;
		}
		flags |= reached_by;
		pending.insert(id);
		if (!(flags & STALE)) {
			live++;
		}
	}
	//! True while a snapshot to read does not descend from a common ancestor already found.
	bool HasLive() const {
		return live > 0;
	}
	//! The largest pending id and what reaches it; final, since every child (a larger id) was read before.
	std::pair<int64_t, uint8_t> Take() {
		auto id = *pending.rbegin();
		pending.erase(id);
		auto flags = reached[id];
		if (!(flags & STALE)) {
			live--;
		}
		return {id, flags};
	}

private:
	std::map<int64_t, uint8_t> reached;
	std::set<int64_t> pending;
	size_t live = 0;
};

} // namespace

std::optional<Ancestry> SelectBaseByWalk(const ParentsOf &parents_of, int64_t ours, int64_t theirs) {
	Frontier frontier;
	frontier.Add(ours, Frontier::OURS);
	frontier.Add(theirs, Frontier::THEIRS);
	Ancestry result;
	while (frontier.HasLive()) {
		auto next = frontier.Take();
		auto flags = next.second;
		bool common = (flags & Frontier::OURS) && (flags & Frontier::THEIRS);
		if (common && !(flags & Frontier::STALE)) {
			// Read in descending order, so no common ancestor found later can be its descendant: a best one.
			result.candidates.push_back(next.first);
			flags |= Frontier::STALE;
		}
		for (auto parent : parents_of(next.first)) {
			if (parent >= next.first) {
				return std::nullopt;
			}
			frontier.Add(parent, flags);
		}
	}
	std::sort(result.candidates.begin(), result.candidates.end());
	if (result.candidates.size() == 1) {
		result.selection = BaseSelection::SELECTED;
		result.base = result.candidates[0];
	} else if (result.candidates.size() > 1) {
		result.selection = BaseSelection::AMBIGUOUS;
	}
	return result;
}

} // namespace differential
