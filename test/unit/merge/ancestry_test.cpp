// Base selection on the spec's histories: linear, fork, fast-forward graph, criss-cross, unrelated.
#include "merge/ancestry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

namespace differential {

static std::vector<int64_t> Ids(const Ancestry &a) {
	std::vector<int64_t> out;
	for (auto &n : a.nodes) {
		out.push_back(n.snapshot_id);
	}
	return out;
}

TEST(AncestryTest, SpecFastForwardGraph) {
	// retail: 1 root; 2 on cleanup from 1; 3 on main from 1; 4 = merge of 3 and 2.
	SnapshotGraph g {{1, {}}, {2, {1}}, {3, {1}}, {4, {3, 2}}};
	auto a = ComputeAncestry(g, 4, 2);
	EXPECT_EQ(a.selection, BaseSelection::SELECTED);
	ASSERT_TRUE(a.base.has_value());
	EXPECT_EQ(*a.base, 2);
	EXPECT_EQ(Ids(a), (std::vector<int64_t> {1, 2, 3, 4}));
	EXPECT_EQ(a.nodes[0].kind, SnapshotKind::ROOT);
	EXPECT_EQ(a.nodes[1].kind, SnapshotKind::LINEAR);
	EXPECT_EQ(a.nodes[3].kind, SnapshotKind::MERGE);
	EXPECT_EQ(a.nodes[3].parents, (std::vector<int64_t> {3, 2}));
	EXPECT_TRUE(a.nodes[0].from_ours && a.nodes[0].from_theirs);
	EXPECT_TRUE(a.nodes[2].from_ours && !a.nodes[2].from_theirs);
	EXPECT_FALSE(a.nodes[0].candidate);
	EXPECT_TRUE(a.nodes[1].candidate);
}

TEST(AncestryTest, ForkSelectsTheForkPoint) {
	SnapshotGraph g {{1, {}}, {2, {1}}, {3, {1}}, {4, {2}}};
	auto a = ComputeAncestry(g, 4, 3);
	EXPECT_EQ(a.selection, BaseSelection::SELECTED);
	EXPECT_EQ(*a.base, 1);
}

TEST(AncestryTest, SameSnapshotIsItsOwnBase) {
	SnapshotGraph g {{1, {}}, {2, {1}}};
	auto a = ComputeAncestry(g, 2, 2);
	EXPECT_EQ(*a.base, 2);
	EXPECT_EQ(*ComputeAncestry(g, 2, 1).base, 1);
	EXPECT_EQ(*ComputeAncestry(g, 1, 2).base, 1);
}

TEST(AncestryTest, CrissCrossIsAmbiguous) {
	// The spec's crisscross database: 4 and 5 both merge 2 and 3; 6 on 4, 7 on 5.
	SnapshotGraph g {{1, {}}, {2, {1}}, {3, {1}}, {4, {2, 3}}, {5, {3, 2}}, {6, {4}}, {7, {5}}};
	auto a = ComputeAncestry(g, 6, 7);
	EXPECT_EQ(a.selection, BaseSelection::AMBIGUOUS);
	EXPECT_FALSE(a.base.has_value());
	EXPECT_EQ(a.candidates, (std::vector<int64_t> {2, 3}));
	std::vector<bool> candidate;
	for (auto &n : a.nodes) {
		candidate.push_back(n.candidate);
	}
	EXPECT_EQ(candidate, (std::vector<bool> {false, true, true, false, false, false, false}));
	EXPECT_TRUE(a.nodes[3].from_ours && !a.nodes[3].from_theirs);
	EXPECT_TRUE(a.nodes[4].from_theirs && !a.nodes[4].from_ours);
	// 4 and 7 are as criss-crossed as 6 and 7; 6 against its own ancestor 4 is not.
	EXPECT_EQ(ComputeAncestry(g, 4, 7).selection, BaseSelection::AMBIGUOUS);
	EXPECT_EQ(*ComputeAncestry(g, 6, 4).base, 4);
}

TEST(AncestryTest, UnrelatedHistoriesHaveNoBase) {
	SnapshotGraph g {{1, {}}, {2, {}}, {3, {2}}};
	auto a = ComputeAncestry(g, 1, 3);
	EXPECT_EQ(a.selection, BaseSelection::UNRELATED);
	EXPECT_TRUE(a.candidates.empty());
	EXPECT_EQ(Ids(a), (std::vector<int64_t> {1, 2, 3}));
}

TEST(AncestryTest, NumbersNeverCountOnlyEdges) {
	// 5 is older by number than 9 but not its ancestor: only edges decide.
	SnapshotGraph g {{1, {}}, {5, {1}}, {9, {1}}};
	EXPECT_EQ(*ComputeAncestry(g, 5, 9).base, 1);
	EXPECT_EQ(*ComputeAncestry(g, 9, 5).base, 1);
}

static ParentsOf Reader(const SnapshotGraph &g, int *reads = nullptr) {
	return [&g, reads](int64_t id) {
		if (reads) {
			(*reads)++;
		}
		auto it = g.find(id);
		return it == g.end() ? std::vector<int64_t>() : it->second;
	};
}

//! The reference for the nodes: what a plain set-based walk reaches from `from`.
static std::set<int64_t> ReachableByWalk(const SnapshotGraph &g, int64_t from) {
	std::set<int64_t> seen {from};
	std::vector<int64_t> todo {from};
	while (!todo.empty()) {
		auto id = todo.back();
		todo.pop_back();
		for (auto parent : g.at(id)) {
			if (seen.insert(parent).second) {
				todo.push_back(parent);
			}
		}
	}
	return seen;
}

//! Every node is reachable from the side it says, lists its recorded parents, and the nodes are exactly
//! the snapshots reachable from either side, in id order.
static void ExpectNodesMatchWalks(const SnapshotGraph &g, int64_t ours, int64_t theirs, const Ancestry &a) {
	auto from_ours = ReachableByWalk(g, ours), from_theirs = ReachableByWalk(g, theirs);
	std::set<int64_t> either(from_ours);
	either.insert(from_theirs.begin(), from_theirs.end());
	EXPECT_EQ(Ids(a), std::vector<int64_t>(either.begin(), either.end()));
	for (auto &node : a.nodes) {
		EXPECT_EQ(node.from_ours, from_ours.count(node.snapshot_id) > 0) << node.snapshot_id;
		EXPECT_EQ(node.from_theirs, from_theirs.count(node.snapshot_id) > 0) << node.snapshot_id;
		EXPECT_EQ(node.parents, g.at(node.snapshot_id)) << node.snapshot_id;
		auto is_candidate = std::find(a.candidates.begin(), a.candidates.end(), node.snapshot_id) != a.candidates.end();
		EXPECT_EQ(node.candidate, is_candidate) << node.snapshot_id;
	}
}

TEST(AncestryTest, WalkSelectsWhatTheWholeGraphSelectsOnRandomHistories) {
	// Random histories in creation order (every parent older), with forks, merges, criss-crosses and
	// unrelated roots: the walk that stops at the base selects exactly what ComputeAncestry selects.
	std::mt19937_64 rng(13);
	int ambiguous = 0, selected = 0, unrelated = 0;
	for (int history = 0; history < 300; history++) {
		SnapshotGraph g;
		int64_t size = 2 + static_cast<int64_t>(rng() % 40);
		for (int64_t id = 1; id <= size; id++) {
			auto &parents = g[id];
			size_t count = id == 1 || rng() % 10 == 0 ? 0 : 1 + (rng() % 4 == 0 ? 1 : 0);
			for (size_t p = 0; p < count; p++) {
				parents.push_back(1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(id - 1)));
			}
		}
		for (int pair = 0; pair < 5; pair++) {
			auto ours = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(size));
			auto theirs = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(size));
			auto whole = ComputeAncestry(g, ours, theirs);
			ExpectNodesMatchWalks(g, ours, theirs, whole);
			auto walked = SelectBaseByWalk(Reader(g), ours, theirs);
			ASSERT_TRUE(walked.has_value());
			EXPECT_EQ(walked->selection, whole.selection) << history << " " << ours << " " << theirs;
			EXPECT_EQ(walked->base, whole.base) << history << " " << ours << " " << theirs;
			EXPECT_EQ(walked->candidates, whole.candidates) << history << " " << ours << " " << theirs;
			ambiguous += whole.selection == BaseSelection::AMBIGUOUS;
			selected += whole.selection == BaseSelection::SELECTED;
			unrelated += whole.selection == BaseSelection::UNRELATED;
		}
	}
	// Every kind of answer occurred, so the comparison covers each.
	EXPECT_GT(ambiguous, 0);
	EXPECT_GT(selected, 0);
	EXPECT_GT(unrelated, 0);
}

TEST(AncestryTest, WalkStopsAtTheBase) {
	// A long main line with a short branch near its top: the walk reads the branch, main above the fork and
	// the fork point, not the history below it.
	SnapshotGraph g {{1, {}}};
	for (int64_t id = 2; id <= 1000; id++) {
		g[id] = {id - 1};
	}
	g[1001] = {990};
	g[1002] = {1001};
	int reads = 0;
	auto walked = SelectBaseByWalk(Reader(g, &reads), 1000, 1002);
	ASSERT_TRUE(walked.has_value());
	EXPECT_EQ(*walked->base, 990);
	EXPECT_LE(reads, 20);
}

TEST(AncestryTest, WalkRefusesParentsOutOfCreationOrder) {
	SnapshotGraph g {{1, {}}, {2, {5}}, {5, {1}}};
	EXPECT_FALSE(SelectBaseByWalk(Reader(g), 2, 5).has_value());
}

} // namespace differential
