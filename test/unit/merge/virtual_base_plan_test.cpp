// The makeup of virtual bases: the fold over the best common ancestors in id order, and the recursion where a
// pair has several best common ancestors of its own.
#include "merge/virtual_base_plan.hpp"

#include "common/errors.hpp"

#include <gtest/gtest.h>

namespace differential {

static VirtualInput Snap(int64_t id) {
	return VirtualInput {id, -1};
}

static VirtualInput Step(int64_t step) {
	return VirtualInput {-1, step};
}

static void ExpectStep(const VirtualBaseStep &step, VirtualInput base, VirtualInput ours, VirtualInput theirs) {
	EXPECT_EQ(step.base, base);
	EXPECT_EQ(step.ours, ours);
	EXPECT_EQ(step.theirs, theirs);
}

TEST(VirtualBasePlanTest, SpecCrissCrossMergesItsTwoBasesAgainstTheRoot) {
	// crisscross: 1 root; 2 and 3 from 1; 4 = merge(2, 3); 5 = merge(3, 2); 6 on 4; 7 on 5.
	SnapshotGraph g {{1, {}}, {2, {1}}, {3, {1}}, {4, {2, 3}}, {5, {3, 2}}, {6, {4}}, {7, {5}}};
	auto ancestry = ComputeAncestry(g, 6, 7);
	ASSERT_EQ(ancestry.selection, BaseSelection::AMBIGUOUS);
	auto plan = PlanVirtualBase(g, ancestry.candidates);
	ASSERT_EQ(plan.steps.size(), 1u);
	ExpectStep(plan.steps[0], Snap(1), Snap(2), Snap(3));
	EXPECT_EQ(plan.Snapshots(), (std::vector<int64_t> {1, 2, 3}));
}

TEST(VirtualBasePlanTest, ThreeBasesFoldInIdOrderWhateverOrderTheyCome) {
	SnapshotGraph g {{1, {}}, {2, {1}}, {3, {1}}, {4, {1}}};
	for (auto bases : {std::vector<int64_t> {4, 2, 3}, std::vector<int64_t> {2, 3, 4}}) {
		auto plan = PlanVirtualBase(g, bases);
		ASSERT_EQ(plan.steps.size(), 2u);
		ExpectStep(plan.steps[0], Snap(1), Snap(2), Snap(3));
		ExpectStep(plan.steps[1], Snap(1), Step(0), Snap(4));
	}
}

TEST(VirtualBasePlanTest, APairWithSeveralBasesOfItsOwnGetsAVirtualBaseFirst) {
	// 2 and 3 from 1; 4 = merge(2, 3), 5 = merge(3, 2): the bases 4 and 5 have the bases 2 and 3.
	SnapshotGraph g {{1, {}}, {2, {1}}, {3, {1}}, {4, {2, 3}}, {5, {3, 2}}, {6, {4, 5}}, {7, {5, 4}}};
	auto ancestry = ComputeAncestry(g, 6, 7);
	ASSERT_EQ(ancestry.candidates, (std::vector<int64_t> {4, 5}));
	auto plan = PlanVirtualBase(g, ancestry.candidates);
	ASSERT_EQ(plan.steps.size(), 2u);
	ExpectStep(plan.steps[0], Snap(1), Snap(2), Snap(3));
	ExpectStep(plan.steps[1], Step(0), Snap(4), Snap(5));
}

TEST(VirtualBasePlanTest, TheFoldedSoFarAreOneSideOfTheNextPairsAncestry) {
	// 2 and 3 share 5's ancestor 4 only through 3: the bases of {2, 3} and 5 are 4's ancestors taken together.
	SnapshotGraph g {{1, {}}, {2, {1}}, {4, {1}}, {3, {4}}, {5, {4}}};
	EXPECT_EQ(BestCommonAncestors(g, {2, 3}, 5), (std::vector<int64_t> {4}));
	EXPECT_EQ(BestCommonAncestors(g, {2}, 5), (std::vector<int64_t> {1}));
	auto plan = PlanVirtualBase(g, {2, 3, 5});
	ASSERT_EQ(plan.steps.size(), 2u);
	EXPECT_EQ(plan.steps[1].base, Snap(4));
}

TEST(VirtualBasePlanTest, UnrelatedBasesAreRefused) {
	SnapshotGraph g {{1, {}}, {2, {}}};
	try {
		PlanVirtualBase(g, {1, 2});
		FAIL() << "unrelated bases were planned";
	} catch (DifferentialError &error) {
		EXPECT_EQ(error.code, ErrorCode::MERGE_BASE_MISSING);
	}
}

TEST(VirtualBasePlanTest, BaseModeWords) {
	EXPECT_EQ(ParseBaseMode(std::nullopt), BaseMode::SELECTED);
	EXPECT_EQ(ParseBaseMode(std::string("Virtual")), BaseMode::VIRTUAL);
	EXPECT_EQ(ParseBaseMode(std::string("selected")), BaseMode::SELECTED);
	EXPECT_THROW(ParseBaseMode(std::string("recursive")), DifferentialError);
}

} // namespace differential
