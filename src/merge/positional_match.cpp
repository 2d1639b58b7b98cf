// Why a rowid names the same row on all three inputs in a positional group: the key columns' segments
// are byte-identical to the base's (same blocks, same content hashes) at the same rowids, so every
// position holds the same key; and the same live count means the same deleted rows (a side's deleted
// set only grows from the base's, storage_identity.cpp), which PositionsQuery checks as it scans.
// A row live at one position on all three inputs has its key nowhere else (keys are unique), so the
// key join of the other rows pairs exactly what it would have paired had it seen every row.
#include "merge/positional_match.hpp"

#include "common/fault_points.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/string_util.hpp"
#include "merge/storage_identity.hpp"

#include <algorithm>
#include <utility>

namespace differential {

static const char *ROWID = "__differential_rowid";

//! One column's segments in row group `g` of a layout ("" when it has none).
static const std::string &ColumnSegments(const TableLayout &layout, size_t g, const std::string &column) {
	static const std::string none;
	auto found = layout.columns[g].find(duckdb::StringUtil::Lower(column));
	return found == layout.columns[g].end() ? none : found->second;
}

//! Whether `side` keeps base row group `g` at the base's rowids, live rows and keys.
static bool Aligned(const TableLayout &base, const TableLayout &side, size_t g, const std::vector<std::string> &key) {
	if (g + 1 >= side.starts.size() || side.starts[g] != base.starts[g] || side.starts[g + 1] != base.starts[g + 1] ||
	    side.live[g] != base.live[g]) {
		return false;
	}
	for (auto &column : key) {
		if (ColumnSegments(base, g, column) != ColumnSegments(side, g, column)) {
			return false;
		}
	}
	return true;
}

std::vector<bool> PositionalGroups(const TableLayout &base, const TableLayout &ours, const TableLayout &theirs,
                                   const std::vector<std::string> &key) {
	std::vector<bool> out(base.groups.size(), false);
	if (!base.known || !ours.known || !theirs.known || key.empty()) {
		return out;
	}
	for (size_t g = 0; g < out.size(); g++) {
		bool untouched = g < ours.groups.size() && g < theirs.groups.size() && ours.groups[g] == base.groups[g] &&
		                 theirs.groups[g] == base.groups[g];
		out[g] = !untouched && Aligned(base, ours, g, key) && Aligned(base, theirs, g, key);
	}
	return out;
}

std::vector<std::string> ChangedColumns(const TableShape &table, const std::vector<bool> &groups,
                                        const TableLayout &base, const TableLayout &side) {
	std::vector<std::string> out;
	for (auto &column : table.ValueColumns()) {
		bool changed = false;
		for (size_t g = 0; g < groups.size() && !changed; g++) {
			changed = groups[g] && ColumnSegments(side, g, column) != ColumnSegments(base, g, column);
		}
		if (changed) {
			out.push_back(column);
		}
	}
	return out;
}

static std::string Qualified(const std::string &catalog, const std::string &table) {
	return SqlIdentifier(catalog) + ".main." + SqlIdentifier(table);
}

//! One input's rows of the positional groups, in rowid order: the rowid and `columns`.
static std::string PositionalScan(const TableShape &table, const std::string &catalog,
                                  const std::vector<std::string> &columns, const std::string &rows) {
	std::string select = "rowid AS " + std::string(ROWID);
	for (auto &column : columns) {
		select += ", " + SqlIdentifier(column);
	}
	return "(SELECT " + select + " FROM " + Qualified(catalog, table.name) + " WHERE " + rows + ")";
}

//! The comparison of the rows `rows` selects (row groups that match by position): see PositionsQuery.
static std::string PartPositionsQuery(const TableShape &table, const std::string &base, const std::string &ours,
                                      const std::string &theirs, const InputReads &reads, const std::string &rows) {
	// The base is compared with each side in the columns that side rewrote: elsewhere they are equal.
	// A side that rewrote none left these groups as the base's (§10a) and is not scanned.
	std::vector<std::string> columns, differs, misaligned;
	std::string scans;
	for (auto side : {std::make_pair(&ours, &reads.ours_positional_columns),
	                  std::make_pair(&theirs, &reads.theirs_positional_columns)}) {
		if (side.second->empty()) {
			continue;
		}
		auto alias = "__" + std::to_string(misaligned.size());
		// Each scan yields the groups' live rows in rowid order; POSITIONAL JOIN pairs them by that
		// order, and unequal rowids on a pair mean the deleted rows differ after all.
		misaligned.push_back("__b." + std::string(ROWID) + " IS DISTINCT FROM " + alias + "." + ROWID);
		for (auto &column : *side.second) {
			differs.push_back("__b." + SqlIdentifier(column) + " IS DISTINCT FROM " + alias + "." +
			                  SqlIdentifier(column));
			if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
				columns.push_back(column);
			}
		}
		scans += " POSITIONAL JOIN " + PositionalScan(table, *side.first, *side.second, rows) + " " + alias;
	}
	auto check = "(" + JoinSql(misaligned, " OR ", "false") + ")";
	differs.push_back(check);
	return "SELECT __b." + std::string(ROWID) + " AS r, " + check + " AS misaligned FROM " +
	       PositionalScan(table, base, columns, rows) + " __b" + scans + " WHERE " + JoinSql(differs, " OR ", "false");
}

