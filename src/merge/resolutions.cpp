// Resolution tables are data, not flags: every conflict needs an explicit decision, a decision must
// match a conflict and suit its kind, and decisions never change a key (the key identifies the conflict).
#include "merge/resolutions.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/catalog/catalog_entry.hpp"
#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/catalog/entry_lookup_info.hpp"
#include "duckdb/common/serializer/binary_deserializer.hpp"
#include "duckdb/common/serializer/binary_serializer.hpp"
#include "duckdb/common/serializer/memory_stream.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/main/connection.hpp"
#include "duckdb/main/prepared_statement.hpp"
#include "duckdb/parser/qualified_name.hpp"
#include "merge/merge_sql.hpp"
#include "merge/request_identity.hpp"

namespace differential {

using duckdb::LogicalType;
using duckdb::StringUtil;
using duckdb::Value;

static const char *ACTION_COLUMN = "_merge_action";
static const char *COLUMNS_COLUMN = "_merge_columns";

[[noreturn]] static void Invalid(const std::string &message) {
	Fail(ErrorCode::MERGE_RESOLUTION_INVALID,
	     message + "; nothing was merged. See the resolution table rules in docs/MERGES.md.");
}

//! 'main.orders' and 'orders' both name the main schema's table orders; quoting works as in SQL.
static std::string TargetTable(const std::string &name) {
	duckdb::QualifiedName parsed;
	std::string error;
	if (duckdb::QualifiedName::TryParse(name, parsed, error)) {
		auto &path = parsed.Path();
		if (path.size() == 2 && StringUtil::Lower(path[0].GetIdentifierName()) == "main") {
			return path[1].GetIdentifierName();
		}
		if (path.size() == 1) {
			return path[0].GetIdentifierName();
		}
	}
	Fail(ErrorCode::INVALID_ARGUMENT,
	     "resolution_tables key " + QuoteName(name) +
	         " does not name a table of the main schema; write it as 'main.<table>' (merges cover the main schema).");
}

ResolutionMapping ParseResolutionMapping(const Value &map) {
	ResolutionMapping mapping;
	if (map.IsNull()) {
		return mapping;
	}
	if (map.type().id() != duckdb::LogicalTypeId::MAP) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "resolution_tables must be a MAP from target table to resolution table, e.g. map {'main.orders': "
		     "'memory.main.decisions'}.");
	}
	for (auto &entry : duckdb::ListValue::GetChildren(map)) {
		auto &pair = duckdb::StructValue::GetChildren(entry);
		if (pair[0].IsNull() || pair[1].IsNull()) {
			Fail(ErrorCode::INVALID_ARGUMENT, "resolution_tables has a NULL key or value.");
		}
		ResolutionSource source;
		source.table = TargetTable(pair[0].ToString());
		source.written = pair[1].ToString();
		mapping.push_back(source);
	}
	std::sort(mapping.begin(), mapping.end(),
	          [](const ResolutionSource &a, const ResolutionSource &b) { return a.table < b.table; });
	for (size_t i = 1; i < mapping.size(); i++) {
		if (StringUtil::CIEquals(mapping[i].table, mapping[i - 1].table)) {
			Fail(ErrorCode::INVALID_ARGUMENT,
			     "resolution_tables names table " + QuoteName(mapping[i].table) + " twice; give one table each.");
		}
	}
	return mapping;
}

std::string CanonicalMapping(const ResolutionMapping &mapping) {
	std::vector<std::pair<std::string, std::string>> pairs;
	for (auto &entry : mapping) {
		pairs.emplace_back(entry.table, entry.written);
	}
	return CanonicalPairs(pairs);
}

