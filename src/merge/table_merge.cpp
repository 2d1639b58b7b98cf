// SQL text for the cell-level decision of a three-way merge (docs/MERGES.md):
//   cell in all three: ours == theirs -> it; ours == base -> theirs; theirs == base -> ours; else conflict;
//   rows: inserted on one side -> inserted; on both identically -> once, differently -> insert_insert;
//   deleted on both, or on one and unchanged on the other -> deleted; deleted vs updated -> delete_update.
#include "merge/table_merge.hpp"

#include "common/sql_quote.hpp"
#include "duckdb/common/string_util.hpp"
#include "merge/marked_cells.hpp"
#include "merge/positional_match.hpp"

#include <tuple>

namespace differential {

std::vector<std::string> TableShape::ValueColumns() const {
	std::vector<std::string> out;
	for (auto &column : columns) {
		bool is_key = false;
		for (auto &k : key) {
			is_key = is_key || k == column;
		}
		if (!is_key) {
			out.push_back(column);
		}
	}
	return out;
}

std::string TableShape::TypeOf(const std::string &column) const {
	for (size_t i = 0; i < columns.size(); i++) {
		if (columns[i] == column) {
			return types[i];
		}
	}
	return "VARCHAR";
}

const FieldTree &TableShape::FieldsOf(const std::string &column) const {
	static const FieldTree WHOLE_VALUE;
	if (nested_mode == NestedMode::FIELDS) {
		for (size_t i = 0; i < columns.size() && i < fields.size(); i++) {
			if (columns[i] == column) {
				return fields[i];
			}
		}
	}
	return WHOLE_VALUE;
}

CellDecision TableShape::DecideCell(const std::string &column, const std::string &b, const std::string &o,
                                    const std::string &t) const {
	return FieldDecision(FieldsOf(column), column, b, o, t);
}

std::string Numbered(const char *prefix, size_t i) {
	return std::string(prefix) + std::to_string(i);
}

std::string JoinSql(const std::vector<std::string> &parts, const std::string &separator, const std::string &empty) {
	if (parts.empty()) {
		return empty;
	}
	std::string out = parts[0];
	for (size_t i = 1; i < parts.size(); i++) {
		out += separator + parts[i];
	}
	return out;
}

std::string RowidPredicate(const std::vector<RowidRange> &ranges) {
	std::vector<std::string> out;
	for (size_t i = 0; i < ranges.size();) {
		size_t j = i;
		while (j + 1 < ranges.size() && ranges[j + 1].first == ranges[j].last + 1) {
			j++;
		}
		out.push_back("rowid BETWEEN " + std::to_string(ranges[i].first) + " AND " + std::to_string(ranges[j].last));
		i = j + 1;
	}
	return out.empty() ? "false" : "(" + JoinSql(out, " OR ", "false") + ")";
}

static std::string Qualified(const std::string &catalog, const std::string &table) {
	return SqlIdentifier(catalog) + ".main." + SqlIdentifier(table);
}

//! One input's rows with the result's columns: a column the input lacks reads as a typed NULL, and
//! an input without the table has no rows.
static std::string SideRelation(const TableShape &table, const std::string &catalog, const SideColumns &side,
                                const std::string &rows = "", const std::string &base = "",
                                const std::string &from_base = "", const std::string &marks = "",
                                const char *mark_side = "") {
	std::vector<std::string> select;
	for (size_t i = 0; i < table.columns.size(); i++) {
		auto c = SqlIdentifier(table.columns[i]);
		if (side.table_present && side.columns.count(duckdb::StringUtil::Lower(table.columns[i]))) {
			select.push_back(c);
		} else {
			select.push_back("NULL::" + table.types[i] + " AS " + c);
		}
	}
	select.push_back("true AS __differential_present");
	if (!side.table_present) {
		for (size_t i = 0; !marks.empty() && i < table.ValueColumns().size(); i++) {
			select.push_back("false AS " + MarkColumn(mark_side, i));
		}
		return "(SELECT " + JoinSql(select, ", ", "") + " WHERE false)";
	}
	if (!marks.empty()) {
		// A virtual base is read whole: it has no storage to narrow the reads by.
		return "(" +
		       MarkedRelation(table, "SELECT " + JoinSql(select, ", ", ""), "FROM " + Qualified(catalog, table.name),
		                      marks, mark_side) +
		       ")";
	}
	auto relation = "SELECT " + JoinSql(select, ", ", "") + " FROM " + Qualified(catalog, table.name) +
	                (rows.empty() ? std::string() : " WHERE " + rows);
	if (!from_base.empty()) {
		// Only tables without schema changes are narrowed, so the base has the same columns.
		relation += " UNION ALL SELECT " + JoinSql(select, ", ", "") + " FROM " + Qualified(base, table.name) +
		            " WHERE " + from_base;
	}
	return "(" + relation + ")";
}

//! The three inputs' rows side by side, matched by key: k_i, in_b, in_o, in_t, then b_i, o_i, t_i per
//! value column. A side read as the base joins nothing: the base's columns stand in for it.
static std::string JoinedInputs(const TableShape &table, const std::string &base, const std::string &ours,
                                const std::string &theirs, const InputReads &reads) {
	auto values = table.ValueColumns();
	auto ours_as_base = reads.ours_as_base;
	auto theirs_as_base = reads.theirs_as_base;
	auto ours_alias = ours_as_base ? std::string("__b") : std::string("__o");
	auto theirs_alias = theirs_as_base ? std::string("__b") : std::string("__t");
	std::vector<std::string> select, on_bo, on_t;
	for (size_t i = 0; i < table.key.size(); i++) {
		auto k = SqlIdentifier(table.key[i]);
		std::vector<std::string> present {"__b." + k};
		if (!ours_as_base) {
			present.push_back("__o." + k);
		}
		on_bo.push_back("__b." + k + " = __o." + k);
		on_t.push_back("coalesce(" + JoinSql(present, ", ", "") + ") = __t." + k);
		if (!theirs_as_base) {
			present.push_back("__t." + k);
		}
		select.push_back("coalesce(" + JoinSql(present, ", ", "") + ") AS " + Numbered("k_", i));
	}
	select.push_back("__b.__differential_present IS NOT NULL AS in_b");
	select.push_back(ours_alias + ".__differential_present IS NOT NULL AS in_o");
	select.push_back(theirs_alias + ".__differential_present IS NOT NULL AS in_t");
	for (size_t i = 0; i < values.size(); i++) {
		auto c = SqlIdentifier(values[i]);
		select.push_back("__b." + c + " AS " + Numbered("b_", i));
		select.push_back(ours_alias + "." + c + " AS " + Numbered("o_", i));
		select.push_back(theirs_alias + "." + c + " AS " + Numbered("t_", i));
	}
	for (auto side : {std::make_tuple("__b", &reads.base_marks, "b"), std::make_tuple("__o", &reads.ours_marks, "o"),
	                  std::make_tuple("__t", &reads.theirs_marks, "t")}) {
		for (size_t i = 0; !std::get<1>(side)->empty() && i < values.size(); i++) {
			auto mark = MarkColumn(std::get<2>(side), i);
			select.push_back("coalesce(" + std::string(std::get<0>(side)) + "." + mark + ", false) AS " + mark);
		}
	}
	auto joined = "SELECT " + JoinSql(select, ", ", "") + " FROM " +
	              SideRelation(table, base, table.base, reads.base_rows, "", "", reads.base_marks, "b") + " __b";
	if (!ours_as_base) {
		joined +=
		    " FULL OUTER JOIN " +
		    SideRelation(table, ours, table.ours, reads.ours_rows, base, reads.ours_from_base, reads.ours_marks, "o") +
		    " __o ON " + JoinSql(on_bo, " AND ", "true");
	}
	if (!theirs_as_base) {
		joined += " FULL OUTER JOIN " +
		          SideRelation(table, theirs, table.theirs, reads.theirs_rows, base, reads.theirs_from_base,
		                       reads.theirs_marks, "t") +
		          " __t ON " + JoinSql(on_t, " AND ", "true");
	}
	return joined;
}

CellMarks Marks(const InputReads &reads, size_t i) {
	CellMarks marks;
	marks.b = reads.base_marks.empty() ? "" : MarkColumn("b", i);
	marks.o = reads.ours_marks.empty() ? "" : MarkColumn("o", i);
	marks.t = reads.theirs_marks.empty() ? "" : MarkColumn("t", i);
	return marks;
}

std::string DecisionQuery(const TableShape &table, const std::string &base, const std::string &ours,
                          const std::string &theirs, const InputReads &reads) {
	auto values = table.ValueColumns();
	auto joined = JoinedInputs(table, base, ours, theirs, reads);
	if (!reads.positions.empty()) {
		joined += " UNION ALL " + PositionalInputs(table, base, ours, theirs, reads);
	}
	std::vector<std::string> o_changed, t_changed, differ, cell_conflict, takes_theirs, decided, columns;
	for (size_t i = 0; i < values.size(); i++) {
		auto b = Numbered("b_", i), o = Numbered("o_", i), t = Numbered("t_", i);
		auto marks = Marks(reads, i);
		auto cell = MarkedCell(table.DecideCell(values[i], b, o, t), values[i], b, o, t, marks);
		o_changed.push_back(OtherCell(o, marks.o, b, marks.b));
		t_changed.push_back(OtherCell(t, marks.t, b, marks.b));
		differ.push_back(OtherCell(o, marks.o, t, marks.t));
		cell_conflict.push_back(cell.conflict);
		takes_theirs.push_back("(" + SameCell(o, marks.o, b, marks.b) + " AND " + t_changed.back() + ")");
		if (cell.combines) {
			// Ours changed some fields and theirs others: the merged value is neither side's.
			takes_theirs.back() = "(" + takes_theirs.back() + " OR (" + cell.merged + ") IS DISTINCT FROM " + o + ")";
		}
		decided.push_back(cell.merged + " AS " + Numbered("m_", i));
		decided.push_back("in_b AND in_o AND in_t AND " + cell_conflict.back() + " AS " + Numbered("c_", i));
		// The columns a conflict is about: the clashing cells (or fields of them), the cells two insertions
		// disagree on, or the cells the updating side of a delete_update changed.
		for (auto &part : cell.parts) {
			columns.push_back("CASE WHEN action = 'conflict:cell' AND " + part.conflict + " THEN " +
			                  SqlLiteral(part.path) + " END");
		}
		columns.push_back("CASE WHEN CASE action WHEN 'conflict:insert_insert' THEN " + differ.back() +
		                  " WHEN 'conflict:delete_update' THEN CASE WHEN in_o THEN " + o_changed.back() + " ELSE " +
		                  t_changed.back() + " END ELSE false END THEN " + SqlLiteral(values[i]) + " END");
	}
	auto any = [&](const std::vector<std::string> &terms) {
		return "(" + JoinSql(terms, " OR ", "false") + ")";
	};
	auto action = "CASE WHEN in_b AND in_o AND in_t THEN CASE WHEN " + any(cell_conflict) +
	              " THEN 'conflict:cell' WHEN " + any(takes_theirs) +
	              " THEN 'update' ELSE 'keep' END "
	              "WHEN NOT in_b AND NOT in_o AND in_t THEN 'insert' "
	              "WHEN NOT in_b AND in_o AND in_t THEN CASE WHEN " +
	              any(differ) +
	              " THEN 'conflict:insert_insert' ELSE 'keep' END "
	              "WHEN in_b AND NOT in_o AND in_t THEN CASE WHEN " +
	              any(t_changed) +
	              " THEN 'conflict:delete_update' ELSE 'keep' END "
	              "WHEN in_b AND in_o AND NOT in_t THEN CASE WHEN " +
	              any(o_changed) + " THEN 'conflict:delete_update' ELSE 'delete' END ELSE 'keep' END AS action";
	// Rows present everywhere and unchanged on both sides count for nothing and need no action:
	// leaving them out keeps the materialized decisions as small as the change, not the table.
	auto decisions =
	    "SELECT *, " + any(o_changed) + " AS o_changed, " + any(t_changed) + " AS t_changed, " +
	    (decided.empty() ? std::string() : JoinSql(decided, ", ", "") + ", ") + action + " FROM (" + joined + ")" +
	    (reads.unchanged_rows ? std::string()
	                          : " WHERE NOT (in_b AND in_o AND in_t) OR " + any(o_changed) + " OR " + any(t_changed));
	auto conflict_columns = columns.empty()
	                            ? std::string("[]::VARCHAR[]")
	                            : "[x FOR x IN [" + JoinSql(columns, ", ", "") + "] IF x IS NOT NULL]::VARCHAR[]";
	return "SELECT *, " + conflict_columns + " AS conflict_columns, false AS resolved FROM (" + decisions + ")";
}

std::string CountQuery(const std::string &decisions) {
	return "SELECT count(*) FILTER (NOT in_b AND in_o), count(*) FILTER (in_b AND in_o AND o_changed), "
	       "count(*) FILTER (in_b AND NOT in_o), count(*) FILTER (NOT in_b AND in_t), "
	       "count(*) FILTER (in_b AND in_t AND t_changed), count(*) FILTER (in_b AND NOT in_t), "
	       "count(*) FILTER (action LIKE 'conflict:%'), count(*) FILTER (resolved) FROM " +
	       decisions;
}

static std::vector<std::string> KeyNames(const TableShape &table) {
	std::vector<std::string> keys;
	for (size_t i = 0; i < table.key.size(); i++) {
		keys.push_back(Numbered("k_", i));
	}
	return keys;
}

std::string ConflictQuery(const TableShape &table, const std::string &decisions, int64_t limit, int64_t offset) {
	auto keys = KeyNames(table);
	std::vector<std::string> select = keys;
	for (auto column : {"in_b", "in_o", "in_t", "replace(action, 'conflict:', '')", "conflict_columns"}) {
		select.push_back(column);
	}
	auto values = table.ValueColumns();
	for (size_t i = 0; i < values.size(); i++) {
		select.push_back(Numbered("b_", i));
		select.push_back(Numbered("o_", i));
		select.push_back(Numbered("t_", i));
	}
	return "SELECT " + JoinSql(select, ", ", "") + " FROM " + decisions + " WHERE action LIKE 'conflict:%' ORDER BY " +
	       JoinSql(keys, ", ", "1") + " LIMIT " + std::to_string(limit) + " OFFSET " + std::to_string(offset);
}

std::string UpdatedColumnsQuery(const TableShape &table, const std::string &decisions) {
	std::vector<std::string> select;
	for (size_t i = 0; i < table.ValueColumns().size(); i++) {
		auto m = Numbered("m_", i), o = Numbered("o_", i);
		select.push_back("coalesce(bool_or(" + m + " IS DISTINCT FROM " + o + " OR CAST(" + m +
		                 " AS VARCHAR) IS DISTINCT FROM CAST(" + o + " AS VARCHAR)), false)");
	}
	return "SELECT " + JoinSql(select, ", ", "true") + " FROM " + decisions + " WHERE action = 'update'";
}

std::vector<std::string> ApplyStatements(const TableShape &table, const std::string &decisions,
                                         const std::string &target, const std::vector<bool> &updated) {
	auto values = table.ValueColumns();
	auto qualified = Qualified(target, table.name);
	std::vector<std::string> match, inserted_columns, inserted_values, set;
	for (size_t i = 0; i < table.key.size(); i++) {
		match.push_back(qualified + "." + SqlIdentifier(table.key[i]) + " = __d." + Numbered("k_", i));
		inserted_columns.push_back(SqlIdentifier(table.key[i]));
		inserted_values.push_back(Numbered("k_", i));
	}
	for (size_t i = 0; i < values.size(); i++) {
		// A column no update changes is left alone: DuckDB would otherwise record an update of it in every row
		// group a changed row sits in, and rewrite that column there at the next checkpoint.
		if (updated[i]) {
			set.push_back(SqlIdentifier(values[i]) + " = __d." + Numbered("m_", i));
		}
		inserted_columns.push_back(SqlIdentifier(values[i]));
		inserted_values.push_back(Numbered("m_", i));
	}
	std::vector<std::string> out;
	out.push_back("DELETE FROM " + qualified + " USING " + decisions + " __d WHERE __d.action = 'delete' AND " +
	              JoinSql(match, " AND ", "true"));
	if (!set.empty()) {
		out.push_back("UPDATE " + qualified + " SET " + JoinSql(set, ", ", "") + " FROM " + decisions +
		              " __d WHERE __d.action = 'update' AND " + JoinSql(match, " AND ", "true"));
	}
	out.push_back("INSERT INTO " + qualified + " (" + JoinSql(inserted_columns, ", ", "") + ") SELECT " +
	              JoinSql(inserted_values, ", ", "") + " FROM " + decisions + " WHERE action = 'insert' ORDER BY " +
	              JoinSql(KeyNames(table), ", ", "1"));
	return out;
}

std::string KeyInRelation(const TableShape &table, const std::string &keys) {
	std::vector<std::string> equal;
	for (size_t i = 0; i < table.key.size(); i++) {
		equal.push_back("__x." + Numbered("__differential_k", i) + " = " + SqlIdentifier(table.key[i]));
	}
	return "EXISTS (SELECT 1 FROM " + keys + " __x WHERE " + JoinSql(equal, " AND ", "true") + ")";
}

std::string ChangedRowsQuery(const TableShape &table, const std::string &base, const std::string &side,
                             const std::string &column) {
	auto b = Qualified(base, table.name), s = Qualified(side, table.name);
	if (column.empty()) {
		return "SELECT (SELECT count(*) FROM (FROM " + b + " EXCEPT ALL FROM " + s +
		       ")) + (SELECT count(*) FROM (FROM " + s + " EXCEPT ALL FROM " + b + "))";
	}
	std::vector<std::string> on;
	for (auto &k : table.key) {
		on.push_back("__b." + SqlIdentifier(k) + " = __s." + SqlIdentifier(k));
	}
	auto c = SqlIdentifier(column);
	auto present = "__s." + SqlIdentifier(table.key[0]) + " IS NOT NULL";
	auto in_base = "__b." + SqlIdentifier(table.key[0]) + " IS NOT NULL";
	return "SELECT count(*) FROM " + b + " __b FULL OUTER JOIN " + s + " __s ON " + JoinSql(on, " AND ", "true") +
	       " WHERE " + present + " AND ((NOT " + in_base + " AND __s." + c + " IS NOT NULL) OR (" + in_base +
	       " AND __s." + c + " IS DISTINCT FROM __b." + c + "))";
}

} // namespace differential