std::vector<std::string> PositionParts(const std::vector<RowidRange> &groups, size_t parts) {
	parts = std::max<size_t>(1, std::min(parts, groups.size()));
	std::vector<std::string> out;
	for (size_t p = 0; p < parts; p++) {
		// Runs of whole row groups: every group's live rows then pair within one part's scans.
		auto first = groups.begin() + groups.size() * p / parts,
		     last = groups.begin() + groups.size() * (p + 1) / parts;
		// The mutation the randomized histories must catch: each part after the first loses its first group.
		if (p > 0 && MutationEnabled("merge_position_part_gap")) {
			++first;
		}
		out.push_back(RowidPredicate(std::vector<RowidRange>(first, last)));
	}
	return out;
}

std::string PositionsQuery(const TableShape &table, const std::string &base, const std::string &ours,
                           const std::string &theirs, const InputReads &reads, size_t parts) {
	std::vector<std::string> queries;
	for (auto &rows : PositionParts(reads.positional_groups, parts)) {
		queries.push_back("(" + PartPositionsQuery(table, base, ours, theirs, reads, rows) + ")");
	}
	return JoinSql(queries, " UNION ALL ", "");
}

std::string PositionalInputs(const TableShape &table, const std::string &base, const std::string &ours,
                             const std::string &theirs, const InputReads &reads) {
	auto values = table.ValueColumns();
	std::vector<std::string> select;
	for (size_t i = 0; i < table.key.size(); i++) {
		select.push_back("__b." + SqlIdentifier(table.key[i]) + " AS k_" + std::to_string(i));
	}
	select.push_back("true AS in_b, true AS in_o, true AS in_t");
	// A column a side left as the base's segments in every positional group holds the base's value at
	// every position: it is taken from the base, so that side's scan reads only the columns it rewrote.
	auto from = [&](const std::vector<std::string> &rewritten, const std::string &column, const char *side) {
		return std::find(rewritten.begin(), rewritten.end(), column) == rewritten.end() ? std::string("__b.")
		                                                                                : std::string(side);
	};
	for (size_t i = 0; i < values.size(); i++) {
		auto c = SqlIdentifier(values[i]), n = std::to_string(i);
		select.push_back("__b." + c + " AS b_" + n + ", " + from(reads.ours_positional_columns, values[i], "__o.") + c +
		                 " AS o_" + n + ", " + from(reads.theirs_positional_columns, values[i], "__t.") + c + " AS t_" +
		                 n);
	}
	// The mutation the randomized histories must catch: ours' row taken from the next position.
	std::string shift = MutationEnabled("merge_position_shift") ? " - 1" : "";
	auto at = [&](const std::string &catalog, const std::string &offset) {
		return "(SELECT rowid" + offset + " AS " + std::string(ROWID) + ", * FROM " + Qualified(catalog, table.name) +
		       " WHERE rowid" + offset + " IN (SELECT r FROM " + reads.positions + "))";
	};
	auto on = [](const char *side) {
		return std::string(" ON ") + side + "." + ROWID + " = __b." + ROWID;
	};
	// A side that rewrote nothing in these groups holds the base's rows there.
	auto &o = reads.ours_positional_columns.empty() ? base : ours;
	auto &t = reads.theirs_positional_columns.empty() ? base : theirs;
	return "SELECT " + JoinSql(select, ", ", "") + " FROM " + at(base, "") + " __b JOIN " + at(o, shift) + " __o" +
	       on("__o") + " JOIN " + at(t, "") + " __t" + on("__t");
}

} // namespace differential