void ResolveResolutionSources(duckdb::ClientContext &context, ResolutionMapping &mapping) {
	for (auto &entry : mapping) {
		auto written = QuoteName(entry.written);
		duckdb::QualifiedName name;
		std::string error;
		if (!duckdb::QualifiedName::TryParse(entry.written, name, error)) {
			entry.problem = "Resolution table " + written + " is not a table name (" + error + ")";
			continue;
		}
		auto found = duckdb::Catalog::GetEntry(context, duckdb::EntryLookupInfo(duckdb::CatalogType::TABLE_ENTRY, name),
		                                       duckdb::OnEntryNotFound::RETURN_NULL);
		if (!found) {
			entry.problem = "Resolution table " + written + " does not exist";
		} else if (found->type != duckdb::CatalogType::TABLE_ENTRY) {
			entry.problem = "Resolution table " + written + " is a view; decisions must be a committed table";
		} else if (found->temporary) {
			entry.problem = "Resolution table " + written +
			                " is a temporary table, which the merge cannot read; use a committed table of a database "
			                "(e.g. memory.main.decisions)";
		} else {
			entry.resolved = SqlIdentifier(found->ParentCatalog().GetName().GetIdentifierName()) + "." +
			                 SqlIdentifier(found->ParentSchema().name.GetIdentifierName()) + "." +
			                 SqlIdentifier(found->name.GetIdentifierName());
		}
	}
}

std::vector<FrozenResolution> ReadResolutionTables(duckdb::Connection &connection, const ResolutionMapping &mapping,
                                                   const std::map<std::string, TableShape> &tables) {
	std::vector<FrozenResolution> out;
	for (auto &entry : mapping) {
		const TableShape *shape = nullptr;
		for (auto &table : tables) {
			if (StringUtil::CIEquals(table.first, entry.table)) {
				shape = &table.second;
			}
		}
		if (!shape) {
			Invalid("resolution_tables maps " + QuoteName("main." + entry.table) +
			        ", which is not a table whose rows this merge compares");
		}
		if (!entry.problem.empty()) {
			Invalid(entry.problem);
		}
		// Resolved at bind to a quoted catalog.schema.table; read here with only committed rows visible.
		auto &source = entry.resolved;
		FrozenResolution resolution;
		resolution.table = shape->name;
		resolution.key = shape->key;
		// The alias names the whole row; a column may be named like any short alias.
		auto type = RunSql(connection, "SELECT __differential_row FROM " + source + " AS __differential_row LIMIT 0")
		                ->GetTypes()[0];
		auto rows = RunSql(connection, "SELECT list(__differential_row) FROM " + source + " AS __differential_row");
		for (auto &row : *rows) {
			resolution.rows = row.GetBaseValue(0);
		}
		if (resolution.rows.IsNull()) {
			resolution.rows = Value::LIST(type, {});
		}
		out.push_back(resolution);
	}
	return out;
}

std::string SerializeResolution(const FrozenResolution &resolution) {
	duckdb::vector<Value> key;
	for (auto &k : resolution.key) {
		key.push_back(Value(k));
	}
	auto value = Value::STRUCT({{"key", Value::LIST(LogicalType::VARCHAR, key)}, {"rows", resolution.rows}});
	duckdb::MemoryStream stream;
	duckdb::BinarySerializer::Serialize(value, stream);
	return std::string(reinterpret_cast<const char *>(stream.GetData()), stream.GetPosition());
}

FrozenResolution DeserializeResolution(const std::string &table, const std::string &blob) {
	duckdb::MemoryStream stream(reinterpret_cast<duckdb::data_ptr_t>(const_cast<char *>(blob.data())), blob.size());
	duckdb::BinaryDeserializer deserializer(stream);
	deserializer.Begin();
	auto value = Value::Deserialize(deserializer);
	deserializer.End();
	auto &fields = duckdb::StructValue::GetChildren(value);
	FrozenResolution resolution;
	resolution.table = table;
	for (auto &k : duckdb::ListValue::GetChildren(fields[0])) {
		resolution.key.push_back(k.ToString());
	}
	resolution.rows = fields[1];
	return resolution;
}

