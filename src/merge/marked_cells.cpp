// SQL for marked cells: reading an input's marks beside its rows, deciding a cell with marks, and the
// marks a virtual base's step leaves in its result.
#include "merge/marked_cells.hpp"

#include "common/sql_quote.hpp"
#include "duckdb/common/string_util.hpp"

namespace differential {

std::string MarkColumn(const char *side, size_t i) {
	return std::string(side) + "x_" + std::to_string(i);
}

static std::string Unmarked(const std::string &mark) {
	return mark.empty() ? std::string() : " AND NOT " + mark;
}

std::string SameCell(const std::string &x, const std::string &x_mark, const std::string &y, const std::string &y_mark) {
	return "(" + x + " IS NOT DISTINCT FROM " + y + Unmarked(x_mark) + Unmarked(y_mark) + ")";
}

std::string OtherCell(const std::string &x, const std::string &x_mark, const std::string &y,
                      const std::string &y_mark) {
	if (x_mark.empty() && y_mark.empty()) {
		return x + " IS DISTINCT FROM " + y;
	}
	return "(NOT " + SameCell(x, x_mark, y, y_mark) + ")";
}

static std::string AnyMark(const CellMarks &marks) {
	std::vector<std::string> terms;
	for (auto *mark : {&marks.b, &marks.o, &marks.t}) {
		if (!mark->empty()) {
			terms.push_back(*mark);
		}
	}
	return "(" + JoinSql(terms, " OR ", "false") + ")";
}

CellDecision MarkedCell(const CellDecision &plain, const std::string &column, const std::string &b,
                        const std::string &o, const std::string &t, const CellMarks &marks) {
	if (!marks.Any()) {
		return plain;
	}
	auto any = AnyMark(marks);
	auto ours_kept = SameCell(o, marks.o, b, marks.b);
	auto theirs_kept = SameCell(t, marks.t, b, marks.b);
	auto agree = SameCell(o, marks.o, t, marks.t);
	auto conflict = "(NOT " + agree + " AND NOT " + ours_kept + " AND NOT " + theirs_kept + ")";
	CellDecision decision;
	decision.combines = plain.combines;
	decision.merged = "CASE WHEN " + any + " THEN (CASE WHEN " + ours_kept + " THEN " + t + " ELSE " + o +
	                  " END) ELSE (" + plain.merged + ") END";
	decision.conflict = "CASE WHEN " + any + " THEN " + conflict + " ELSE (" + plain.conflict + ") END";
	decision.parts.push_back({column, "(" + any + " AND " + conflict + ")"});
	for (auto &part : plain.parts) {
		decision.parts.push_back({part.path, "(NOT " + any + " AND " + part.conflict + ")"});
	}
	return decision;
}

std::string MarkedRelation(const TableShape &table, const std::string &select, const std::string &from,
                           const std::string &marks, const char *side) {
	std::vector<std::string> on;
	for (auto &k : table.key) {
		on.push_back("__r." + SqlIdentifier(k) + " = __m." + SqlIdentifier(k));
	}
	std::string out = "SELECT __r.*";
	auto values = table.ValueColumns();
	for (size_t i = 0; i < values.size(); i++) {
		out += ", coalesce(list_contains(__m.__differential_marked, " +
		       SqlLiteral(duckdb::StringUtil::Lower(values[i])) + "), false) AS " + MarkColumn(side, i);
	}
	return out + " FROM (" + select + " " + from + ") __r LEFT JOIN " + marks + " __m ON " +
	       JoinSql(on, " AND ", "true");
}

std::string ResultMark(const TableShape &table, size_t i, const CellMarks &marks) {
	auto b = Numbered("b_", i), o = Numbered("o_", i), t = Numbered("t_", i);
	auto none = std::string("false");
	auto ours_mark = marks.o.empty() ? none : marks.o;
	auto theirs_mark = marks.t.empty() ? none : marks.t;
	auto agree = SameCell(o, marks.o, t, marks.t);
	// In all three inputs: agreeing cells are unmarked; a cell one side kept takes the other's mark.
	auto in_all = marks.Any()
	                  ? "CASE WHEN NOT " + AnyMark(marks) + " THEN " + Numbered("c_", i) + " WHEN " + agree +
	                        " THEN false WHEN " + SameCell(o, marks.o, b, marks.b) + " THEN " + theirs_mark + " WHEN " +
	                        SameCell(t, marks.t, b, marks.b) + " THEN " + ours_mark + " ELSE true END"
	                  : Numbered("c_", i);
	return "CASE WHEN action = 'conflict:delete_update' THEN true WHEN in_b AND in_o AND in_t THEN " + in_all +
	       " WHEN in_o AND in_t THEN NOT " + agree + " WHEN in_o THEN " + ours_mark + " ELSE " + theirs_mark + " END";
}

std::string MarkedColumnsList(const TableShape &table, const std::vector<std::string> &conditions) {
	auto values = table.ValueColumns();
	if (values.empty()) {
		return "[]::VARCHAR[]";
	}
	std::vector<std::string> named;
	for (size_t i = 0; i < values.size(); i++) {
		named.push_back("CASE WHEN " + conditions[i] + " THEN " + SqlLiteral(duckdb::StringUtil::Lower(values[i])) +
		                " END");
	}
	return "[x FOR x IN [" + JoinSql(named, ", ", "") + "] IF x IS NOT NULL]::VARCHAR[]";
}

} // namespace differential
