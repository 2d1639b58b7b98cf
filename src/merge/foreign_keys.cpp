// Foreign keys of a merge's result. The check reads the merged result without building it: ours'
// rows minus those the decisions delete or rewrite, plus the rows they insert or rewrite.
#include "merge/foreign_keys.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"

#include <algorithm>

namespace differential {

static size_t IndexOf(const std::vector<std::string> &names, const std::string &name) {
	for (size_t i = 0; i < names.size(); i++) {
		if (CatalogKey(names[i]) == CatalogKey(name)) {
			return i;
		}
	}
	return names.size();
}

//! `name` as the shape spells it (DuckDB names are case-insensitive).
static std::string Spelled(const TableShape &table, const std::string &name) {
	auto i = IndexOf(table.columns, name);
	return i < table.columns.size() ? table.columns[i] : name;
}

static size_t PlanIndex(const SchemaPlan &plan, const std::string &name) {
	for (size_t i = 0; i < plan.tables.size(); i++) {
		if (plan.tables[i].merge_rows && CatalogKey(plan.tables[i].shape.name) == CatalogKey(name)) {
			return i;
		}
	}
	return plan.tables.size();
}

std::vector<ForeignKeyEdge> ResultForeignKeys(const SchemaPlan &plan, const CatalogSide &ours,
                                              const CatalogSide &theirs) {
	std::vector<ForeignKeyEdge> edges;
	for (size_t i = 0; i < plan.tables.size(); i++) {
		auto &table = plan.tables[i];
		if (!table.merge_rows) {
			continue;
		}
		auto &side = table.shape.ours.table_present ? ours : theirs;
		auto def = side.tables.find(CatalogKey(table.shape.name));
		if (def == side.tables.end()) {
			continue;
		}
		for (auto &key : def->second.foreign_keys) {
			auto parent = PlanIndex(plan, key.parent);
			if (parent == plan.tables.size()) {
				continue;
			}
			if (table.whole || plan.tables[parent].whole) {
				Fail(ErrorCode::MERGE_UNSUPPORTED,
				     "Table " + QuoteName(table.shape.name) + " has a foreign key to " + QuoteName(key.parent) +
				         ", and one of them has no primary key in some input, so its rows cannot be matched; nothing "
				         "was merged. Give both tables the same primary key on every branch.");
			}
			ForeignKeyEdge edge {i, parent, {}, {}};
			for (size_t c = 0; c < key.columns.size(); c++) {
				edge.columns.push_back(Spelled(table.shape, key.columns[c]));
				edge.parent_columns.push_back(Spelled(plan.tables[parent].shape, key.parent_columns[c]));
			}
			edges.push_back(std::move(edge));
		}
	}
	return edges;
}

std::vector<size_t> ParentsFirst(const SchemaPlan &plan, const std::vector<ForeignKeyEdge> &edges) {
	auto n = plan.tables.size();
	std::vector<size_t> order;
	std::vector<bool> placed(n, false);
	// Repeatedly place the first table (in plan order) whose parents are all placed: without foreign
	// keys this is the plan order itself.
	while (order.size() < n) {
		size_t next = n;
		for (size_t i = 0; i < n && next == n; i++) {
			bool ready = !placed[i];
			for (auto &edge : edges) {
				ready = ready && !(edge.child == i && !placed[edge.parent]);
			}
			next = ready ? i : n;
		}
		if (next == n) {
			std::string cycle;
			for (size_t i = 0; i < n; i++) {
				cycle += placed[i] ? "" : (cycle.empty() ? "" : ", ") + QuoteName(plan.tables[i].shape.name);
			}
			Fail(ErrorCode::MERGE_UNSUPPORTED,
			     "The foreign keys of tables " + cycle +
			         " form a cycle, so no order applies parents before children; nothing was merged. Drop one of "
			         "the foreign keys on both branches.");
		}
		placed[next] = true;
		order.push_back(next);
	}
	return order;
}

std::string MergedRows(const TableShape &table, const std::string &ours, const std::string &decisions,
                       const std::vector<std::string> &columns) {
	auto values = table.ValueColumns();
	std::vector<std::string> from_ours, from_decisions, deleted;
	for (auto &column : columns) {
		auto name = SqlIdentifier(column);
		bool in_ours = table.ours.table_present && table.ours.columns.count(CatalogKey(column));
		from_ours.push_back(in_ours ? "__r." + name : "NULL::" + table.TypeOf(column) + " AS " + name);
		auto k = IndexOf(table.key, column);
		from_decisions.push_back((k < table.key.size() ? Numbered("k_", k) : Numbered("m_", IndexOf(values, column))) +
		                         " AS " + name);
	}
	for (size_t k = 0; k < table.key.size(); k++) {
		deleted.push_back("__d." + Numbered("k_", k) + " = __r." + SqlIdentifier(table.key[k]));
	}
	std::vector<std::string> parts;
	if (table.ours.table_present) {
		auto part = "SELECT " + JoinSql(from_ours, ", ", "") + " FROM " + SqlIdentifier(ours) + ".main." +
		            SqlIdentifier(table.name) + " __r";
		if (!decisions.empty()) {
			part += " WHERE NOT EXISTS (SELECT 1 FROM " + decisions +
			        " __d WHERE __d.action IN ('delete', 'update') AND " + JoinSql(deleted, " AND ", "true") + ")";
		}
		parts.push_back(part);
	}
	if (!decisions.empty()) {
		parts.push_back("SELECT " + JoinSql(from_decisions, ", ", "") + " FROM " + decisions +
		                " WHERE action IN ('update', 'insert')");
	}
	if (parts.empty()) {
		std::vector<std::string> none;
		for (auto &column : columns) {
			none.push_back("NULL::" + table.TypeOf(column) + " AS " + SqlIdentifier(column));
		}
		parts.push_back("SELECT " + JoinSql(none, ", ", "") + " WHERE false");
	}
	return "(" + JoinSql(parts, " UNION ALL ", "") + ")";
}

std::string ViolationsQuery(const ForeignKeyEdge &edge, const TableShape &child, const TableShape &parent,
                            const std::string &ours, const std::string &child_decisions,
                            const std::string &parent_decisions) {
	std::vector<std::string> child_columns = child.key, select, present, matches;
	for (auto &c : edge.columns) {
		if (IndexOf(child_columns, c) == child_columns.size()) {
			child_columns.push_back(c);
		}
	}
	for (size_t i = 0; i < child.key.size(); i++) {
		select.push_back("__c." + SqlIdentifier(child.key[i]) + " AS " + Numbered("__differential_k", i));
	}
	for (size_t j = 0; j < edge.columns.size(); j++) {
		auto c = "__c." + SqlIdentifier(edge.columns[j]);
		select.push_back(c + " AS " + Numbered("__differential_f", j));
		present.push_back(c + " IS NOT NULL");
		matches.push_back("__p." + SqlIdentifier(edge.parent_columns[j]) + " = " + c);
	}
	return "SELECT " + JoinSql(select, ", ", "") + " FROM " + MergedRows(child, ours, child_decisions, child_columns) +
	       " __c WHERE " + JoinSql(present, " AND ", "true") + " AND NOT EXISTS (SELECT 1 FROM " +
	       MergedRows(parent, ours, parent_decisions, edge.parent_columns) + " __p WHERE " +
	       JoinSql(matches, " AND ", "true") + ")";
}

std::string MissingParentKeys(const ForeignKeyEdge &edge, const TableShape &parent, const std::string &violations) {
	std::vector<std::string> select;
	for (size_t k = 0; k < parent.key.size(); k++) {
		select.push_back(Numbered("__differential_f", IndexOf(edge.parent_columns, parent.key[k])) + " AS " +
		                 Numbered("__differential_k", k));
	}
	return "SELECT DISTINCT " + JoinSql(select, ", ", "") + " FROM " + violations;
}

} // namespace differential