//! The resolution table must have exactly the result table's columns, with the same types, plus the
//! two control columns.
static void CheckColumns(const TableShape &table, const FrozenResolution &resolution) {
	auto &row_type = duckdb::ListType::GetChildType(resolution.rows.type());
	auto &fields = duckdb::StructType::GetChildTypes(row_type);
	std::map<std::string, std::string> found;
	for (auto &field : fields) {
		found[StringUtil::Lower(field.first.GetIdentifierName())] = field.second.ToString();
	}
	auto where = "Resolution table for " + QuoteName("main." + table.name);
	std::map<std::string, std::string> expected;
	for (size_t i = 0; i < table.columns.size(); i++) {
		expected[StringUtil::Lower(table.columns[i])] = table.types[i];
	}
	expected[ACTION_COLUMN] = "VARCHAR";
	expected[COLUMNS_COLUMN] = "MAP(VARCHAR, VARCHAR)";
	for (auto &column : expected) {
		auto it = found.find(column.first);
		if (it == found.end()) {
			Invalid(where + " has no column " + QuoteName(column.first) + " (it needs the table's columns plus " +
			        ACTION_COLUMN + " VARCHAR and " + COLUMNS_COLUMN + " MAP(VARCHAR, VARCHAR))");
		}
		if (it->second != column.second) {
			Invalid(where + ": column " + QuoteName(column.first) + " is " + it->second + ", the table's is " +
			        column.second);
		}
	}
	for (auto &column : found) {
		if (!expected.count(column.first)) {
			Invalid(where + " has column " + QuoteName(column.first) + ", which the table does not have");
		}
	}
}

//! Runs a check that selects offending keys; the first one stops the merge with `problem`.
static void Refuse(duckdb::Connection &connection, const std::string &query, const std::string &table,
                   const std::string &problem) {
	auto result = RunSql(connection, query + " LIMIT 1");
	for (auto &row : *result) {
		Invalid("Decision for key (" + row.GetBaseValue(0).ToString() + ") in the resolution table for " +
		        QuoteName("main." + table) + " " + problem);
	}
}

//! The decisions as a scratch table: k_i (key), r_i (the row's values), action and cols.
static void CreateScratch(duckdb::Connection &connection, const TableShape &table, const FrozenResolution &resolution,
                          const std::string &scratch) {
	auto values = table.ValueColumns();
	std::vector<std::string> select;
	for (size_t i = 0; i < table.key.size(); i++) {
		select.push_back("u." + SqlIdentifier(table.key[i]) + " AS " + Numbered("k_", i));
	}
	for (size_t i = 0; i < values.size(); i++) {
		select.push_back("u." + SqlIdentifier(values[i]) + " AS " + Numbered("r_", i));
	}
	select.push_back("u." + SqlIdentifier(ACTION_COLUMN) + " AS action");
	select.push_back("u." + SqlIdentifier(COLUMNS_COLUMN) + " AS cols");
	auto prepared = connection.Prepare("CREATE TEMP TABLE " + scratch + " AS SELECT " + JoinSql(select, ", ", "") +
	                                   " FROM (SELECT unnest($1) AS u)");
	if (prepared->HasError()) {
		ThrowStatementError(prepared->GetErrorObject());
	}
	duckdb::vector<Value> parameters {resolution.rows};
	auto created = prepared->Execute(parameters);
	if (created->HasError()) {
		ThrowStatementError(created->GetErrorObject());
	}
}

//! The SQL pieces that match decisions (r) with their conflicts (d) by key.
struct DecisionMatch {
	std::vector<std::string> keys;
	std::vector<std::string> key_text;
	std::string on;
	std::string key_sql;
	std::string conflicts;
};

static DecisionMatch MatchByKey(const TableShape &table, const std::string &decisions) {
	DecisionMatch match;
	std::vector<std::string> equal;
	for (size_t i = 0; i < table.key.size(); i++) {
		match.keys.push_back(Numbered("k_", i));
		equal.push_back("r." + Numbered("k_", i) + " = d." + Numbered("k_", i));
		match.key_text.push_back("r." + Numbered("k_", i) + "::VARCHAR");
	}
	match.on = JoinSql(equal, " AND ", "true");
	match.key_sql = "concat_ws(', ', " + JoinSql(match.key_text, ", ", "") + ")";
	match.conflicts = "(SELECT * FROM " + decisions + " WHERE action LIKE 'conflict:%')";
	return match;
}

//! SQL: the _merge_columns key `key` decides the conflict part `part`: it names it, or (merging STRUCTs field by
//! field) a STRUCT that holds it, deciding all of its conflicting fields at once.
static std::string Covers(const TableShape &table, const std::string &key, const std::string &part) {
	if (table.nested_mode != NestedMode::FIELDS) {
		return part + " = " + key;
	}
	return "(" + part + " = " + key + " OR starts_with(" + part + ", " + key + " || '.'))";
}

static const char *UNMATCHED = "matches no conflict of this merge (decisions cannot change rows that merge on their "
                               "own; a foreign key decision must name a violating child row or a missing parent row)";

