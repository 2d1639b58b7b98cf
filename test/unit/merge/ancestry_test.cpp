// Base selection on the spec's histories: linear, fork, fast-forward graph, criss-cross, unrelated.
#include "merge/ancestry.hpp"

#include <gtest/gtest.h>

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

} // namespace differential
