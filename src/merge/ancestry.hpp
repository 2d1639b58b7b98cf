// Ancestry of two snapshots from recorded parent edges only (never ids, times or contents), and
// the selection of a merge base: the unique best common ancestor, if there is one.
#pragma once

#include "common/enum_text.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace differential {

//! Parent edges of a database's snapshots: snapshot id -> its parents, in recorded order. Every
//! snapshot is a key, also those without parents.
using SnapshotGraph = std::map<int64_t, std::vector<int64_t>>;

enum class BaseSelection { SELECTED, AMBIGUOUS, UNRELATED };

inline constexpr EnumText<BaseSelection> BASE_SELECTIONS[] = {{BaseSelection::SELECTED, "selected"},
                                                              {BaseSelection::AMBIGUOUS, "ambiguous"},
                                                              {BaseSelection::UNRELATED, "unrelated"}};

inline const char *ToString(BaseSelection selection) {
	return TextOf(BASE_SELECTIONS, selection);
}

//! A snapshot by its parents: none (root), one (linear) or two or more (merge).
enum class SnapshotKind { ROOT, LINEAR, MERGE };

inline constexpr EnumText<SnapshotKind> SNAPSHOT_KINDS[] = {
    {SnapshotKind::ROOT, "root"}, {SnapshotKind::LINEAR, "linear"}, {SnapshotKind::MERGE, "merge"}};

inline const char *ToString(SnapshotKind kind) {
	return TextOf(SNAPSHOT_KINDS, kind);
}

struct AncestryNode {
	int64_t snapshot_id = 0;
	SnapshotKind kind = SnapshotKind::ROOT;
	std::vector<int64_t> parents;
	bool from_ours = false;
	bool from_theirs = false;
	//! A best common ancestor: common to both sides and not an ancestor of another common one.
	bool candidate = false;
};

struct Ancestry {
	//! Every snapshot reachable from either side, by id.
	std::vector<AncestryNode> nodes;
	BaseSelection selection = BaseSelection::UNRELATED;
	std::optional<int64_t> base;
	std::vector<int64_t> candidates;
};

//! Both snapshots must be keys of the graph.
Ancestry ComputeAncestry(const SnapshotGraph &graph, int64_t ours, int64_t theirs);

//! A page of the ancestry's rows: ids below `before` (all, when absent), the newest `limit` of them.
struct AncestryPageBounds {
	std::optional<int64_t> before;
	int64_t limit = 0;
};

//! The page's nodes, newest first, from a graph whose keys at or above `floor` have all their parents (the rest
//! were reached but not read): reachability flows down from the two heads, so it is exact for every complete key.
//! `candidates` are the best common ancestors, which a page alone cannot tell (SelectBaseByWalk finds them).
std::vector<AncestryNode> AncestryPage(const SnapshotGraph &graph, int64_t floor, int64_t ours, int64_t theirs,
                                       const AncestryPageBounds &page, const std::vector<int64_t> &candidates);

//! The parents of one snapshot in recorded order (none for a root).
using ParentsOf = std::function<std::vector<int64_t>(int64_t)>;

//! ComputeAncestry's base selection (selection, base, candidates; no nodes) by a walk from both snapshots
//! that reads parents in descending id order and stops as soon as everything left to read descends from a
//! common ancestor already found, so it reads what lies above the base, not the history below it. Relies on
//! every parent having a smaller id than its child (ids are handed out in creation order); returns nullopt,
//! for the caller to use ComputeAncestry, if a parent breaks that.
std::optional<Ancestry> SelectBaseByWalk(const ParentsOf &parents_of, int64_t ours, int64_t theirs);

} // namespace differential
