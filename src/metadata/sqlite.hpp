// Minimal RAII over the SQLite C API: a connection, prepared statements, and a write transaction.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <vector>

namespace differential {

class SqliteStatement;

class SqliteDatabase {
public:
	explicit SqliteDatabase(const std::string &path);
	~SqliteDatabase();
	SqliteDatabase(const SqliteDatabase &) = delete;
	SqliteDatabase &operator=(const SqliteDatabase &) = delete;

	void Execute(const std::string &sql);
	SqliteStatement Prepare(const std::string &sql);
	int64_t LastInsertRowId();
	int Changes();
	sqlite3 *Handle() {
		return db;
	}
	[[noreturn]] void Raise(const std::string &what);

private:
	sqlite3 *db = nullptr;
	std::string path;
};

class SqliteStatement {
public:
	SqliteStatement(SqliteDatabase &db, sqlite3_stmt *stmt) : db(&db), stmt(stmt) {
	}
	SqliteStatement(SqliteStatement &&other) noexcept : db(other.db), stmt(other.stmt) {
		other.stmt = nullptr;
	}
	~SqliteStatement();

	SqliteStatement &Bind(int index, int64_t value);
	SqliteStatement &Bind(int index, const std::string &value);
	SqliteStatement &BindBlob(int index, const void *data, size_t size);
	SqliteStatement &BindNull(int index);
	//! Returns true while there is a row to read.
	bool Step();
	void Run() {
		while (Step()) {
		}
	}
	void Reset();

	int64_t Int(int col);
	std::string Text(int col);
	std::vector<uint8_t> Blob(int col);
	bool IsNull(int col);

private:
	SqliteDatabase *db;
	sqlite3_stmt *stmt;
};

//! BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed without Commit().
class SqliteTransaction {
public:
	explicit SqliteTransaction(SqliteDatabase &db);
	~SqliteTransaction();
	void Commit();

private:
	SqliteDatabase &db;
	bool done = false;
};

} // namespace differential
