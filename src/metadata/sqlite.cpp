// SQLite wrapper: every failure becomes a [differential:metadata_error] naming the metadata file,
// the statement and SQLite's extended result code, so a user's report says exactly what failed.
#include "metadata/sqlite.hpp"

#include "common/counters.hpp"
#include "common/errors.hpp"
#include "common/fault_points.hpp"
#include "common/logging.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <sqlite3.h>
#include <thread>

namespace differential {

//! How long a statement waits for another connection's lock before it fails with SQLITE_BUSY (a cleanup's
//! mark-and-sweep holds the write lock for its whole pass).
static constexpr int64_t BUSY_TIMEOUT_US = 300LL * 1000 * 1000;

static int64_t SteadyMicros() {
	return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
	    .count();
}

//! When the statement this thread runs first found the database locked (0: it did not). The busy handler
//! runs on the thread that steps the statement, so a thread-local needs no lock.
static thread_local int64_t busy_since_us = 0;

//! Polls every millisecond for this long before backing off: the usual holder of the lock is another process's
//! publication or pin, which holds it for one commit (an fdatasync). SQLite's own schedule (sleeps growing to
//! 100 ms) let a waiter sleep through many such gaps: readers opening a new snapshot waited over 100 ms.
static constexpr int64_t FAST_POLL_US = 250 * 1000;

//! SQLite's busy_timeout, plus the start of the wait, so how long statements waited for another connection's
//! lock can be counted (differential_io_counters) and logged.
static int OnBusy(void *, int count) {
	static constexpr int DELAYS_MS[] = {5, 10, 15, 20, 25, 25, 25, 50, 50, 100};
	static constexpr int DELAY_COUNT = sizeof(DELAYS_MS) / sizeof(DELAYS_MS[0]);
	auto now = SteadyMicros();
	if (count == 0 || busy_since_us == 0) {
		busy_since_us = now;
	}
	auto waited = now - busy_since_us;
	if (waited >= BUSY_TIMEOUT_US) {
		return 0;
	}
	if (waited < FAST_POLL_US) {
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
		return 1;
	}
	auto step = std::min<int64_t>((waited - FAST_POLL_US) / (100 * 1000), DELAY_COUNT - 1);
	std::this_thread::sleep_for(std::chrono::milliseconds(DELAYS_MS[step]));
	return 1;
}

//! Ends the wait the busy handler started for `sql` (if any): counted for the file, and logged through DuckDB's
//! logger.
static void EndBusyWait(SqliteFile file, const char *sql) {
	if (busy_since_us == 0) {
		return;
	}
	auto waited = static_cast<uint64_t>(SteadyMicros() - busy_since_us);
	busy_since_us = 0;
	bool pins = file == SqliteFile::PINS;
	Count(pins ? Counter::PIN_BUSY_WAITS : Counter::METADATA_BUSY_WAITS);
	Count(pins ? Counter::PIN_BUSY_WAIT_TOTAL_US : Counter::METADATA_BUSY_WAIT_TOTAL_US, waited);
	CountMax(pins ? Counter::PIN_BUSY_WAIT_MAX_US : Counter::METADATA_BUSY_WAIT_MAX_US, waited);
	if (LogEnabled()) {
		LogEvent(pins ? "pin_busy_wait" : "metadata_busy_wait", static_cast<double>(waited) / 1000.0,
		         std::string("waited for another connection's lock: ") + (sql ? sql : ""));
	}
}

SqliteDatabase::SqliteDatabase(const std::string &path_p, SqliteFile file_p) : path(path_p), file(file_p) {
	int rc =
	    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
	if (rc != SQLITE_OK) {
		std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
		sqlite3_close(db);
		db = nullptr;
		Fail(ErrorCode::METADATA_ERROR, "Cannot open the repository metadata " + path + ": " + msg +
		                                    ". Check that the repository directory exists and is writable.");
	}
	sqlite3_extended_result_codes(db, 1);
	// Several processes share one repository: wait for each other instead of failing at once.
	sqlite3_busy_handler(db, OnBusy, nullptr);
}

SqliteDatabase::~SqliteDatabase() {
	for (auto &entry : cache) {
		sqlite3_finalize(entry.second);
	}
	if (db) {
		sqlite3_close_v2(db);
	}
}

static std::string Abbreviated(const std::string &sql) {
	static constexpr size_t LIMIT = 160;
	auto flat = sql;
	for (auto &c : flat) {
		if (c == '\n' || c == '\t') {
			c = ' ';
		}
	}
	return flat.size() <= LIMIT ? flat : flat.substr(0, LIMIT) + "...";
}

void SqliteDatabase::Raise(const std::string &what, const std::string &sql, int code) {
	// The statement text carries placeholders, never bound values, so nothing a user stored leaks here.
	std::string message = what + " failed in the repository metadata " + path + " (SQLite " + sqlite3_errstr(code) +
	                      ", extended code " + std::to_string(code) + ": " + sqlite3_errmsg(db) + ")";
	if (!sql.empty()) {
		message += " in statement \"" + Abbreviated(sql) + "\"";
	}
	Fail(ErrorCode::METADATA_ERROR,
	     message + ". Nothing of the failed operation was applied; retry it, and if it persists run "
	               "differential_verify() and check the disk.");
}

int64_t SqliteDatabase::TakePagesWritten() {
	int current = 0;
	int highest = 0;
	if (sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 1) != SQLITE_OK) {
		return 0;
	}
	return current;
}

