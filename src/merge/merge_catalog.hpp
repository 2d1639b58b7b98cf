// The catalog of one merge input as the merge sees it (tables with columns, keys and constraints,
// views), read from an attached snapshot; anything outside the supported scope stops the merge.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "merge/struct_fields.hpp"

namespace duckdb {
class Connection;
}

namespace differential {

//! DuckDB names are case-insensitive: catalogs are keyed, and names compared, by their lowercase form.
std::string CatalogKey(const std::string &name);

struct ColumnDef {
	std::string name;
	//! The SQL type as DuckDB prints it (usable in DDL).
	std::string type;
	bool nullable = true;
	//! The DEFAULT expression, empty when there is none.
	std::string default_sql;
	//! Part of the key, a UNIQUE or CHECK constraint, or an index: such a column cannot simply be removed.
	bool constrained = false;
	bool nested = false;
	//! The bound type's STRUCT fields (field-level merges).
	FieldTree fields;
	bool operator==(const ColumnDef &other) const {
		return CatalogKey(name) == CatalogKey(other.name) && type == other.type && nullable == other.nullable &&
		       default_sql == other.default_sql && constrained == other.constrained;
	}
	bool operator!=(const ColumnDef &other) const {
		return !(*this == other);
	}
};

//! A FOREIGN KEY of a table: its columns reference the primary key columns `parent_columns` of `parent`.
struct ForeignKeyDef {
	std::vector<std::string> columns;
	std::string parent;
	std::vector<std::string> parent_columns;
};

struct TableDef {
	std::string name;
	std::vector<ColumnDef> columns;
	std::vector<std::string> key;
	//! CREATE TABLE as DuckDB renders it, used to create a table one side added.
	std::string create_sql;
	//! Table-level constraints other than the key and NOT NULL (UNIQUE, CHECK), as text.
	std::set<std::string> constraints;
	//! CREATE INDEX statements.
	std::set<std::string> indexes;
	//! Also listed in `constraints` (as text), so sides must agree on them like on any constraint.
	std::vector<ForeignKeyDef> foreign_keys;
	const ColumnDef *FindColumn(const std::string &column) const;
	bool SameDefinition(const TableDef &other) const {
		return create_sql == other.create_sql && indexes == other.indexes;
	}
};

struct ViewDef {
	std::string name;
	std::string sql;
	std::vector<std::string> relations;
	bool has_star = false;
};

//! Keyed by CatalogKey; each definition keeps its own spelling.
struct CatalogSide {
	std::map<std::string, TableDef> tables;
	std::map<std::string, ViewDef> views;
};

//! Reads the catalog of the attached snapshot `alias` (`side` names it in messages: "the base",
//! "ours", "theirs"). Fails with merge_unsupported naming the first object outside the scope.
CatalogSide ReadCatalog(duckdb::Connection &connection, const std::string &alias, const std::string &side);

} // namespace differential
