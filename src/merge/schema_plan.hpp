// The combined catalog of a merge under its schema mode (strict, additive, catalog): which tables
// and columns the result has, what staging must change in ours' copy, and the schema conflicts.
#pragma once

#include "merge/merge_catalog.hpp"
#include "merge/merge_states.hpp"
#include "merge/table_merge.hpp"

#include <optional>
#include <string>
#include <vector>

namespace differential {

//! Parses the schema_mode argument (NULL means strict); refuses other words with invalid_argument.
SchemaMode ParseSchemaMode(const std::optional<std::string> &mode);

struct SchemaChange {
	std::string column_name;
	//! ours, theirs or both: the side(s) that made the change.
	MergeSide source = MergeSide::NONE;
	std::string sql_type;
	//! ADD or DROP
	TableAction action = TableAction::NONE;
};

struct SchemaConflict {
	//! Also the error code a merge stops with (ToString).
	ErrorCode kind;
	std::string column_name;
	std::string message;
};

struct TablePlan {
	//! The result table's columns (in the result's order) and key, and which inputs have which columns.
	TableShape shape;
	//! ADD, DROP, or NONE when the table exists in the base and the result.
	TableAction table_action = TableAction::NONE;
	MergeSide action_source = MergeSide::NONE;
	std::vector<SchemaChange> schema_changes;
	std::vector<SchemaConflict> schema_conflicts;
	//! False for a dropped table: its rows are not merged.
	bool merge_rows = true;
	// What staging does to ours' copy, before the rows are applied.
	std::string stage_create_sql;
	std::vector<std::string> stage_indexes;
	bool stage_drop = false;
	std::vector<ColumnDef> stage_add_columns;
	std::vector<std::string> stage_drop_columns;
	//! A removal on one side needs the other side to have left the object as in the base; these name
	//! the side whose data must be compared with the base (OURS or THEIRS; NONE: nothing to check).
	MergeSide table_drop_check = MergeSide::NONE;
	std::vector<std::pair<std::string, MergeSide>> column_drop_checks;
	//! A table without a primary key in some input: its rows cannot be matched, so it is taken whole
	//! from the one side that changed it. Planning knows which sides changed its presence or
	//! definition; the session compares contents and decides (DecideWholeTables).
	bool whole = false;
	bool ours_redefined = false;
	bool theirs_redefined = false;
	//! Ours and theirs hold the same definition (or both lack the table).
	bool sides_defined_alike = false;
	//! Theirs' CREATE TABLE and CREATE INDEX statements, staged when theirs' version is taken.
	std::string theirs_create_sql;
	std::vector<std::string> theirs_indexes;
	//! Staging copies theirs' rows into the table it created from theirs' definition.
	bool stage_copy_rows = false;
	//! A whole table's changes as whole rows (inserts: rows only the side has; deletes: rows only the
	//! base has; no updates), and the sides left exactly as in the base.
	TableMergeCounts whole_counts;
	std::vector<MergeSide> unchanged_sides;
};

struct ViewPlan {
	std::string name;
	ViewAction action = ViewAction::NONE;
	MergeSide source = MergeSide::NONE;
	//! The result's definition (empty when the result has no such view).
	std::string sql;
	//! The side whose version the result keeps: its output columns are what the result must return.
	MergeSide output_side = MergeSide::OURS;
	//! Staging must apply theirs' version to ours' copy.
	bool stage_apply = false;
	std::vector<SchemaConflict> schema_conflicts;
};

struct SchemaPlan {
	std::vector<TablePlan> tables;
	std::vector<ViewPlan> views;
	size_t SchemaConflicts() const;
	const SchemaConflict *FirstConflict() const;
};

//! Plans the result's catalog; refuses with merge_unsupported what the mode does not merge.
SchemaPlan PlanSchema(const CatalogSide &base, const CatalogSide &ours, const CatalogSide &theirs, SchemaMode mode);

} // namespace differential
