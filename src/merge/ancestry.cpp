// Reachability by walking parent edges; best common ancestors by removing every common ancestor
// that is a proper ancestor of another one.
#include "merge/ancestry.hpp"

#include <algorithm>
#include <set>

namespace differential {

//! Every snapshot reachable from any of `from` (which are included) by parent edges.
static std::set<int64_t> Reachable(const SnapshotGraph &graph, const std::vector<int64_t> &from) {
	std::set<int64_t> seen(from.begin(), from.end());
	std::vector<int64_t> todo(seen.begin(), seen.end());
	while (!todo.empty()) {
		auto id = todo.back();
		todo.pop_back();
		auto it = graph.find(id);
		if (it == graph.end()) {
			continue;
		}
		for (auto parent : it->second) {
			if (seen.insert(parent).second) {
				todo.push_back(parent);
			}
		}
	}
	return seen;
}

Ancestry ComputeAncestry(const SnapshotGraph &graph, int64_t ours, int64_t theirs) {
	auto from_ours = Reachable(graph, {ours});
	auto from_theirs = Reachable(graph, {theirs});
	std::set<int64_t> common;
	for (auto id : from_ours) {
		if (from_theirs.count(id)) {
			common.insert(id);
		}
	}
	// A common ancestor is dominated when it is a proper ancestor of another common one: reachable from
	// the parents of some common ancestor. Every ancestor of a common ancestor is common, so one walk
	// from all their parents finds them all (a walk per common ancestor grew with the square of history).
	std::vector<int64_t> parents_of_common;
	for (auto id : common) {
		auto it = graph.find(id);
		if (it != graph.end()) {
			parents_of_common.insert(parents_of_common.end(), it->second.begin(), it->second.end());
		}
	}
	auto dominated = parents_of_common.empty() ? std::set<int64_t>() : Reachable(graph, parents_of_common);
	Ancestry result;
	for (auto id : common) {
		if (!dominated.count(id)) {
			result.candidates.push_back(id);
		}
	}
	if (result.candidates.size() == 1) {
		result.selection = BaseSelection::SELECTED;
		result.base = result.candidates[0];
	} else if (result.candidates.size() > 1) {
		result.selection = BaseSelection::AMBIGUOUS;
	}
	std::set<int64_t> all(from_ours);
	all.insert(from_theirs.begin(), from_theirs.end());
	for (auto id : all) {
		AncestryNode node;
		node.snapshot_id = id;
		auto it = graph.find(id);
		if (it != graph.end()) {
			node.parents = it->second;
		}
		node.kind = node.parents.empty()       ? SnapshotKind::ROOT
		            : node.parents.size() == 1 ? SnapshotKind::LINEAR
		                                       : SnapshotKind::MERGE;
		node.from_ours = from_ours.count(id) > 0;
		node.from_theirs = from_theirs.count(id) > 0;
		node.candidate = node.from_ours && node.from_theirs && !dominated.count(id);
		result.nodes.push_back(node);
	}
	return result;
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
