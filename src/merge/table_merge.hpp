// The three-way merge of one table, as SQL over three read-only snapshot attachments: rows are
// matched by primary key, and every cell is decided on its own with IS DISTINCT FROM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace differential {

//! A table as the merge sees it: its columns in order, with their types, and its primary key.
struct TableShape {
	std::string name;
	std::vector<std::string> columns;
	std::vector<std::string> types;
	std::vector<std::string> key;
};

struct TableMergeCounts {
	int64_t ours_inserts = 0;
	int64_t ours_updates = 0;
	int64_t ours_deletes = 0;
	int64_t theirs_inserts = 0;
	int64_t theirs_updates = 0;
	int64_t theirs_deletes = 0;
	int64_t conflicts = 0;
};

//! One row per key that is absent somewhere or changed on a side (unchanged rows are left out): k_i (key), presence
//! flags in_b/in_o/in_t, base, ours and theirs values b_i/o_i/t_i of the other columns, the merged values m_i, and
//! `action`: keep, insert, update, delete, or conflict:<cell | insert_insert | delete_update>.
std::string DecisionQuery(const TableShape &table, const std::string &base, const std::string &ours,
                          const std::string &theirs);
//! Counts over a materialized decision table, in the column order of TableMergeCounts.
std::string CountQuery(const TableShape &table, const std::string &decisions);
//! Statements applying the decisions to `target` (a writable copy of ours): deletes, updates, inserts.
std::vector<std::string> ApplyStatements(const TableShape &table, const std::string &decisions,
                                         const std::string &target);

} // namespace differential