//! Every decision must be well formed, match a conflict of this merge and suit its kind.
static void RefuseInvalidDecisions(duckdb::Connection &connection, const TableShape &table, const std::string &r,
                                   const DecisionMatch &m, bool defer_unmatched) {
	auto from = " FROM " + r + " r";
	auto joined = from + " JOIN " + m.conflicts + " d ON " + m.on;
	Refuse(connection,
	       "SELECT " + m.key_sql + from + " WHERE " + JoinSql(m.key_text, " IS NULL OR ", "false") + " IS NULL",
	       table.name, "has a NULL key column");
	Refuse(connection, "SELECT " + m.key_sql + from + " GROUP BY " + JoinSql(m.keys, ", ", "") + " HAVING count(*) > 1",
	       table.name, "appears more than once");
	Refuse(connection,
	       "SELECT " + m.key_sql + from +
	           " WHERE action IS NULL OR action NOT IN ('cells', 'ours', 'theirs', 'delete', 'custom')",
	       table.name, "has a _merge_action other than cells, ours, theirs, delete or custom");
	if (!defer_unmatched) {
		Refuse(connection,
		       "SELECT " + m.key_sql + from + " WHERE NOT EXISTS (SELECT 1 FROM " + m.conflicts + " d WHERE " + m.on +
		           ")",
		       table.name, UNMATCHED);
	}
	Refuse(connection, "SELECT " + m.key_sql + joined + " WHERE (d.action = 'conflict:cell') <> (r.action = 'cells')",
	       table.name,
	       "does not suit its conflict: a cell conflict takes 'cells', an insert_insert or delete_update conflict "
	       "takes ours, theirs, delete or custom");
	Refuse(connection,
	       "SELECT " + m.key_sql + joined +
	           " WHERE r.action = 'cells' AND (cols IS NULL OR len([c FOR c IN map_keys(cols) IF "
	           "NOT len([x FOR x IN d.conflict_columns IF " +
	           Covers(table, "c", "x") +
	           "]) > 0]) > 0 OR len([v FOR v IN map_values(cols) IF v IS NULL OR v NOT IN ('ours', 'theirs', "
	           "'custom')]) > 0)",
	       table.name,
	       "has _merge_columns that name a column (or field) without a conflict or choose other than ours, theirs or "
	       "custom");
	Refuse(connection,
	       "SELECT " + m.key_sql + from + " WHERE r.action <> 'cells' AND cols IS NOT NULL AND cardinality(cols) > 0",
	       table.name, "has _merge_columns, which only a 'cells' decision takes (leave it NULL)");
}

//! Settles the conflicts the decisions cover (rows of `decisions` that `which` selects): their merged values,
//! action and `resolved`.
static void SettleConflicts(duckdb::Connection &connection, const TableShape &table, const std::string &decisions,
                            const std::string &r, const DecisionMatch &m, const std::string &which) {
	auto values = table.ValueColumns();
	std::vector<std::string> set;
	auto choice = [](const std::string &path) {
		return "r.cols[" + SqlLiteral(path) + "]";
	};
	for (size_t i = 0; i < values.size(); i++) {
		CellChoice in {"d." + Numbered("b_", i), "d." + Numbered("o_", i), "d." + Numbered("t_", i),
		               "r." + Numbered("r_", i), choice};
		auto merged = "d." + Numbered("m_", i);
		auto cells = ResolvedCell(table.FieldsOf(values[i]), values[i], in);
		set.push_back(Numbered("m_", i) + " = CASE r.action WHEN 'cells' THEN CASE WHEN d." + Numbered("c_", i) +
		              " THEN " + cells + " ELSE " + merged + " END WHEN 'theirs' THEN " + in.t +
		              " WHEN 'custom' THEN " + in.custom + " ELSE " + merged + " END");
	}
	set.push_back("action = CASE r.action WHEN 'cells' THEN 'update' WHEN 'ours' THEN 'keep' WHEN 'theirs' THEN "
	              "CASE WHEN d.in_t AND d.in_o THEN 'update' WHEN d.in_t THEN 'insert' WHEN d.in_o THEN 'delete' "
	              "ELSE 'keep' END WHEN 'delete' THEN CASE WHEN d.in_o THEN 'delete' ELSE 'keep' END "
	              "ELSE CASE WHEN d.in_o THEN 'update' ELSE 'insert' END END");
	set.push_back("resolved = true");
	RunSql(connection, "UPDATE " + decisions + " AS d SET " + JoinSql(set, ", ", "") + " FROM " + r + " r WHERE " +
	                       m.on + " AND " + which);
}

