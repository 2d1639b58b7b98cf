// Planning a virtual base: the fold over the best common ancestors and the recursion into their own.
#include "merge/virtual_base_plan.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace differential {

BaseMode ParseBaseMode(const std::optional<std::string> &mode) {
	if (!mode) {
		return BaseMode::SELECTED;
	}
	std::string lower;
	for (char c : *mode) {
		lower += char(std::tolower(static_cast<unsigned char>(c)));
	}
	for (auto &entry : BASE_MODES) {
		if (lower == entry.text) {
			return entry.value;
		}
	}
	Fail(ErrorCode::INVALID_ARGUMENT, "base " + QuoteName(*mode) + " is not one of 'selected' or 'virtual'.");
}

std::vector<int64_t> VirtualBasePlan::Snapshots() const {
	std::set<int64_t> out;
	for (auto &step : steps) {
		for (auto *input : {&step.base, &step.ours, &step.theirs}) {
			if (!input->IsStep()) {
				out.insert(input->snapshot);
			}
		}
	}
	return std::vector<int64_t>(out.begin(), out.end());
}

std::vector<int64_t> BestCommonAncestors(const SnapshotGraph &graph, const std::vector<int64_t> &left, int64_t right) {
	if (left.size() == 1) {
		auto ancestry = ComputeAncestry(graph, left[0], right);
		return ancestry.candidates;
	}
	// A snapshot that does not exist, whose parents are `left`: its ancestors are theirs taken together.
	auto joined = graph;
	auto id = graph.empty() ? 0 : graph.rbegin()->first + 1;
	joined[id] = left;
	return ComputeAncestry(joined, id, right).candidates;
}

//! Appends the steps folding `bases` and returns the input holding their merge.
static VirtualInput Fold(const SnapshotGraph &graph, std::vector<int64_t> bases, VirtualBasePlan &plan) {
	std::sort(bases.begin(), bases.end());
	VirtualInput folded {bases[0], -1};
	std::vector<int64_t> so_far {bases[0]};
	for (size_t i = 1; i < bases.size(); i++) {
		auto common = BestCommonAncestors(graph, so_far, bases[i]);
		if (common.empty()) {
			Fail(ErrorCode::MERGE_BASE_MISSING, "Snapshot " + std::to_string(bases[i]) +
			                                        " shares no recorded ancestor with the other best common "
			                                        "ancestors, so a virtual base has no base to merge them from.");
		}
		VirtualInput base = common.size() == 1 ? VirtualInput {common[0], -1} : Fold(graph, common, plan);
		plan.steps.push_back({base, folded, VirtualInput {bases[i], -1}});
		folded = VirtualInput {-1, int64_t(plan.steps.size() - 1)};
		so_far.push_back(bases[i]);
	}
	return folded;
}

VirtualBasePlan PlanVirtualBase(const SnapshotGraph &graph, std::vector<int64_t> bases) {
	VirtualBasePlan plan;
	Fold(graph, std::move(bases), plan);
	return plan;
}

} // namespace differential
