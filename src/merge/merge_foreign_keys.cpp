// The foreign key check of a merge (docs/MERGES.md, "Foreign keys"): once every row is decided, each
// foreign key is checked on the merged result, decisions naming a violating child row or a missing
// parent row are applied (again, until none applies), and what still violates is a conflict.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/main/connection.hpp"
#include "merge/foreign_keys.hpp"
#include "merge/merge_session.hpp"
#include "merge/merge_sql.hpp"
#include "merge/typed_value.hpp"

#include <algorithm>

namespace differential {

using duckdb::Value;

//! Reads the rows `keys` names (changed or not) into the table's decisions, which it creates when
//! the comparison made none: a decision about a row needs its row. A key no input has gets a row of
//! its own (a parent restored with custom values).
void MergeSession::AddDecisionRows(size_t index, const std::string &keys, std::vector<std::string> &decision_tables) {
	auto &table = plan.tables[index].shape;
	auto &decisions = decision_tables[index];
	if (decisions.empty()) {
		decisions = SqlIdentifier("__merge_decisions@" + tag + "@" + std::to_string(index));
		InputReads none;
		none.base_rows = none.ours_rows = none.theirs_rows = "false";
		RunSql(*connection, "CREATE TEMP TABLE " + decisions + " AS " + DecisionQuery(table, base, ours, theirs, none));
	}
	std::vector<std::string> absent, key_columns;
	for (size_t k = 0; k < table.key.size(); k++) {
		absent.push_back("__d.k_" + std::to_string(k) + " = __q.k_" + std::to_string(k));
		key_columns.push_back(Numbered("__differential_k", k) + " AS " + Numbered("k_", k));
	}
	InputReads chosen;
	chosen.base_rows = chosen.ours_rows = chosen.theirs_rows = KeyInRelation(table, keys);
	chosen.unchanged_rows = true;
	auto missing =
	    " __q WHERE NOT EXISTS (SELECT 1 FROM " + decisions + " __d WHERE " + JoinSql(absent, " AND ", "true") + ")";
	RunSql(*connection, "INSERT INTO " + decisions + " BY NAME SELECT * FROM (" +
	                        DecisionQuery(table, base, ours, theirs, chosen) + ")" + missing);
	RunSql(*connection, "INSERT INTO " + decisions + " BY NAME SELECT * FROM (SELECT " +
	                        JoinSql(key_columns, ", ", "") +
	                        ", false AS in_b, false AS in_o, false AS in_t, false AS o_changed, false AS t_changed, "
	                        "'keep' AS action, []::VARCHAR[] AS conflict_columns, false AS resolved FROM " +
	                        keys + ")" + missing);
}

//! Fills one temp table per foreign key with its violations in the merged result as it stands.
void MergeSession::FindViolations(const std::vector<std::string> &decision_tables,
                                  const std::vector<std::string> &violations) {
	for (size_t e = 0; e < foreign_keys.size(); e++) {
		auto &edge = foreign_keys[e];
		RunSql(*connection, "CREATE OR REPLACE TEMP TABLE " + violations[e] + " AS " +
		                        ViolationsQuery(edge, plan.tables[edge.child].shape, plan.tables[edge.parent].shape,
		                                        ours, decision_tables[edge.child], decision_tables[edge.parent]));
	}
}

//! The keys of table `index` that deferred decisions may name now: its rows that violate a foreign
//! key ('child') and its rows that violating rows miss ('parent'). Empty when it has neither.
std::string MergeSession::DecisionTargets(size_t index, const std::vector<std::string> &violations) {
	auto &table = plan.tables[index].shape;
	std::vector<std::string> parts, keys;
	for (size_t k = 0; k < table.key.size(); k++) {
		keys.push_back(Numbered("__differential_k", k));
	}
	for (size_t e = 0; e < foreign_keys.size(); e++) {
		if (foreign_keys[e].child == index) {
			parts.push_back("SELECT " + JoinSql(keys, ", ", "") + ", 'child' AS role FROM " + violations[e]);
		}
		if (foreign_keys[e].parent == index) {
			parts.push_back("SELECT *, 'parent' AS role FROM (" +
			                MissingParentKeys(foreign_keys[e], table, violations[e]) + ")");
		}
	}
	if (parts.empty()) {
		return "";
	}
	auto targets = SqlIdentifier("__merge_fk_targets@" + tag + "@" + std::to_string(index));
	RunSql(*connection, "CREATE OR REPLACE TEMP TABLE " + targets + " AS SELECT DISTINCT * FROM (" +
	                        JoinSql(parts, " UNION ALL ", "") + ")");
	if (ScalarInt(*connection, "SELECT count(*) FROM " + targets) == 0) {
		RunSql(*connection, "DROP TABLE " + targets);
		return "";
	}
	return targets;
}

void MergeSession::CheckForeignKeys(std::vector<std::string> &decision_tables,
                                    std::vector<MergeObjectResult> &objects) {
	std::vector<std::string> violations;
	for (size_t e = 0; e < foreign_keys.size(); e++) {
		violations.push_back(SqlIdentifier("__merge_fk@" + tag + "@" + std::to_string(e)));
	}
	// Each round applies at least one deferred decision, so this ends; a decision may uncover the
	// next violation (a dropped child's own children), which the next round's decisions can name.
	for (int64_t settled = 1; settled > 0;) {
		FindViolations(decision_tables, violations);
		settled = 0;
		for (auto &deferred : deferred_decisions) {
			auto targets = DecisionTargets(deferred.first, violations);
			if (targets.empty()) {
				continue;
			}
			AddDecisionRows(deferred.first, targets, decision_tables);
			settled += SettleDeferredDecisions(*connection, plan.tables[deferred.first].shape,
			                                   decision_tables[deferred.first], deferred.second, targets);
			RunSql(*connection, "DROP TABLE " + targets);
		}
	}
	for (auto &deferred : deferred_decisions) {
		RefuseDeferredDecisions(*connection, plan.tables[deferred.first].shape, deferred.second);
		// Only a table with deferred decisions had its decisions changed here.
		objects[deferred.first].counts = ReadCounts(*connection, decision_tables[deferred.first]);
	}
	deferred_decisions.clear();
	for (size_t e = 0; e < foreign_keys.size(); e++) {
		ReportViolations(foreign_keys[e], violations[e], objects[foreign_keys[e].child]);
		RunSql(*connection, "DROP TABLE " + violations[e]);
	}
}

//! One violation as a conflict detail: the child row's key and its foreign key columns on each input,
//! the parent table and the parent key that is missing.
void MergeSession::ReportViolations(const ForeignKeyEdge &edge, const std::string &violations,
                                    MergeObjectResult &object) {
	auto found = ScalarInt(*connection, "SELECT count(*) FROM " + violations);
	object.counts.conflicts += found;
	row_conflicts += found;
	auto &child = plan.tables[edge.child].shape;
	auto &parent = plan.tables[edge.parent].shape;
	auto values = child.ValueColumns();
	auto nk = child.key.size(), nf = edge.columns.size();
	std::vector<std::string> select, on, order;
	for (size_t k = 0; k < nk; k++) {
		select.push_back("v." + Numbered("__differential_k", k));
		on.push_back("q." + Numbered("k_", k) + " = v." + Numbered("__differential_k", k));
		order.push_back("v." + Numbered("__differential_k", k));
	}
	for (size_t j = 0; j < nf; j++) {
		select.push_back("v." + Numbered("__differential_f", j));
	}
	select.push_back("q.in_b, q.in_o, q.in_t");
	for (auto &column : edge.columns) {
		size_t k = 0, i = 0;
		while (k < nk && CatalogKey(child.key[k]) != CatalogKey(column)) {
			k++;
		}
		while (i < values.size() && CatalogKey(values[i]) != CatalogKey(column)) {
			i++;
		}
		for (auto side : {"b", "o", "t"}) {
			select.push_back(k < nk ? std::string("CASE WHEN q.in_") + side + " THEN q." + Numbered("k_", k) + " END"
			                        : std::string("q.") + side + "_" + std::to_string(i));
		}
	}
	InputReads chosen;
	chosen.base_rows = chosen.ours_rows = chosen.theirs_rows = KeyInRelation(child, violations);
	chosen.unchanged_rows = true;
	auto sql = "SELECT " + JoinSql(select, ", ", "") + " FROM " + violations + " v LEFT JOIN (" +
	           DecisionQuery(child, base, ours, theirs, chosen) + ") q ON " + JoinSql(on, " AND ", "true") +
	           " ORDER BY " + JoinSql(order, ", ", "1") + " LIMIT " +
	           std::to_string(std::max<int64_t>(0, settings.conflict_limit - int64_t(object.conflict_details.size()))) +
	           " OFFSET " + std::to_string(settings.conflict_offset);
	auto detail_type = ConflictDetailType();
	auto cell_type = duckdb::ListType::GetChildType(duckdb::StructType::GetChildType(detail_type, 6));
	for (auto &row : QueryRows(*connection, sql)) {
		duckdb::vector<Value> key, parent_key, columns, cells;
		for (size_t k = 0; k < nk; k++) {
			key.push_back(MakeTypedValue(child.key[k], row.GetBaseValue(k)));
		}
		for (size_t j = 0; j < nf; j++) {
			parent_key.push_back(MakeTypedValue(edge.parent_columns[j], row.GetBaseValue(nk + j)));
			columns.push_back(Value(edge.columns[j]));
			auto at = nk + nf + 3 + 3 * j;
			auto &name = edge.columns[j];
			cells.push_back(Value::STRUCT({{"column_name", Value(name)},
			                               {"base", MakeTypedValue(name, row.GetBaseValue(at))},
			                               {"ours", MakeTypedValue(name, row.GetBaseValue(at + 1))},
			                               {"theirs", MakeTypedValue(name, row.GetBaseValue(at + 2))}}));
		}
		object.conflict_details.push_back(Value::STRUCT(
		    detail_type, {Value::LIST(TypedValueType(), key), Value("foreign_key_violation"),
		                  Value::LIST(duckdb::LogicalType::VARCHAR, columns), row.GetBaseValue(nk + nf),
		                  row.GetBaseValue(nk + nf + 1), row.GetBaseValue(nk + nf + 2), Value::LIST(cell_type, cells),
		                  Value(parent.name), Value::LIST(TypedValueType(), parent_key)}));
	}
}

} // namespace differential
