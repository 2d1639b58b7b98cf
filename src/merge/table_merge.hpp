// The three-way merge of one table, as SQL over three read-only snapshot attachments: rows are
// matched by primary key, and every cell is decided on its own with IS DISTINCT FROM.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "merge/struct_fields.hpp"

namespace differential {

//! Which of the result's columns an input has; an input without the table contributes no rows, one
//! without a column contributes a typed NULL for it (additive schema mode).
struct SideColumns {
	bool table_present = true;
	//! Lowercase: DuckDB column names are case-insensitive.
	std::set<std::string> columns;
};

//! A table as the merge sees it: the result's columns in order, with their types, its primary key,
//! and what each input has of it.
struct TableShape {
	std::string name;
	std::vector<std::string> columns;
	std::vector<std::string> types;
	std::vector<std::string> key;
	//! Per column, its STRUCT fields (a leaf for any other type): with NestedMode::FIELDS a STRUCT cell is
	//! decided field by field.
	std::vector<FieldTree> fields;
	NestedMode nested_mode = NestedMode::WHOLE;
	SideColumns base, ours, theirs;
	//! The non-key columns, in order: value column i of the decision table is values[i].
	std::vector<std::string> ValueColumns() const;
	std::string TypeOf(const std::string &column) const;
	//! The STRUCT fields `column` is decided by: a leaf (no fields) when it is decided as a whole value.
	const FieldTree &FieldsOf(const std::string &column) const;
	//! How the cell of `column` is decided from its base, ours and theirs expressions.
	CellDecision DecideCell(const std::string &column, const std::string &b, const std::string &o,
	                        const std::string &t) const;
};

struct TableMergeCounts {
	int64_t ours_inserts = 0;
	int64_t ours_updates = 0;
	int64_t ours_deletes = 0;
	int64_t theirs_inserts = 0;
	int64_t theirs_updates = 0;
	int64_t theirs_deletes = 0;
	int64_t conflicts = 0;
	int64_t resolved_conflicts = 0;
};

//! Rows first..last of a table, by rowid (inclusive): one row group, or consecutive ones.
struct RowidRange {
	int64_t first;
	int64_t last;
};

//! A predicate on rowid selecting `ranges` (ascending), adjacent ones as one; "false" when there are none.
std::string RowidPredicate(const std::vector<RowidRange> &ranges);

//! What a decision query reads of each input; the storage shortcut narrows it (empty: all rows).
struct InputReads {
	//! The side's table equals the base's: it is not read, the base's rows stand in for it.
	bool ours_as_base = false;
	bool theirs_as_base = false;
	//! Rowid predicates selecting the row groups to read of each input's table.
	std::string base_rows;
	std::string ours_rows;
	std::string theirs_rows;
	//! Base rows standing in for a side where that side's row groups equal the base's but are needed
	//! because the other side changed them.
	std::string ours_from_base;
	std::string theirs_from_base;
	//! Position matching (positional_match.hpp): a rowid predicate selecting the row groups whose rows
	//! match by position (the same rowids on all three inputs; the predicates above leave them out),
	//! the value columns each side can have changed there, and, once materialized, the table of the
	//! positions where they differ. positional_groups holds the same rows one row group per range, so
	//! that the comparison can be cut into parts at row group boundaries.
	std::string positional_rows;
	std::vector<RowidRange> positional_groups;
	std::vector<std::string> ours_positional_columns;
	std::vector<std::string> theirs_positional_columns;
	std::string positions;
	//! Keep the rows no side changed too (the foreign key check decides chosen rows, changed or not).
	bool unchanged_rows = false;
	//! The marks table of an input that is a virtual base (marked_cells.hpp); empty for a snapshot.
	std::string base_marks;
	std::string ours_marks;
	std::string theirs_marks;
};

//! One row per key that is absent somewhere or changed on a side (unchanged rows are left out): k_i (key), presence
//! flags in_b/in_o/in_t, base, ours and theirs values b_i/o_i/t_i of the value columns, the merged values m_i, the
//! cell-conflict flags c_i, `conflict_columns` (the columns, or STRUCT field paths, a conflict involves), `resolved`
//! (false), and `action`: keep, insert, update, delete, or conflict:<cell | insert_insert | delete_update>.
std::string DecisionQuery(const TableShape &table, const std::string &base, const std::string &ours,
                          const std::string &theirs, const InputReads &reads = InputReads());
//! Counts over a materialized decision table, in the column order of TableMergeCounts.
std::string CountQuery(const std::string &decisions);
//! The remaining conflicts, ordered by key: k_i, in_b, in_o, in_t, kind, conflict_columns, then b_i, o_i, t_i per
//! value column.
std::string ConflictQuery(const TableShape &table, const std::string &decisions, int64_t limit, int64_t offset);
//! One row: per value column, whether any update decision changes ours' value there (m_i differs from o_i,
//! compared as values and as text so that -0.0 against 0.0 counts).
std::string UpdatedColumnsQuery(const TableShape &table, const std::string &decisions);
//! Statements applying the decisions to `target` (a writable copy of ours): deletes, updates of the value
//! columns marked in `updated` (UpdatedColumnsQuery), inserts.
std::vector<std::string> ApplyStatements(const TableShape &table, const std::string &decisions,
                                         const std::string &target, const std::vector<bool> &updated);
//! How many rows of `side`'s copy of the table differ from the base's (a removal on the other side
//! needs none); with `column`, only differences in that column of rows the side has.
//! A predicate on the table's key columns: the key is one of the rows of `keys`, whose columns are
//! named `__differential_k<i>` in the key's order.
std::string KeyInRelation(const TableShape &table, const std::string &keys);
std::string ChangedRowsQuery(const TableShape &table, const std::string &base, const std::string &side,
                             const std::string &column);

std::string JoinSql(const std::vector<std::string> &parts, const std::string &separator, const std::string &empty);
//! A numbered column of the merge's own SQL: `prefix` and `i` (k_0, m_3, __differential_k1, ...).
std::string Numbered(const char *prefix, size_t i);

} // namespace differential
