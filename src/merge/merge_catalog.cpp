// Reads a merge input's catalog through DuckDB's own metadata functions and parser, and refuses
// every object the merge cannot compare and recreate exactly (docs/MERGES.md §3, the supported scope).
#include "merge/merge_catalog.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/common/types.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/parser/column_definition.hpp"
#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/parser/statement/create_statement.hpp"
#include "merge/merge_sql.hpp"
#include "merge/supported_scope.hpp"

#include <algorithm>

namespace differential {

using duckdb::LogicalType;
using duckdb::LogicalTypeId;

std::string CatalogKey(const std::string &name) {
	return duckdb::StringUtil::Lower(name);
}

const ColumnDef *TableDef::FindColumn(const std::string &column) const {
	for (auto &c : columns) {
		if (duckdb::StringUtil::CIEquals(c.name, column)) {
			return &c;
		}
	}
	return nullptr;
}

[[noreturn]] static void Unsupported(const std::string &object, const std::string &side, const std::string &why) {
	Fail(ErrorCode::MERGE_UNSUPPORTED,
	     object + " in " + side + " " + why +
	         ", which differential cannot merge (see the supported scope in docs/MERGES.md); nothing was merged. "
	         "Change it on the branches, or merge this data manually with SQL.");
}

//! Why a column type cannot be merged as a plain value (empty `why` when it can): only types whose
//! native equality is exact and needs no extension or collation.
struct TypeProblem {
	std::string why;
	//! A collation: visible only in the table's definition, not in the bound type a query sees.
	bool collation = false;
};

static TypeProblem UnsupportedType(const LogicalType &type) {
	if (type.HasAlias()) {
		return {"has the type " + type.ToString()};
	}
	switch (type.id()) {
	case LogicalTypeId::BOOLEAN:
	case LogicalTypeId::TINYINT:
	case LogicalTypeId::SMALLINT:
	case LogicalTypeId::INTEGER:
	case LogicalTypeId::BIGINT:
	case LogicalTypeId::HUGEINT:
	case LogicalTypeId::UTINYINT:
	case LogicalTypeId::USMALLINT:
	case LogicalTypeId::UINTEGER:
	case LogicalTypeId::UBIGINT:
	case LogicalTypeId::UHUGEINT:
	case LogicalTypeId::FLOAT:
	case LogicalTypeId::DOUBLE:
	case LogicalTypeId::DECIMAL:
	case LogicalTypeId::BLOB:
	case LogicalTypeId::UUID:
	case LogicalTypeId::DATE:
	case LogicalTypeId::TIME:
	case LogicalTypeId::TIME_NS:
	case LogicalTypeId::TIME_TZ:
	case LogicalTypeId::TIMESTAMP:
	case LogicalTypeId::TIMESTAMP_SEC:
	case LogicalTypeId::TIMESTAMP_MS:
	case LogicalTypeId::TIMESTAMP_NS:
	case LogicalTypeId::TIMESTAMP_TZ:
	case LogicalTypeId::TIMESTAMP_TZ_NS:
	case LogicalTypeId::INTERVAL:
		return {};
	case LogicalTypeId::VARCHAR:
		if (duckdb::StringType::GetCollation(type).empty()) {
			return {};
		}
		return {"has a non-default collation", true};
	case LogicalTypeId::LIST:
		return UnsupportedType(duckdb::ListType::GetChildType(type));
	case LogicalTypeId::ARRAY:
		return UnsupportedType(duckdb::ArrayType::GetChildType(type));
	case LogicalTypeId::MAP: {
		auto key = UnsupportedType(duckdb::MapType::KeyType(type));
		return key.why.empty() ? UnsupportedType(duckdb::MapType::ValueType(type)) : key;
	}
	case LogicalTypeId::STRUCT:
	case LogicalTypeId::UNION:
		for (auto &child : duckdb::StructType::GetChildTypes(type)) {
			auto problem = UnsupportedType(child.second);
			if (!problem.why.empty()) {
				return problem;
			}
		}
		return {};
	default:
		return {"has the type " + type.ToString()};
	}
}

//! Generated columns and collations are visible only in the table's definition: parse it. (Other
//! type problems are judged on the bound types, which resolve aliases the definition only names.)
static void CheckDefinition(const std::string &create_sql, const std::string &object, const std::string &side) {
	auto parser = duckdb::Parser::GetBuiltinParser();
	parser.ParseQuery(create_sql);
	auto &info = parser.statements[0]->Cast<duckdb::CreateStatement>().info->Cast<duckdb::CreateTableInfo>();
	for (auto &column : info.columns.Logical()) {
		auto name = QuoteName(object + "." + column.GetName().GetIdentifierName());
		if (column.Generated()) {
			Unsupported("Column " + name, side, "is a generated column");
		}
		auto problem = UnsupportedType(column.Type());
		if (problem.collation) {
			Unsupported("Column " + name, side, problem.why);
		}
	}
}

static std::string InDatabase(const std::string &alias) {
	return " WHERE database_name = " + SqlLiteral(alias);
}

//! Refuses the first object the query lists (its first column names it): "<what> <name> in <side> <why>".
static void RefuseAny(duckdb::Connection &connection, const std::string &query, const std::string &what,
                      const std::string &side, const std::string &why) {
	for (auto &row : QueryRows(connection, query)) {
		Unsupported(what + " " + QuoteName(row.GetBaseValue(0).ToString()), side, why);
	}
}

//! Macros of the input's own catalog, read from its schemas: duckdb_functions() would list every function of every
//! catalog (the system's thousands) before filtering, 18 ms per input, most of a merge's planning.
static void RefuseMacros(duckdb::Connection &connection, const std::string &alias, const std::string &side) {
	std::vector<std::string> macros;
	auto &context = *connection.context;
	context.RunFunctionInTransaction([&]() {
		auto &catalog = duckdb::Catalog::GetCatalog(context, duckdb::Identifier(alias));
		catalog.ScanSchemas(context, [&](duckdb::SchemaCatalogEntry &schema) {
			for (auto type : {duckdb::CatalogType::MACRO_ENTRY, duckdb::CatalogType::TABLE_MACRO_ENTRY}) {
				schema.Scan(context, type, [&](duckdb::CatalogEntry &entry) {
					if (!entry.internal) {
						macros.push_back(entry.name.GetIdentifierName());
					}
				});
			}
		});
	});
	if (!macros.empty()) {
		Unsupported("Macro " + QuoteName(*std::min_element(macros.begin(), macros.end())), side, "exists");
	}
}

//! Schemas besides main, sequences, macros and custom types: none of them is merged.
static void RefuseOtherObjects(duckdb::Connection &connection, const std::string &alias, const std::string &where,
                               const std::string &side) {
	RefuseAny(connection,
	          "SELECT schema_name FROM duckdb_schemas()" + where + " AND NOT internal AND schema_name <> 'main'",
	          "Schema", side, "exists besides main");
	RefuseAny(connection, "SELECT sequence_name FROM duckdb_sequences()" + where, "Sequence", side, "exists");
	RefuseMacros(connection, alias, side);
	RefuseAny(connection, "SELECT type_name FROM duckdb_types()" + where + " AND NOT internal", "Type", side,
	          "is a custom type");
}

//! A table or view (`what`) of a row of duckdb_tables() or duckdb_views(): only main's, without a comment.
static void RequirePlainObject(const std::string &what, const std::string &schema, const std::string &name,
                               const duckdb::Value &comment, const std::string &side) {
	if (schema != "main") {
		Unsupported(what + " " + QuoteName(schema + "." + name), side, "is outside the main schema");
	}
	if (!comment.IsNull()) {
		Unsupported(what + " " + QuoteName(name), side, "has a comment");
	}
}

static void ReadTables(duckdb::Connection &connection, const std::string &where, const std::string &side,
                       CatalogSide &catalog) {
	for (auto &row : QueryRows(connection, "SELECT schema_name, table_name, sql, comment FROM duckdb_tables()" + where +
	                                           " ORDER BY table_name")) {
		auto name = row.GetBaseValue(1).ToString();
		RequirePlainObject("Table", row.GetBaseValue(0).ToString(), name, row.GetBaseValue(3), side);
		auto &table = catalog.tables[CatalogKey(name)];
		table.name = name;
		table.create_sql = row.GetBaseValue(2).ToString();
		CheckDefinition(table.create_sql, name, side);
	}
}

static void ReadColumns(duckdb::Connection &connection, const std::string &alias, const std::string &side,
                        CatalogSide &catalog) {
	for (auto &row : QueryRows(connection, "SELECT c.table_name, c.column_name, c.is_nullable, c.column_default, "
	                                       "c.comment FROM duckdb_columns() c JOIN duckdb_tables() t USING "
	                                       "(database_name, schema_name, table_name) WHERE c.database_name = " +
	                                           SqlLiteral(alias) + " ORDER BY c.table_name, c.column_index")) {
		auto &table = catalog.tables[CatalogKey(row.GetBaseValue(0).ToString())];
		ColumnDef column;
		column.name = row.GetBaseValue(1).ToString();
		column.nullable = row.GetBaseValue(2).GetValue<bool>();
		column.default_sql = row.GetBaseValue(3).IsNull() ? "" : row.GetBaseValue(3).ToString();
		auto object = QuoteName(table.name + "." + column.name);
		if (duckdb::StringUtil::StartsWith(CatalogKey(column.name), "__differential")) {
			Unsupported("Column " + object, side, "uses a name reserved for the merge's own columns");
		}
		if (!row.GetBaseValue(4).IsNull()) {
			Unsupported("Column " + object, side, "has a comment");
		}
		if (!column.default_sql.empty()) {
			auto why = CheckDefault(column.default_sql);
			if (!why.empty()) {
				Unsupported("The default of column " + object, side, why);
			}
		}
		table.columns.push_back(column);
	}
	for (auto &entry : catalog.tables) {
		auto &table = entry.second;
		// Bound types, as a query sees them: aliases like JSON and resolved ENUMs show here.
		auto probe = RunSql(connection, "SELECT * FROM " + SqlIdentifier(alias) + ".main." + SqlIdentifier(table.name) +
		                                    " LIMIT 0");
		for (size_t i = 0; i < probe->GetTypes().size() && i < table.columns.size(); i++) {
			auto problem = UnsupportedType(probe->GetTypes()[i]);
			if (!problem.why.empty()) {
				Unsupported("Column " + QuoteName(table.name + "." + table.columns[i].name), side, problem.why);
			}
			table.columns[i].type = probe->GetTypes()[i].ToString();
			table.columns[i].nested = probe->GetTypes()[i].IsNested();
			table.columns[i].fields = FieldTreeOf(table.columns[i].name, probe->GetTypes()[i]);
		}
	}
}

//! Marks the table's columns that `names` lists as constrained.
static void MarkConstrained(TableDef &table, const std::vector<std::string> &names) {
	for (auto &c : table.columns) {
		for (auto &name : names) {
			c.constrained = c.constrained || duckdb::StringUtil::CIEquals(c.name, name);
		}
	}
}

static void ReadConstraints(duckdb::Connection &connection, const std::string &where, const std::string &side,
                            CatalogSide &catalog) {
	for (auto &row :
	     QueryRows(connection, "SELECT table_name, constraint_type, constraint_column_names, expression, "
	                           "constraint_text, referenced_table, referenced_column_names FROM duckdb_constraints()" +
	                               where + " ORDER BY table_name, constraint_index")) {
		auto found = catalog.tables.find(CatalogKey(row.GetBaseValue(0).ToString()));
		if (found == catalog.tables.end()) {
			continue;
		}
		auto &table = found->second;
		auto type = row.GetBaseValue(1).ToString();
		std::vector<std::string> columns;
		auto names = row.GetBaseValue(2);
		for (auto &c : duckdb::ListValue::GetChildren(names)) {
			columns.push_back(c.ToString());
		}
		if (type == "FOREIGN KEY") {
			ForeignKeyDef key {columns, row.GetBaseValue(5).ToString(), {}};
			auto referenced = row.GetBaseValue(6);
			for (auto &c : duckdb::ListValue::GetChildren(referenced)) {
				key.parent_columns.push_back(c.ToString());
			}
			table.foreign_keys.push_back(std::move(key));
		}
		if (type == "NOT NULL") {
			continue;
		}
		if (type == "PRIMARY KEY") {
			table.key = columns;
		} else {
			table.constraints.insert(row.GetBaseValue(4).ToString());
		}
		if (type == "CHECK") {
			auto why = CheckCheckConstraint(row.GetBaseValue(3).ToString());
			if (!why.empty()) {
				Unsupported("A CHECK constraint of table " + QuoteName(table.name), side, why);
			}
		}
		MarkConstrained(table, columns);
	}
}

static void ReadIndexes(duckdb::Connection &connection, const std::string &where, const std::string &side,
                        CatalogSide &catalog) {
	for (auto &row :
	     QueryRows(connection, "SELECT table_name, index_name, expressions, sql FROM duckdb_indexes()" + where)) {
		auto found = catalog.tables.find(CatalogKey(row.GetBaseValue(0).ToString()));
		if (found == catalog.tables.end()) {
			continue;
		}
		// Plain column indexes list their columns as "[a, b]".
		auto expressions = row.GetBaseValue(2).ToString();
		MarkConstrained(found->second, duckdb::StringUtil::Split(expressions.substr(1, expressions.size() - 2), ", "));
		if (expressions.find('(') != std::string::npos) {
			Unsupported("Index " + QuoteName(row.GetBaseValue(1).ToString()), side, "is an expression index");
		}
		found->second.indexes.insert(row.GetBaseValue(3).ToString());
	}
}

//! Rows are matched across snapshots by primary key, so a key column must be plain. A table without
//! a key is merged whole (schema_plan.cpp): its rows are never matched.
static void RequirePlainKeys(const CatalogSide &catalog, const std::string &side) {
	for (auto &entry : catalog.tables) {
		auto &table = entry.second;
		for (auto &k : table.key) {
			auto column = table.FindColumn(k);
			if (column && column->nested) {
				Unsupported("Table " + QuoteName(table.name), side, "has a nested primary key column");
			}
		}
	}
}

//! A merge checks foreign keys on rows matched by key and applies tables parents first: a child
//! needs a key, a parent is referenced by its key, and no table may reach itself (DuckDB only lets a
//! table reference itself; tables created in turn cannot reference each other).
static void RequireMergeableForeignKeys(const CatalogSide &catalog, const std::string &side) {
	for (auto &entry : catalog.tables) {
		auto &table = entry.second;
		for (auto &key : table.foreign_keys) {
			auto subject = "Table " + QuoteName(table.name);
			if (table.key.empty()) {
				Unsupported(subject, side, "has a foreign key but no primary key (merges match its rows by key)");
			}
			if (CatalogKey(key.parent) == entry.first) {
				Unsupported(subject, side,
				            "has a foreign key that references the table itself (a cycle: merges apply parents before "
				            "children)");
			}
			auto parent = catalog.tables.find(CatalogKey(key.parent));
			std::set<std::string> parent_key, referenced;
			if (parent != catalog.tables.end()) {
				for (auto &k : parent->second.key) {
					parent_key.insert(CatalogKey(k));
				}
			}
			for (auto &c : key.parent_columns) {
				referenced.insert(CatalogKey(c));
			}
			if (parent_key.empty() || parent_key != referenced) {
				Unsupported(subject, side,
				            "has a foreign key to " + QuoteName(key.parent) +
				                " that does not reference its primary key (a UNIQUE column is not matched by merges)");
			}
		}
	}
}

static void ReadViews(duckdb::Connection &connection, const std::string &where, const std::string &side,
                      CatalogSide &catalog) {
	for (auto &row : QueryRows(connection, "SELECT schema_name, view_name, sql, comment FROM duckdb_views()" + where +
	                                           " AND NOT internal ORDER BY view_name")) {
		auto name = row.GetBaseValue(1).ToString();
		RequirePlainObject("View", row.GetBaseValue(0).ToString(), name, row.GetBaseValue(3), side);
		ViewDef view;
		view.name = name;
		view.sql = row.GetBaseValue(2).ToString();
		auto scope = CheckView(view.sql);
		if (!scope.unsupported.empty()) {
			Unsupported("View " + QuoteName(name), side, scope.unsupported);
		}
		view.relations = scope.relations;
		view.has_star = scope.has_star;
		catalog.views[CatalogKey(name)] = view;
	}
}

CatalogSide ReadCatalog(duckdb::Connection &connection, const std::string &alias, const std::string &side) {
	CatalogSide catalog;
	auto where = InDatabase(alias);
	RefuseOtherObjects(connection, alias, where, side);
	ReadTables(connection, where, side, catalog);
	ReadColumns(connection, alias, side, catalog);
	ReadConstraints(connection, where, side, catalog);
	ReadIndexes(connection, where, side, catalog);
	RequirePlainKeys(catalog, side);
	RequireMergeableForeignKeys(catalog, side);
	ReadViews(connection, where, side, catalog);
	return catalog;
}

} // namespace differential