//! The row conflicts a decision settles: a 'cells' decision settles its row only when it covers every
//! conflicting column; otherwise the conflict stays, and the merge refuses with merge_conflict.
static std::string SettledRowConflicts(const TableShape &table) {
	return "d.action LIKE 'conflict:%' AND (r.action <> 'cells' OR len([x FOR x IN d.conflict_columns IF NOT "
	       "len([c FOR c IN map_keys(r.cols) IF " +
	       Covers(table, "c", "x") + "]) > 0]) = 0)";
}

bool ApplyResolution(duckdb::Connection &connection, const TableShape &table, const std::string &decisions,
                     const FrozenResolution &resolution, const std::string &scratch, bool defer_unmatched) {
	CheckColumns(table, resolution);
	auto r = SqlIdentifier(scratch);
	CreateScratch(connection, table, resolution, r);
	auto match = MatchByKey(table, decisions);
	RefuseInvalidDecisions(connection, table, r, match, defer_unmatched);
	SettleConflicts(connection, table, decisions, r, match, SettledRowConflicts(table));
	// Decisions that matched a row conflict (settled now, or still a conflict) are done with; the rest waits
	// for the foreign key check (a decision for a violating child or a missing parent).
	if (defer_unmatched) {
		RunSql(connection, "DELETE FROM " + r + " r WHERE EXISTS (SELECT 1 FROM " + decisions + " d WHERE " + match.on +
		                       " AND (d.action LIKE 'conflict:%' OR d.resolved))");
		if (ScalarInt(connection, "SELECT count(*) FROM " + r) > 0) {
			return true;
		}
	}
	RunSql(connection, "DROP TABLE " + r);
	return false;
}

int64_t SettleDeferredDecisions(duckdb::Connection &connection, const TableShape &table, const std::string &decisions,
                                const std::string &scratch, const std::string &targets) {
	auto r = SqlIdentifier(scratch);
	auto match = MatchByKey(table, decisions);
	std::vector<std::string> on_target;
	for (size_t i = 0; i < table.key.size(); i++) {
		on_target.push_back("__g." + Numbered("__differential_k", i) + " = r." + Numbered("k_", i));
	}
	auto targeted = "(SELECT r.*, __g.role FROM " + r + " r JOIN " + targets + " __g ON " +
	                JoinSql(on_target, " AND ", "true") + ")";
	auto count = ScalarInt(connection, "SELECT count(*) FROM " + targeted);
	if (count == 0) {
		return 0;
	}
	Refuse(
	    connection, "SELECT " + match.key_sql + " FROM " + targeted + " r WHERE role = 'child' AND action = 'cells'",
	    table.name,
	    "does not suit its conflict: a foreign_key_violation takes ours, theirs, delete or custom for the child row");
	Refuse(connection,
	       "SELECT " + match.key_sql + " FROM " + targeted + " r JOIN " + decisions + " d ON " + match.on +
	           " WHERE r.role = 'parent' AND NOT ((r.action = 'ours' AND d.in_o) OR (r.action = 'theirs' AND d.in_t) "
	           "OR r.action = 'custom')",
	       table.name,
	       "restores a missing parent row from a side that does not have it: take it from ours or theirs where that "
	       "side has the row, or give its values with custom");
	SettleConflicts(connection, table, decisions, targeted, match, "true");
	RunSql(connection, "DELETE FROM " + r + " r WHERE EXISTS (SELECT 1 FROM " + targets + " __g WHERE " +
	                       JoinSql(on_target, " AND ", "true") + ")");
	return count;
}

void RefuseDeferredDecisions(duckdb::Connection &connection, const TableShape &table, const std::string &scratch) {
	auto r = SqlIdentifier(scratch);
	Refuse(connection, "SELECT " + MatchByKey(table, r).key_sql + " FROM " + r + " r", table.name, UNMATCHED);
	RunSql(connection, "DROP TABLE " + r);
}

} // namespace differential
