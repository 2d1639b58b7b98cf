// Minimal RAII over the SQLite C API: a connection, prepared statements, and a write transaction.
// SQLite's own header stays in sqlite.cpp: no other file, in this layer or above, sees its types.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace differential {

class SqliteStatement;

//! Which file a connection serves. Waits and write transactions are counted per file
//! (differential_io_counters): the metadata's write lock is taken by writers, pins.sqlite's by readers opening a
//! file (docs/DURABILITY.md §10), and a reader's wait on the one is not a wait on the other.
enum class SqliteFile : uint8_t { METADATA, PINS };

class SqliteDatabase {
public:
	explicit SqliteDatabase(const std::string &path, SqliteFile file = SqliteFile::METADATA);
	~SqliteDatabase();
	SqliteDatabase(const SqliteDatabase &) = delete;
	SqliteDatabase &operator=(const SqliteDatabase &) = delete;

	//! Runs one statement, or several separated by semicolons.
	void Execute(const std::string &sql);
	//! Runs one statement, trying again while SQLite answers "busy" without having waited: it does so where
	//! waiting could deadlock, as when two connections switch a new file to WAL at once (one must back off).
	void ExecuteRetryingBusy(const std::string &sql);
	//! A prepared statement, from the cache when one for the same SQL is free.
	SqliteStatement Prepare(const std::string &sql);
	int64_t LastInsertRowId();
	int Changes();
	SqliteFile File() const {
		return file;
	}
	//! Folds the WAL back into the database file; false when readers in other processes hold it.
	bool TryCheckpointTruncate();
	//! Pages this connection wrote to SQLite's WAL since the previous call (SQLITE_DBSTATUS_CACHE_WRITE, reset).
	int64_t TakePagesWritten();
	//! Raises metadata_error naming the failed step, the statement and SQLite's extended result code.
	[[noreturn]] void Raise(const std::string &what, const std::string &sql, int code);

private:
	friend class SqliteStatement;
	//! Takes back a statement that is done: reset and cached, or finalized if its SQL is cached already.
	void Release(sqlite3_stmt *stmt);
	sqlite3 *db = nullptr;
	std::string path;
	const SqliteFile file;
	//! Free prepared statements by SQL text. Every publication runs the same few statements; parsing them
	//! again each time was a visible share of a small commit's CPU.
	std::mutex cache_lock;
	std::unordered_map<std::string, sqlite3_stmt *> cache;
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
	SqliteStatement &Bind(int index, const char *value) {
		return Bind(index, std::string(value));
	}
	//! Binds the value, or NULL when it is absent.
	SqliteStatement &Bind(int index, const std::optional<std::string> &value);
	SqliteStatement &Bind(int index, const std::optional<int64_t> &value);
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
	std::optional<int64_t> OptionalInt(int col);
	std::optional<std::string> OptionalText(int col);

private:
	[[noreturn]] void Raise(const std::string &what, int code);
	SqliteDatabase *db;
	sqlite3_stmt *stmt;
};

//! BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed without Commit().
class SqliteTransaction {
public:
	explicit SqliteTransaction(SqliteDatabase &db);
	~SqliteTransaction();
	SqliteTransaction(const SqliteTransaction &) = delete;
	SqliteTransaction &operator=(const SqliteTransaction &) = delete;
	//! COMMITs (the metadata.commit fault point sits here).
	void Commit();

private:
	SqliteDatabase &db;
	bool done = false;
};

//! BEGIN (deferred) ... COMMIT: the statements in between read one snapshot of the database and take no
//! write lock, so they never wait for a writer (WAL mode).
class SqliteReadTransaction {
public:
	explicit SqliteReadTransaction(SqliteDatabase &db);
	~SqliteReadTransaction();
	SqliteReadTransaction(const SqliteReadTransaction &) = delete;
	SqliteReadTransaction &operator=(const SqliteReadTransaction &) = delete;

private:
	SqliteDatabase &db;
};

} // namespace differential