void SqliteDatabase::Execute(const std::string &sql) {
	if (sql.find(';') == std::string::npos) {
		// One statement (BEGIN, COMMIT, SAVEPOINT, ... on every publication): prepared once, from the cache.
		Prepare(sql).Run();
		return;
	}
	char *err = nullptr;
	Count(Counter::METADATA_STATEMENTS);
	int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
	EndBusyWait(file, sql.c_str());
	sqlite3_free(err);
	if (rc != SQLITE_OK) {
		Raise("A metadata statement", sql, sqlite3_extended_errcode(db));
	}
}

void SqliteDatabase::ExecuteRetryingBusy(const std::string &sql) {
	auto start = SteadyMicros();
	for (;;) {
		Count(Counter::METADATA_STATEMENTS);
		int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
		EndBusyWait(file, sql.c_str());
		if (rc == SQLITE_OK) {
			return;
		}
		if ((rc & 0xFF) != SQLITE_BUSY || SteadyMicros() - start >= BUSY_TIMEOUT_US) {
			Raise("A metadata statement", sql, sqlite3_extended_errcode(db));
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
}

SqliteStatement SqliteDatabase::Prepare(const std::string &sql) {
	{
		std::lock_guard<std::mutex> guard(cache_lock);
		auto it = cache.find(sql);
		if (it != cache.end()) {
			auto stmt = it->second;
			cache.erase(it);
			return SqliteStatement(*this, stmt);
		}
	}
	sqlite3_stmt *stmt = nullptr;
	int rc = sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
	if (rc != SQLITE_OK) {
		Raise("Preparing a metadata statement", sql, sqlite3_extended_errcode(db));
	}
	return SqliteStatement(*this, stmt);
}

void SqliteDatabase::Release(sqlite3_stmt *stmt) {
	// Reset ends the statement's read of the database, so a cached statement holds no lock.
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
	auto sql = sqlite3_sql(stmt);
	std::lock_guard<std::mutex> guard(cache_lock);
	if (!sql || !cache.emplace(sql, stmt).second) {
		sqlite3_finalize(stmt);
	}
}

int64_t SqliteDatabase::LastInsertRowId() {
	return sqlite3_last_insert_rowid(db);
}

int SqliteDatabase::Changes() {
	return sqlite3_changes(db);
}

bool SqliteDatabase::TryCheckpointTruncate() {
	return sqlite3_wal_checkpoint_v2(db, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr) == SQLITE_OK;
}

SqliteStatement::~SqliteStatement() {
	if (stmt) {
		db->Release(stmt);
	}
}

void SqliteStatement::Raise(const std::string &what, int code) {
	auto sql = sqlite3_sql(stmt);
	db->Raise(what, sql ? sql : "", code);
}

SqliteStatement &SqliteStatement::Bind(int index, int64_t value) {
	int rc = sqlite3_bind_int64(stmt, index, value);
	if (rc != SQLITE_OK) {
		Raise("Binding a metadata value", rc);
	}
	return *this;
}

SqliteStatement &SqliteStatement::Bind(int index, const std::string &value) {
	int rc = sqlite3_bind_text(stmt, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
	if (rc != SQLITE_OK) {
		Raise("Binding a metadata value", rc);
	}
	return *this;
}

SqliteStatement &SqliteStatement::Bind(int index, const std::optional<std::string> &value) {
	return value ? Bind(index, *value) : BindNull(index);
}

SqliteStatement &SqliteStatement::Bind(int index, const std::optional<int64_t> &value) {
	return value ? Bind(index, *value) : BindNull(index);
}

SqliteStatement &SqliteStatement::BindBlob(int index, const void *data, size_t size) {
	// An empty std::vector's data() may be null, and SQLite binds a null pointer as NULL, not as an empty blob
	// (an empty file's root or a page of holes would then violate NOT NULL).
	static const uint8_t EMPTY = 0;
	if (size == 0) {
		data = &EMPTY;
	}
	int rc = sqlite3_bind_blob64(stmt, index, data, size, SQLITE_TRANSIENT);
	if (rc != SQLITE_OK) {
		Raise("Binding a metadata value", rc);
	}
	return *this;
}

SqliteStatement &SqliteStatement::BindNull(int index) {
	int rc = sqlite3_bind_null(stmt, index);
	if (rc != SQLITE_OK) {
		Raise("Binding a metadata value", rc);
	}
	return *this;
}

bool SqliteStatement::Step() {
	if (!sqlite3_stmt_busy(stmt)) {
		Count(Counter::METADATA_STATEMENTS);
	}
	int rc = sqlite3_step(stmt);
	EndBusyWait(db->file, sqlite3_sql(stmt));
	if (rc == SQLITE_ROW) {
		return true;
	}
	if (rc == SQLITE_DONE) {
		return false;
	}
	Raise("A metadata statement", sqlite3_extended_errcode(db->db));
}

void SqliteStatement::Reset() {
	sqlite3_reset(stmt);
	sqlite3_clear_bindings(stmt);
}

int64_t SqliteStatement::Int(int col) {
	return sqlite3_column_int64(stmt, col);
}

std::string SqliteStatement::Text(int col) {
	auto p = sqlite3_column_text(stmt, col);
	return p ? std::string(reinterpret_cast<const char *>(p), sqlite3_column_bytes(stmt, col)) : std::string();
}

std::vector<uint8_t> SqliteStatement::Blob(int col) {
	auto p = static_cast<const uint8_t *>(sqlite3_column_blob(stmt, col));
	return p ? std::vector<uint8_t>(p, p + sqlite3_column_bytes(stmt, col)) : std::vector<uint8_t>();
}

bool SqliteStatement::IsNull(int col) {
	return sqlite3_column_type(stmt, col) == SQLITE_NULL;
}

std::optional<int64_t> SqliteStatement::OptionalInt(int col) {
	return IsNull(col) ? std::nullopt : std::optional<int64_t>(Int(col));
}

std::optional<std::string> SqliteStatement::OptionalText(int col) {
	return IsNull(col) ? std::nullopt : std::optional<std::string>(Text(col));
}

SqliteTransaction::SqliteTransaction(SqliteDatabase &db) : db(db) {
	Count(db.File() == SqliteFile::PINS ? Counter::PIN_WRITE_TRANSACTIONS : Counter::METADATA_WRITE_TRANSACTIONS);
	db.Execute("BEGIN IMMEDIATE");
}

SqliteTransaction::~SqliteTransaction() {
	if (!done) {
		// A ROLLBACK fails only when SQLite already rolled back (after an I/O error in COMMIT); the error that
		// caused it is what the caller reports.
		try {
			db.Execute("ROLLBACK");
		} catch (...) {
		}
	}
}

void SqliteTransaction::Commit() {
	if (int injected = InjectedFault("metadata.commit")) {
		// Fail as a COMMIT that hit an I/O error would: the transaction stays open and rolls back.
		db.Raise("Committing a metadata transaction", "COMMIT", injected == ENOSPC ? SQLITE_FULL : SQLITE_IOERR_FSYNC);
	}
	db.Execute("COMMIT");
	done = true;
	if (db.File() == SqliteFile::METADATA) {
		Count(Counter::METADATA_PAGES_WRITTEN, static_cast<uint64_t>(db.TakePagesWritten()));
	}
}

SqliteReadTransaction::SqliteReadTransaction(SqliteDatabase &db) : db(db) {
	db.Execute("BEGIN");
}

SqliteReadTransaction::~SqliteReadTransaction() {
	// Ending a transaction that wrote nothing cannot lose anything; a failure here (SQLite already ended it)
	// has nothing to report.
	try {
		db.Execute("COMMIT");
	} catch (...) {
	}
}

} // namespace differential
