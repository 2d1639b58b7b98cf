// SQL text for the cell-level decision of the 1.1 specification's tables:
//   cell in all three: ours == theirs -> it; ours == base -> theirs; theirs == base -> ours; else conflict;
//   rows: inserted on one side -> inserted; on both identically -> once, differently -> insert_insert;
//   deleted on both, or on one and unchanged on the other -> deleted; deleted vs updated -> delete_update.
#include "merge/table_merge.hpp"

#include "common/sql_quote.hpp"

namespace differential {

static std::vector<std::string> ValueColumns(const TableShape &table) {
	std::vector<std::string> out;
	for (auto &column : table.columns) {
		bool is_key = false;
		for (auto &k : table.key) {
			is_key = is_key || k == column;
		}
		if (!is_key) {
			out.push_back(column);
		}
	}
	return out;
}

static std::string Join(const std::vector<std::string> &parts, const std::string &separator, const std::string &empty) {
	if (parts.empty()) {
		return empty;
	}
	std::string out = parts[0];
	for (size_t i = 1; i < parts.size(); i++) {
		out += separator + parts[i];
	}
	return out;
}

static std::string N(const char *prefix, size_t i) {
	return std::string(prefix) + std::to_string(i);
}

std::string DecisionQuery(const TableShape &table, const std::string &base, const std::string &ours,
                          const std::string &theirs) {
	auto values = ValueColumns(table);
	auto side = [&](const std::string &catalog) {
		return "(SELECT *, true AS __differential_present FROM " + SqlIdentifier(catalog) + ".main." +
		       SqlIdentifier(table.name) + ")";
	};
	std::vector<std::string> select, on_bo, on_t;
	for (size_t i = 0; i < table.key.size(); i++) {
		auto k = SqlIdentifier(table.key[i]);
		select.push_back("coalesce(b." + k + ", o." + k + ", t." + k + ") AS " + N("k_", i));
		on_bo.push_back("b." + k + " = o." + k);
		on_t.push_back("coalesce(b." + k + ", o." + k + ") = t." + k);
	}
	select.push_back("b.__differential_present IS NOT NULL AS in_b");
	select.push_back("o.__differential_present IS NOT NULL AS in_o");
	select.push_back("t.__differential_present IS NOT NULL AS in_t");
	for (size_t i = 0; i < values.size(); i++) {
		auto c = SqlIdentifier(values[i]);
		select.push_back("b." + c + " AS " + N("b_", i));
		select.push_back("o." + c + " AS " + N("o_", i));
		select.push_back("t." + c + " AS " + N("t_", i));
	}
	auto joined = "SELECT " + Join(select, ", ", "") + " FROM " + side(base) + " b FULL OUTER JOIN " + side(ours) +
	              " o ON " + Join(on_bo, " AND ", "true") + " FULL OUTER JOIN " + side(theirs) + " t ON " +
	              Join(on_t, " AND ", "true");

	std::vector<std::string> o_changed, t_changed, differ, cell_conflict, takes_theirs, merged;
	for (size_t i = 0; i < values.size(); i++) {
		auto b = N("b_", i), o = N("o_", i), t = N("t_", i);
		o_changed.push_back(o + " IS DISTINCT FROM " + b);
		t_changed.push_back(t + " IS DISTINCT FROM " + b);
		differ.push_back(o + " IS DISTINCT FROM " + t);
		cell_conflict.push_back("(" + o + " IS DISTINCT FROM " + b + " AND " + t + " IS DISTINCT FROM " + b + " AND " +
		                        o + " IS DISTINCT FROM " + t + ")");
		takes_theirs.push_back("(" + o + " IS NOT DISTINCT FROM " + b + " AND " + t + " IS DISTINCT FROM " + b + ")");
		merged.push_back("CASE WHEN " + o + " IS NOT DISTINCT FROM " + b + " THEN " + t + " ELSE " + o + " END AS " +
		                 N("m_", i));
	}
	auto any = [&](const std::vector<std::string> &terms) {
		return "(" + Join(terms, " OR ", "false") + ")";
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
	return "SELECT *, " + any(o_changed) + " AS o_changed, " + any(t_changed) + " AS t_changed, " +
	       (merged.empty() ? std::string() : Join(merged, ", ", "") + ", ") + action + " FROM (" + joined +
	       ") WHERE NOT (in_b AND in_o AND in_t) OR " + any(o_changed) + " OR " + any(t_changed);
}

std::string CountQuery(const TableShape &table, const std::string &decisions) {
	return "SELECT count(*) FILTER (NOT in_b AND in_o), count(*) FILTER (in_b AND in_o AND o_changed), "
	       "count(*) FILTER (in_b AND NOT in_o), count(*) FILTER (NOT in_b AND in_t), "
	       "count(*) FILTER (in_b AND in_t AND t_changed), count(*) FILTER (in_b AND NOT in_t), "
	       "count(*) FILTER (action LIKE 'conflict:%') FROM " +
	       decisions;
}

std::vector<std::string> ApplyStatements(const TableShape &table, const std::string &decisions,
                                         const std::string &target) {
	auto values = ValueColumns(table);
	auto qualified = SqlIdentifier(target) + ".main." + SqlIdentifier(table.name);
	std::vector<std::string> match, keys, inserted_columns, inserted_values, set;
	for (size_t i = 0; i < table.key.size(); i++) {
		match.push_back(qualified + "." + SqlIdentifier(table.key[i]) + " = d." + N("k_", i));
		inserted_columns.push_back(SqlIdentifier(table.key[i]));
		inserted_values.push_back(N("k_", i));
	}
	for (size_t i = 0; i < values.size(); i++) {
		set.push_back(SqlIdentifier(values[i]) + " = d." + N("m_", i));
		inserted_columns.push_back(SqlIdentifier(values[i]));
		inserted_values.push_back(N("t_", i));
	}
	std::vector<std::string> out;
	out.push_back("DELETE FROM " + qualified + " USING " + decisions + " d WHERE d.action = 'delete' AND " +
	              Join(match, " AND ", "true"));
	if (!set.empty()) {
		out.push_back("UPDATE " + qualified + " SET " + Join(set, ", ", "") + " FROM " + decisions +
		              " d WHERE d.action = 'update' AND " + Join(match, " AND ", "true"));
	}
	out.push_back("INSERT INTO " + qualified + " (" + Join(inserted_columns, ", ", "") + ") SELECT " +
	              Join(inserted_values, ", ", "") + " FROM " + decisions + " WHERE action = 'insert'");
	return out;
}

} // namespace differential
