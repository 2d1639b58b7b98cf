// The makeup of a virtual base (base => 'virtual'): where a merge has several best common ancestors, they
// are merged pairwise, in snapshot id order, each pair against its own best common ancestors (recursively
// a virtual base too), as Git's recursive merge does. Planned from recorded parent edges only.
#pragma once

#include "common/enum_text.hpp"
#include "merge/ancestry.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace differential {

//! How a merge finds its base: the unique best common ancestor (the specification's rule, which refuses an
//! ambiguous history), or a virtual base built from all of them.
enum class BaseMode { SELECTED, VIRTUAL };

inline constexpr EnumText<BaseMode> BASE_MODES[] = {{BaseMode::SELECTED, "selected"}, {BaseMode::VIRTUAL, "virtual"}};

inline const char *ToString(BaseMode mode) {
	return TextOf(BASE_MODES, mode);
}

//! Parses the base argument (NULL means selected); refuses other words with invalid_argument.
BaseMode ParseBaseMode(const std::optional<std::string> &mode);

//! An input of one step: a kept snapshot, or the result of an earlier step.
struct VirtualInput {
	int64_t snapshot = -1;
	int64_t step = -1;
	bool IsStep() const {
		return step >= 0;
	}
	bool operator==(const VirtualInput &other) const {
		return snapshot == other.snapshot && step == other.step;
	}
};

//! One merge of the virtual base: `ours` and `theirs` merged against `base`.
struct VirtualBaseStep {
	VirtualInput base;
	VirtualInput ours;
	VirtualInput theirs;
};

//! The steps in the order they run; the last one's result is the virtual base.
struct VirtualBasePlan {
	std::vector<VirtualBaseStep> steps;
	//! Every snapshot the steps read, ascending: all must still be kept.
	std::vector<int64_t> Snapshots() const;
};

//! The best common ancestors of a set of snapshots taken together (what a virtual snapshot whose parents
//! are `left` would have) and of `right`; ascending. `graph` holds every snapshot reachable from both.
std::vector<int64_t> BestCommonAncestors(const SnapshotGraph &graph, const std::vector<int64_t> &left, int64_t right);

//! The steps merging `bases` (two or more best common ancestors): folded in ascending id order, each
//! pair against the best common ancestors of the bases folded so far and the next one. Refuses with
//! merge_base_missing where a pair shares no ancestor.
VirtualBasePlan PlanVirtualBase(const SnapshotGraph &graph, std::vector<int64_t> bases);

} // namespace differential
