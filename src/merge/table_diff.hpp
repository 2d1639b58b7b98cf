// The row-level diff of one table between two snapshots of a database: one SQL statement over two
// private read-only attachments (each pins its snapshot while it is open), streamed by DuckDB.
// Rows match by primary key, the rule merges use; a table without one matches by whole row.
#pragma once

#include "metadata/metadata_store.hpp"

#include "duckdb/common/types/value.hpp"
#include "duckdb/main/query_result_stream.hpp"

#include <memory>
#include <string>
#include <vector>

namespace duckdb {
class DatabaseInstance;
class Connection;
} // namespace duckdb

namespace differential {

//! The snapshot a diff side names: an integer is a snapshot id, a string a branch (its head
//! snapshot). `what` ("from", "to") names the argument in refusals.
int64_t ResolveDiffVersion(MetadataStore &metadata, const std::string &database, const duckdb::Value &version,
                           const std::string &what);

//! A version a diff side reads: a snapshot (attached read-only for the diff), or a database this instance has
//! attached, read as it stands (a branch's working state, committed but not yet a snapshot).
struct DiffVersion {
	int64_t snapshot = -1;
	std::string attached;
	//! "snapshot 3" or "the working state of `attached`", for messages.
	std::string Describe() const;
	bool operator==(const DiffVersion &other) const {
		return snapshot == other.snapshot && attached == other.attached;
	}
};

//! One side's table as the diff reads it; absent when the snapshot has no such table.
struct DiffTable {
	bool present = false;
	std::string schema;
	std::string name;
	//! Column names and SQL types, in table order.
	std::vector<std::pair<std::string, std::string>> columns;
	std::vector<std::string> key;
};

class TableDiff {
public:
	//! Attaches both snapshots (an attached version is read where it is) and reads the table on each side;
	//! refuses a table on neither side, and a key that differs between them.
	TableDiff(duckdb::DatabaseInstance &instance, const std::string &repository, const std::string &database,
	          const DiffVersion &from, const DiffVersion &to, const std::string &table);
	~TableDiff();
	TableDiff(const TableDiff &) = delete;
	TableDiff &operator=(const TableDiff &) = delete;

	//! The result's types (kind, key, before, after), without running the statement.
	duckdb::vector<duckdb::LogicalType> Types();
	//! Runs the diff; its rows stream chunk by chunk, ordered by key. The attachments stay open
	//! until this object is destroyed, so the result must be destroyed first.
	duckdb::unique_ptr<duckdb::QueryResultStream<duckdb::ChunkFormat>> Stream();

private:
	DiffTable ReadTable(const std::string &alias, const std::string &schema, const std::string &table);
	//! The name the statement reads `version` under: an attached one's own, else a snapshot attached as `alias`.
	std::string Open(const std::string &alias, const DiffVersion &version);
	void DetachAll();
	void CheckDiffable(const std::string &table, const DiffVersion &from_version, const DiffVersion &to_version) const;
	std::string Sql() const;
	std::string KeyedSql() const;
	std::string WholeRowSql() const;
	std::string ReplacedSql() const;

	std::unique_ptr<duckdb::Connection> connection;
	std::string repository, database;
	std::vector<std::string> attached;
	std::string from_alias, to_alias;
	DiffTable from, to;
};

} // namespace differential
