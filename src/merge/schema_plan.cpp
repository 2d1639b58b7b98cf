// Schema rules of the 1.1 merge: strict needs identical definitions; additive merges added nullable
// columns and new tables; catalog also merges removals (only of objects the other side left as in the
// base) and whole-view changes. Type changes, renames and constraint changes are never merged.
#include "merge/schema_plan.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/common/string_util.hpp"

#include <set>

namespace differential {

SchemaMode ParseSchemaMode(const std::optional<std::string> &mode) {
	if (!mode) {
		return SchemaMode::STRICT;
	}
	auto lower = duckdb::StringUtil::Lower(*mode);
	for (auto &entry : SCHEMA_MODES) {
		if (lower == entry.text) {
			return entry.value;
		}
	}
	Fail(ErrorCode::INVALID_ARGUMENT,
	     "schema_mode " + QuoteName(*mode) + " is not one of 'strict', 'additive' or 'catalog'.");
}

size_t SchemaPlan::SchemaConflicts() const {
	size_t total = 0;
	for (auto &t : tables) {
		total += t.schema_conflicts.size();
	}
	for (auto &v : views) {
		total += v.schema_conflicts.size();
	}
	return total;
}

const SchemaConflict *SchemaPlan::FirstConflict() const {
	for (auto &t : tables) {
		if (!t.schema_conflicts.empty()) {
			return &t.schema_conflicts[0];
		}
	}
	for (auto &v : views) {
		if (!v.schema_conflicts.empty()) {
			return &v.schema_conflicts[0];
		}
	}
	return nullptr;
}

[[noreturn]] static void Mismatch(SchemaMode mode, const std::string &what, const std::string &advice) {
	Fail(ErrorCode::MERGE_UNSUPPORTED,
	     "schema mismatch: " + what + " (schema_mode '" + ToString(mode) + "'); nothing was merged. " + advice);
}

static std::set<std::string> ColumnNames(const TableDef &table) {
	std::set<std::string> out;
	for (auto &c : table.columns) {
		out.insert(CatalogKey(c.name));
	}
	return out;
}

static SideColumns Side(const TableDef *table) {
	SideColumns side;
	side.table_present = table != nullptr;
	if (table) {
		side.columns = ColumnNames(*table);
	}
	return side;
}

//! The object of an input's catalog keyed `name`, or null.
template <class DEF>
static const DEF *Find(const std::map<std::string, DEF> &objects, const std::string &name) {
	auto it = objects.find(name);
	return it == objects.end() ? nullptr : &it->second;
}

static void SetShape(TablePlan &plan, const TableDef &layout, const TableDef *b, const TableDef *o, const TableDef *t) {
	plan.shape.name = layout.name;
	plan.shape.key = layout.key;
	plan.shape.base = Side(b);
	plan.shape.ours = Side(o);
	plan.shape.theirs = Side(t);
}

static void AddColumn(TablePlan &plan, const ColumnDef &column) {
	plan.shape.columns.push_back(column.name);
	plan.shape.types.push_back(column.type);
	plan.shape.fields.push_back(column.fields);
}

//! Keys, constraints, indexes and the definitions of kept columns never merge as changes.
static void RequireSameConstraints(const TableDef &b, const TableDef &o, const TableDef &t) {
	for (auto *side : {&o, &t}) {
		if (side->key != b.key || side->constraints != b.constraints || side->indexes != b.indexes) {
			Fail(ErrorCode::MERGE_UNSUPPORTED,
			     "Table " + QuoteName(b.name) +
			         " changed its primary key, constraints or indexes on one side; merges do not combine "
			         "constraint changes (in any schema mode). Make the same change on both branches first.");
		}
	}
	for (auto &column : b.columns) {
		for (auto *c : {o.FindColumn(column.name), t.FindColumn(column.name)}) {
			if (c && *c != column) {
				Fail(ErrorCode::MERGE_UNSUPPORTED,
				     "Column " + QuoteName(b.name + "." + column.name) +
				         " changed its type, default or constraints on one side; merges do not convert columns (in "
				         "any schema mode). Make the same change on both branches first.");
			}
		}
	}
}

//! Columns of the base that a side removed (catalog mode only, plain nullable columns only).
//! Returns the columns theirs removed, which staging drops from ours' copy.
static std::set<std::string> PlanRemovedColumns(TablePlan &plan, const TableDef &b, const TableDef &o,
                                                const TableDef &t, SchemaMode mode) {
	std::set<std::string> removed_by_theirs;
	for (auto &column : b.columns) {
		auto *in_o = o.FindColumn(column.name);
		auto *in_t = t.FindColumn(column.name);
		if (in_o && in_t) {
			continue;
		}
		if (mode != SchemaMode::CATALOG) {
			Mismatch(mode, "column " + QuoteName(b.name + "." + column.name) + " was removed on one side",
			         "Removals merge with schema_mode => 'catalog'.");
		}
		if (column.constrained || !column.nullable || !column.default_sql.empty()) {
			Fail(ErrorCode::MERGE_UNSUPPORTED,
			     "Column " + QuoteName(b.name + "." + column.name) +
			         " was removed on one side, but it has a constraint, NOT NULL, a default or an index; only "
			         "plain nullable columns are removed by a merge. Remove it on both branches first.");
		}
		auto source = !in_o && !in_t ? MergeSide::BOTH : !in_o ? MergeSide::OURS : MergeSide::THEIRS;
		plan.schema_changes.push_back({column.name, source, column.type, TableAction::DROP});
		if (in_o && !in_t) {
			plan.stage_drop_columns.push_back(column.name);
			removed_by_theirs.insert(column.name);
			plan.column_drop_checks.emplace_back(column.name, MergeSide::OURS);
		} else if (!in_o && in_t) {
			plan.column_drop_checks.emplace_back(column.name, MergeSide::THEIRS);
		}
	}
	return removed_by_theirs;
}

//! Columns a side added (additive and catalog modes): plain nullable ones only, since the inputs
//! without them contribute NULL. Theirs' additions are appended to the result.
static void PlanAddedColumns(TablePlan &plan, const TableDef &b, const TableDef &o, const TableDef &t,
                             SchemaMode mode) {
	for (auto *side : {&o, &t}) {
		auto label = side == &o ? MergeSide::OURS : MergeSide::THEIRS;
		for (auto &column : side->columns) {
			if (b.FindColumn(column.name)) {
				continue;
			}
			auto qualified = QuoteName(b.name + "." + column.name);
			if (mode == SchemaMode::STRICT) {
				Mismatch(mode, "column " + qualified + " was added on one side",
				         "Added columns merge with schema_mode => 'additive' or 'catalog'.");
			}
			if (!column.nullable || !column.default_sql.empty() || column.constrained) {
				Fail(ErrorCode::MERGE_UNSUPPORTED,
				     "Column " + qualified +
				         " was added with NOT NULL, a default, a constraint or an index; an added "
				         "column must be nullable and plain, because the inputs without it "
				         "contribute NULL. Add it as a plain nullable column.");
			}
			auto *other = side == &o ? t.FindColumn(column.name) : o.FindColumn(column.name);
			if (other && side == &t) {
				continue; // reported once, from ours
			}
			if (other && *other != column) {
				plan.schema_conflicts.push_back({ErrorCode::MERGE_SCHEMA_CONFLICT, column.name,
				                                 "both sides added column " + qualified +
				                                     " with different definitions (" + column.type + " and " +
				                                     other->type + ")"});
			}
			plan.schema_changes.push_back(
			    {column.name, other ? MergeSide::BOTH : label, column.type, TableAction::ADD});
			if (side == &t) {
				plan.stage_add_columns.push_back(column);
				AddColumn(plan, column);
			}
		}
	}
}

//! A table in all three inputs: columns may be added (additive, catalog) or removed (catalog).
static void PlanExistingTable(TablePlan &plan, const TableDef &b, const TableDef &o, const TableDef &t,
                              SchemaMode mode) {
	SetShape(plan, b, &b, &o, &t);
	RequireSameConstraints(b, o, t);
	auto removed_by_theirs = PlanRemovedColumns(plan, b, o, t, mode);
	// The result's columns: ours' own order (base columns, then ours' additions), minus theirs'
	// removals, then theirs' additions, which staging appends with ALTER TABLE.
	for (auto &column : o.columns) {
		if (!removed_by_theirs.count(column.name)) {
			AddColumn(plan, column);
		}
	}
	PlanAddedColumns(plan, b, o, t, mode);
}

//! A table one or both sides added (additive and catalog modes).
static void PlanAddedTable(TablePlan &table, const TableDef *o, const TableDef *t, SchemaMode mode) {
	auto shown = (o ? o : t)->name;
	if (mode == SchemaMode::STRICT) {
		Mismatch(mode,
		         "table additions/deletions are unsupported (table " + QuoteName(shown) + " was added on one side)",
		         "Added tables merge with schema_mode => 'additive' or 'catalog'.");
	}
	auto &layout = o ? *o : *t;
	SetShape(table, layout, nullptr, o, t);
	for (auto &column : layout.columns) {
		AddColumn(table, column);
	}
	table.table_action = TableAction::ADD;
	table.action_source = o && t ? MergeSide::BOTH : o ? MergeSide::OURS : MergeSide::THEIRS;
	if (o && t && !o->SameDefinition(*t)) {
		table.schema_conflicts.push_back(
		    {ErrorCode::MERGE_SCHEMA_CONFLICT, "",
		     "both sides added table " + QuoteName(shown) + " with different definitions"});
	}
	if (!o) {
		table.stage_create_sql = t->create_sql;
		table.stage_indexes.assign(t->indexes.begin(), t->indexes.end());
	}
}

//! A table of the base that one or both sides dropped (catalog mode): only if the other side left it
//! as in the base, which the comparison checks for its rows (table_drop_check).
static void PlanDroppedTable(TablePlan &table, const TableDef &b, const TableDef *o, const TableDef *t,
                             SchemaMode mode) {
	auto shown = (o ? o : t ? t : &b)->name;
	if (mode != SchemaMode::CATALOG) {
		Mismatch(mode,
		         "table additions/deletions are unsupported (table " + QuoteName(shown) + " was dropped on one side)",
		         "Removals merge with schema_mode => 'catalog'.");
	}
	SetShape(table, b, &b, o, t);
	for (auto &column : b.columns) {
		AddColumn(table, column);
	}
	table.table_action = TableAction::DROP;
	table.action_source = !o && !t ? MergeSide::BOTH : !o ? MergeSide::OURS : MergeSide::THEIRS;
	table.merge_rows = false;
	table.stage_drop = o != nullptr;
	auto *kept = o ? o : t;
	if (!kept) {
		return;
	}
	table.table_drop_check = o ? MergeSide::OURS : MergeSide::THEIRS;
	if (!kept->SameDefinition(b)) {
		table.schema_conflicts.push_back({ErrorCode::TABLE_DELETE_MODIFY, "",
		                                  "table " + QuoteName(shown) + " was dropped by " +
		                                      ToString(o ? MergeSide::THEIRS : MergeSide::OURS) +
		                                      " and its definition changed on " + ToString(table.table_drop_check)});
		table.table_drop_check = MergeSide::NONE;
	}
}

static bool SameTable(const TableDef *a, const TableDef *b) {
	return (!a && !b) || (a && b && a->SameDefinition(*b));
}

static bool Keyless(const TableDef *table) {
	return table && table->key.empty();
}

//! A table without a primary key in some input (dbt's model tables): taken whole from the side that
//! changed it. Additions follow the mode's rule for added tables; removals and replacements by
//! another definition need catalog mode. Which sides changed its rows is left to the session.
static void PlanWholeTable(TablePlan &table, const TableDef *b, const TableDef *o, const TableDef *t, SchemaMode mode) {
	auto &layout = o ? *o : t ? *t : *b;
	auto shown = QuoteName(layout.name);
	SetShape(table, layout, b, o, t);
	table.shape.key.clear();
	for (auto &column : layout.columns) {
		AddColumn(table, column);
	}
	table.whole = true;
	table.merge_rows = false;
	table.ours_redefined = !SameTable(b, o);
	table.theirs_redefined = !SameTable(b, t);
	table.sides_defined_alike = SameTable(o, t);
	// Presence decides the action of every outcome that merges (the contents decide the rest): the
	// name check against views below needs it now.
	table.table_action = !b ? TableAction::ADD : (!o || !t) ? TableAction::DROP : TableAction::NONE;
	if (t) {
		table.theirs_create_sql = t->create_sql;
		table.theirs_indexes.assign(t->indexes.begin(), t->indexes.end());
	}
	if (!b && mode == SchemaMode::STRICT) {
		Mismatch(mode, "table additions/deletions are unsupported (table " + shown + " was added on one side)",
		         "Added tables merge with schema_mode => 'additive' or 'catalog'.");
	}
	if (b && (!o || !t) && mode != SchemaMode::CATALOG) {
		Mismatch(mode, "table additions/deletions are unsupported (table " + shown + " was dropped on one side)",
		         "Removals merge with schema_mode => 'catalog'.");
	}
	if (b && ((o && !o->SameDefinition(*b)) || (t && !t->SameDefinition(*b))) && mode != SchemaMode::CATALOG) {
		Mismatch(mode,
		         "table " + shown + ", which has no primary key, was replaced with another definition on one side",
		         "Replacements of tables without a primary key merge with schema_mode => 'catalog'.");
	}
}

//! The names (catalog keys) of one kind of object over the three inputs.
template <class MEMBER>
static std::set<std::string> AllNames(const CatalogSide &base, const CatalogSide &ours, const CatalogSide &theirs,
                                      MEMBER member) {
	std::set<std::string> names;
	for (auto *side : {&base, &ours, &theirs}) {
		for (auto &entry : side->*member) {
			names.insert(entry.first);
		}
	}
	return names;
}

static void PlanTables(const CatalogSide &base, const CatalogSide &ours, const CatalogSide &theirs, SchemaMode mode,
                       SchemaPlan &plan) {
	for (auto &name : AllNames(base, ours, theirs, &CatalogSide::tables)) {
		auto *b = Find(base.tables, name);
		auto *o = Find(ours.tables, name);
		auto *t = Find(theirs.tables, name);
		TablePlan table;
		if (Keyless(b) || Keyless(o) || Keyless(t)) {
			PlanWholeTable(table, b, o, t, mode);
		} else if (b && o && t) {
			PlanExistingTable(table, *b, *o, *t, mode);
		} else if (!b) {
			PlanAddedTable(table, o, t, mode);
		} else {
			PlanDroppedTable(table, *b, o, t, mode);
		}
		plan.tables.push_back(table);
	}
}
static bool SameView(const ViewDef *a, const ViewDef *b) {
	return (!a && !b) || (a && b && a->sql == b->sql);
}

static ViewAction ActionFor(const ViewDef *base, const ViewDef *result) {
	return !base ? ViewAction::ADD : !result ? ViewAction::DROP : ViewAction::REPLACE;
}

//! A star view returns whatever its tables have: it would silently gain the columns the other side
//! added, so that is a conflict.
static void CheckStarView(ViewPlan &view, const ViewDef &result, const SchemaPlan &plan) {
	for (auto &relation : result.relations) {
		for (auto &table : plan.tables) {
			if (duckdb::StringUtil::Lower(table.shape.name) != relation) {
				continue;
			}
			for (auto &change : table.schema_changes) {
				if (change.source != MergeSide::BOTH && change.source != view.output_side) {
					view.schema_conflicts.push_back(
					    {ErrorCode::VIEW_OUTPUT, change.column_name,
					     "view " + QuoteName(view.name) + " selects * from " + QuoteName(table.shape.name) +
					         ", whose columns the other side changed (" + change.column_name + ")"});
				}
			}
		}
	}
}

static void PlanViews(const CatalogSide &base, const CatalogSide &ours, const CatalogSide &theirs, SchemaMode mode,
                      SchemaPlan &plan) {
	for (auto &name : AllNames(base, ours, theirs, &CatalogSide::views)) {
		auto *b = Find(base.views, name);
		auto *o = Find(ours.views, name);
		auto *t = Find(theirs.views, name);
		ViewPlan view;
		view.name = (o ? o : t ? t : b)->name;
		const ViewDef *result = o;
		view.output_side = MergeSide::OURS;
		if (!SameView(o, b) || !SameView(t, b)) {
			if (mode != SchemaMode::CATALOG) {
				Mismatch(mode, "view " + QuoteName(view.name) + " was created, replaced or dropped on one side",
				         "View changes merge with schema_mode => 'catalog'.");
			}
			if (SameView(o, t)) {
				view.source = MergeSide::BOTH;
			} else if (SameView(o, b)) {
				view.source = MergeSide::THEIRS;
				result = t;
				view.output_side = MergeSide::THEIRS;
				view.stage_apply = true;
			} else if (SameView(t, b)) {
				view.source = MergeSide::OURS;
			} else {
				view.schema_conflicts.push_back({ErrorCode::VIEW_DEFINITION, "",
				                                 "both sides changed view " + QuoteName(view.name) + " differently"});
			}
			view.action = ActionFor(b, result);
		}
		view.sql = result ? result->sql : "";
		if (result && result->has_star && view.schema_conflicts.empty()) {
			CheckStarView(view, *result, plan);
		}
		plan.views.push_back(view);
	}
}

SchemaPlan PlanSchema(const CatalogSide &base, const CatalogSide &ours, const CatalogSide &theirs, SchemaMode mode) {
	SchemaPlan plan;
	PlanTables(base, ours, theirs, mode, plan);
	PlanViews(base, ours, theirs, mode, plan);
	// Tables and views share one namespace: the result cannot hold both under one name.
	for (auto &view : plan.views) {
		for (auto &table : plan.tables) {
			if (!view.sql.empty() && table.table_action != TableAction::DROP &&
			    CatalogKey(table.shape.name) == CatalogKey(view.name)) {
				view.schema_conflicts.push_back(
				    {ErrorCode::MERGE_SCHEMA_CONFLICT, "",
				     "one side has a table and the other a view named " + QuoteName(view.name)});
			}
		}
	}
	return plan;
}

} // namespace differential
