// Position matching: where both sides left a row group at the base's rowids with the base's key
// segments, a rowid names the same row on all three inputs, so rows pair without a key join.
#pragma once

#include "merge/table_merge.hpp"

#include <string>
#include <vector>

namespace differential {

struct TableLayout;

//! Which base row groups match by position: each side has the group at the same rowids with the
//! same live rows, and the key columns' segments are the base's (so every position holds the same
//! key on all three inputs). Groups both sides left as the base's are not listed (nothing changed).
std::vector<bool> PositionalGroups(const TableLayout &base, const TableLayout &ours, const TableLayout &theirs,
                                   const std::vector<std::string> &key);

//! The value columns (as named in `table`) whose segments differ from the base's on `side` in some
//! of `groups`: in those groups the side holds the base's values in every other column.
std::vector<std::string> ChangedColumns(const TableShape &table, const std::vector<bool> &groups,
                                        const TableLayout &base, const TableLayout &side);

//! `groups` (one range per row group) cut into at most `parts` runs of consecutive groups, as rowid predicates.
std::vector<std::string> PositionParts(const std::vector<RowidRange> &groups, size_t parts);

//! The positions (rowids) of `reads.positional_groups` where a column a side rewrote differs between
//! the base and that side: columns r (the rowid) and misaligned (the three scans disagree on the rowid,
//! which would mean deleted rows differ: the caller falls back to the key join then). A POSITIONAL JOIN
//! runs on one thread, so the groups are compared in `parts` parts, a UNION ALL DuckDB can run in
//! parallel when it need not keep the parts' order.
std::string PositionsQuery(const TableShape &table, const std::string &base, const std::string &ours,
                           const std::string &theirs, const InputReads &reads, size_t parts);

//! The rows at the materialized `reads.positions`, with the columns of the key join's output
//! (k_i, in_b, in_o, in_t, then b_i, o_i, t_i per value column), read whole from all three inputs.
std::string PositionalInputs(const TableShape &table, const std::string &base, const std::string &ours,
                             const std::string &theirs, const InputReads &reads);

} // namespace differential
