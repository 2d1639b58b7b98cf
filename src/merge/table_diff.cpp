// The diff is one statement DuckDB plans, sorts and streams: nothing is materialized here, so a diff
// of any size costs what DuckDB's sort costs. Reading the two sides' definitions first lets the
// statement be typed before it runs (a table function declares its columns at bind).
#include "merge/table_diff.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/sql_quote.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/common/types/value.hpp"
#include "duckdb/main/connection.hpp"
#include "merge/merge_sql.hpp"

#include <algorithm>
#include <atomic>
#include <unistd.h>

namespace differential {

using duckdb::Value;

//! A column of the diff's own: a table column of this name would make `b.<it>` ambiguous.
static const char *PRESENT = "__differential_present";

int64_t ResolveDiffVersion(MetadataStore &metadata, const std::string &database, const Value &version,
                           const std::string &what) {
	if (version.IsNull()) {
		Fail(ErrorCode::INVALID_ARGUMENT,
		     "The " + what + " version must not be NULL. Pass a snapshot id (an integer) or a branch name.");
	}
	if (version.type().IsIntegral()) {
		auto id = version.DefaultCastAs(duckdb::LogicalType::BIGINT).GetValue<int64_t>();
		metadata.history.RequireKeptSnapshot(database, id, "differential_snapshots('" + database + "')");
		return id;
	}
	if (version.type().id() == duckdb::LogicalTypeId::VARCHAR) {
		auto branch = version.ToString();
		ValidateName("branch", branch);
		return metadata.history.RequireBranchHead(database, branch, "a diff reads");
	}
	Fail(ErrorCode::INVALID_ARGUMENT, "The " + what + " version is a " + version.type().ToString() +
	                                      "; pass a snapshot id (an integer) or a branch name (a string).");
}

//! `schema.table`, or `table` in schema main.
static std::pair<std::string, std::string> SplitTableName(const std::string &table) {
	auto dot = table.find('.');
	if (dot == std::string::npos) {
		return {"main", table};
	}
	return {table.substr(0, dot), table.substr(dot + 1)};
}

std::string DiffVersion::Describe() const {
	return attached.empty() ? "snapshot " + std::to_string(snapshot) : "the working state of " + QuoteName(attached);
}

TableDiff::TableDiff(duckdb::DatabaseInstance &instance, const std::string &repository_p, const std::string &database_p,
                     const DiffVersion &from_version, const DiffVersion &to_version, const std::string &table)
    : connection(std::make_unique<duckdb::Connection>(instance)), repository(repository_p), database(database_p) {
	static std::atomic<int64_t> counter {0};
	auto tag = std::to_string(getpid()) + "-" + std::to_string(++counter);
	auto name = SplitTableName(table);
	try {
		from_alias = Open("__diff_from@" + tag, from_version);
		// DuckDB opens a database file once per instance: equal versions share one attachment.
		to_alias = to_version == from_version ? from_alias : Open("__diff_to@" + tag, to_version);
		from = ReadTable(from_alias, name.first, name.second);
		to = ReadTable(to_alias, name.first, name.second);
		CheckDiffable(table, from_version, to_version);
	} catch (...) {
		// The destructor does not run for a constructor that throws: release the snapshots here.
		DetachAll();
		throw;
	}
}

TableDiff::~TableDiff() {
	DetachAll();
}

void TableDiff::DetachAll() {
	for (auto &alias : attached) {
		connection->Query("DETACH DATABASE IF EXISTS " + SqlIdentifier(alias));
	}
	attached.clear();
}

static const std::pair<std::string, std::string> *FindColumn(const DiffTable &table, const std::string &name) {
	for (auto &column : table.columns) {
		if (duckdb::StringUtil::Lower(column.first) == duckdb::StringUtil::Lower(name)) {
			return &column;
		}
	}
	return nullptr;
}

void TableDiff::CheckDiffable(const std::string &table, const DiffVersion &from_version,
                              const DiffVersion &to_version) const {
	if (!from.present && !to.present) {
		Fail(ErrorCode::TABLE_NOT_FOUND,
		     "Neither " + from_version.Describe() + " nor " + to_version.Describe() + " of database " +
		         QuoteName(database) + " has a table " + QuoteName(table) +
		         ". Name it as table or schema.table; ATTACH a snapshot and run SHOW TABLES to list them.");
	}
	if (from.present && to.present && from.key != to.key) {
		Fail(ErrorCode::DIFF_UNSUPPORTED,
		     "Table " + QuoteName(table) +
		         " has another primary key in the two versions, so its rows have no identity to match. Compare "
		         "the two snapshots' rows yourself (SELECT ... EXCEPT ALL SELECT ...).");
	}
	if (from.present && to.present && from.key.empty()) {
		for (auto &column : from.columns) {
			auto *other = FindColumn(to, column.first);
			if (other && other->second != column.second) {
				Fail(ErrorCode::DIFF_UNSUPPORTED,
				     "Table " + QuoteName(table) + " has no primary key and its column " + QuoteName(column.first) +
				         " changed its type between the two versions, so its rows can match neither by key nor by "
				         "value. Add a primary key, or diff versions whose shared columns have the same types.");
			}
		}
	}
}

std::string TableDiff::Open(const std::string &alias, const DiffVersion &version) {
	if (!version.attached.empty()) {
		return version.attached;
	}
	RunSql(*connection, "ATTACH " + SqlLiteral("differential:" + database) + " AS " + SqlIdentifier(alias) +
	                        " (SNAPSHOT " + std::to_string(version.snapshot) + ", READ_ONLY, REPOSITORY " +
	                        SqlLiteral(repository) + ")");
	attached.push_back(alias);
	return alias;
}

DiffTable TableDiff::ReadTable(const std::string &alias, const std::string &schema, const std::string &table) {
	DiffTable out;
	auto where = "database_name = " + SqlLiteral(alias);
	for (auto &row : QueryRows(*connection, "SELECT schema_name, table_name FROM duckdb_tables() WHERE " + where +
	                                            " AND lower(schema_name) = lower(" + SqlLiteral(schema) +
	                                            ") AND lower(table_name) = lower(" + SqlLiteral(table) + ")")) {
		out.present = true;
		out.schema = row.GetBaseValue(0).ToString();
		out.name = row.GetBaseValue(1).ToString();
	}
	if (!out.present) {
		return out;
	}
	where += " AND schema_name = " + SqlLiteral(out.schema) + " AND table_name = " + SqlLiteral(out.name);
	for (auto &row : QueryRows(*connection, "SELECT column_name, data_type FROM duckdb_columns() WHERE " + where +
	                                            " ORDER BY column_index")) {
		out.columns.emplace_back(row.GetBaseValue(0).ToString(), row.GetBaseValue(1).ToString());
	}
	for (auto &row : QueryRows(*connection, "SELECT constraint_column_names FROM duckdb_constraints() WHERE " + where +
	                                            " AND constraint_type = 'PRIMARY KEY'")) {
		// A local copy: the children are references into the value, which must outlive the loop.
		auto names = row.GetBaseValue(0);
		for (auto &column : duckdb::ListValue::GetChildren(names)) {
			out.key.push_back(column.ToString());
		}
	}
	return out;
}

static std::string Relation(const std::string &alias, const DiffTable &table) {
	return SqlIdentifier(alias) + "." + SqlIdentifier(table.schema) + "." + SqlIdentifier(table.name);
}

//! struct_pack(<name> := <side>.<name>, ...) over `columns`.
static std::string Pack(const std::string &side, const std::vector<std::string> &columns) {
	std::string out;
	for (auto &column : columns) {
		out += (out.empty() ? "" : ", ") + SqlIdentifier(column) + " := " + side + "." + SqlIdentifier(column);
	}
	return "struct_pack(" + out + ")";
}

static std::vector<std::string> Names(const DiffTable &table) {
	std::vector<std::string> names;
	for (auto &column : table.columns) {
		names.push_back(column.first);
	}
	return names;
}

//! A table without a key matches rows by their whole value.
static std::vector<std::string> KeyOf(const DiffTable &table) {
	return table.key.empty() ? Names(table) : table.key;
}

//! Every row of the one side that has the table: all inserts, or all deletes.
static std::string OneSidedSql(const std::string &alias, const DiffTable &table, bool inserted) {
	auto row = Pack("r", Names(table));
	auto absent = "CASE WHEN false THEN " + row + " END";
	return std::string("SELECT ") + (inserted ? "'insert'" : "'delete'") + " AS kind, " + Pack("r", KeyOf(table)) +
	       " AS key, " + (inserted ? absent : row) + " AS before, " + (inserted ? row : absent) + " AS after FROM " +
	       Relation(alias, table) + " r ORDER BY key";
}

std::string TableDiff::KeyedSql() const {
	std::string join, differs, key;
	for (auto &column : from.key) {
		auto c = SqlIdentifier(column);
		join += (join.empty() ? "" : " AND ") + ("b." + c + " = h." + c);
		key += (key.empty() ? "" : ", ") + c + " := coalesce(h." + c + ", b." + c + ")";
	}
	// Another column list (added, dropped, retyped or moved columns) changes every row's shape.
	if (from.columns != to.columns) {
		differs = "true";
	}
	for (auto &column : from.columns) {
		if (differs == "true" || std::find(from.key.begin(), from.key.end(), column.first) != from.key.end()) {
			continue;
		}
		auto c = SqlIdentifier(column.first);
		differs += (differs.empty() ? "" : " OR ") + ("b." + c + " IS DISTINCT FROM h." + c);
	}
	auto present = SqlIdentifier(PRESENT);
	return "SELECT CASE WHEN b." + present + " IS NULL THEN 'insert' WHEN h." + present +
	       " IS NULL THEN 'delete' ELSE 'update' END AS kind, struct_pack(" + key + ") AS key, CASE WHEN b." + present +
	       " THEN " + Pack("b", Names(from)) + " END AS before, CASE WHEN h." + present + " THEN " +
	       Pack("h", Names(to)) + " END AS after FROM (SELECT true AS " + present + ", * FROM " +
	       Relation(from_alias, from) + ") b FULL OUTER JOIN (SELECT true AS " + present + ", * FROM " +
	       Relation(to_alias, to) + ") h ON " + join + " WHERE b." + present + " IS NULL OR h." + present +
	       " IS NULL OR " + (differs.empty() ? "false" : differs) + " ORDER BY key";
}

//! Without a key, a changed row reads as a delete and an insert; duplicates count (EXCEPT ALL).
std::string TableDiff::WholeRowSql() const {
	std::string list;
	for (auto &name : Names(from)) {
		list += (list.empty() ? "" : ", ") + SqlIdentifier(name);
	}
	auto row = Pack("d", Names(from));
	auto side = [&](const std::string &kind, const std::string &minuend, const std::string &subtrahend) {
		return "SELECT '" + kind + "' AS kind, " + row + " AS r FROM (SELECT " + list + " FROM " + minuend +
		       " EXCEPT ALL SELECT " + list + " FROM " + subtrahend + ") d";
	};
	auto a = Relation(from_alias, from), b = Relation(to_alias, to);
	return "SELECT kind, r AS key, CASE WHEN kind = 'delete' THEN r END AS before, CASE WHEN kind = 'insert' THEN r "
	       "END AS after FROM (" +
	       side("delete", a, b) + " UNION ALL " + side("insert", b, a) + ") ORDER BY key, kind";
}

//! Without a key and with other columns, no row of one version is a row of the other: every row of
//! `from` is deleted and every row of `to` inserted. `key` spans both versions' columns (`to`'s, then
//! those only `from` has), NULL where the row's version lacks one.
std::string TableDiff::ReplacedSql() const {
	auto all = to.columns;
	for (auto &column : from.columns) {
		if (!FindColumn(to, column.first)) {
			all.push_back(column);
		}
	}
	auto present = SqlIdentifier(PRESENT);
	std::string key;
	for (auto &column : all) {
		auto c = SqlIdentifier(column.first);
		auto in_from = FindColumn(from, column.first) ? "b." + c : std::string("NULL");
		auto in_to = FindColumn(to, column.first) ? "h." + c : std::string("NULL");
		key += (key.empty() ? "" : ", ") + c + " := CASE WHEN b." + present + " THEN " + in_from + " ELSE " + in_to +
		       " END";
	}
	return "SELECT CASE WHEN b." + present + " THEN 'delete' ELSE 'insert' END AS kind, struct_pack(" + key +
	       ") AS key, CASE WHEN b." + present + " THEN " + Pack("b", Names(from)) + " END AS before, CASE WHEN h." +
	       present + " THEN " + Pack("h", Names(to)) + " END AS after FROM (SELECT true AS " + present + ", * FROM " +
	       Relation(from_alias, from) + ") b FULL OUTER JOIN (SELECT true AS " + present + ", * FROM " +
	       Relation(to_alias, to) + ") h ON false ORDER BY key, kind";
}

std::string TableDiff::Sql() const {
	if (!from.present) {
		return OneSidedSql(to_alias, to, true);
	}
	if (!to.present) {
		return OneSidedSql(from_alias, from, false);
	}
	if (from.key.empty()) {
		return from.columns == to.columns ? WholeRowSql() : ReplacedSql();
	}
	return KeyedSql();
}

duckdb::vector<duckdb::LogicalType> TableDiff::Types() {
	auto prepared = connection->Prepare(Sql());
	if (prepared->HasError()) {
		ThrowStatementError(prepared->GetErrorObject());
	}
	return prepared->GetTypes();
}

duckdb::unique_ptr<duckdb::QueryResultStream<duckdb::ChunkFormat>> TableDiff::Stream() {
	// Submitted, not run: Query would retain (materialize) the whole result before the first chunk.
	auto result = connection->Submit(Sql());
	if (result->HasError()) {
		ThrowStatementError(result->GetErrorObject());
	}
	return duckdb::make_uniq<duckdb::QueryResultStream<duckdb::ChunkFormat>>(std::move(result));
}

} // namespace differential
