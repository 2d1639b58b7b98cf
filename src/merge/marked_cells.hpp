// Conflict marks of a virtual base: a cell the merged bases disagree on keeps a mark, the way Git keeps
// conflict markers in a virtual base's text. A marked cell equals nothing, not even itself, so a merge
// reading it counts it as changed by both sides unless ours and theirs agree.
#pragma once

#include "merge/struct_fields.hpp"
#include "merge/table_merge.hpp"

#include <string>
#include <vector>

namespace differential {

//! The mark column of value column `i` in a marked input's relation and in the decision table.
std::string MarkColumn(const char *side, size_t i);

//! The marks an input carries for one cell: the names of its mark columns, empty for an input without marks.
struct CellMarks {
	std::string b;
	std::string o;
	std::string t;
	bool Any() const {
		return !b.empty() || !o.empty() || !t.empty();
	}
};

//! The marks of value column `i` in a decision query over `reads`.
CellMarks Marks(const InputReads &reads, size_t i);

//! Whether two cells are the same value: both unmarked and not distinct.
std::string SameCell(const std::string &x, const std::string &x_mark, const std::string &y, const std::string &y_mark);
//! Its negation; without marks exactly `x IS DISTINCT FROM y`, so that merges without a virtual base run the very
//! SQL they ran before marks existed.
std::string OtherCell(const std::string &x, const std::string &x_mark, const std::string &y, const std::string &y_mark);

//! `plain`'s decision where no input's cell is marked; the whole-value rule over marked cells where one is
//! (a marked STRUCT is one unknown value: its fields cannot be told apart). `column` names the conflict's part.
CellDecision MarkedCell(const CellDecision &plain, const std::string &column, const std::string &b,
                        const std::string &o, const std::string &t, const CellMarks &marks);

//! A marked input's relation over `relation` (which selects the table's columns as __r): its rows with one
//! BOOLEAN mark column per value column, read from `marks` (key columns and __differential_marked, the
//! lowercase names of the marked columns).
std::string MarkedRelation(const TableShape &table, const std::string &select, const std::string &from,
                           const std::string &marks, const char *side);

//! For a virtual base's step, over its materialized decisions: whether the result's value column `i` is
//! marked. A conflict leaves a mark; a value taken from a marked cell keeps its mark; a row one side deleted
//! and the other changed is kept whole, every cell marked.
std::string ResultMark(const TableShape &table, size_t i, const CellMarks &marks);

//! The lowercase names of the marked value columns, from the per-column conditions: a VARCHAR[] expression.
std::string MarkedColumnsList(const TableShape &table, const std::vector<std::string> &conditions);

} // namespace differential
