// SQLite wrapper: every failure becomes a [differential:metadata_error] naming the metadata file.
#include "metadata/sqlite.hpp"

#include "common/errors.hpp"

namespace differential {

SqliteDatabase::SqliteDatabase(const std::string &path_p) : path(path_p) {
	int rc =
	    sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
	if (rc != SQLITE_OK) {
		std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
		sqlite3_close(db);
		db = nullptr;
		Fail(ErrorKind::IO, "metadata_error",
		     "Cannot open the repository metadata " + path + ": " + msg +
		         ". Check that the repository directory exists and is writable.");
	}
	// Several processes share one repository: wait for each other instead of failing at once
	// (a cleanup's mark-and-sweep holds the write lock for its whole pass).
	sqlite3_busy_timeout(db, 300000);
}

SqliteDatabase::~SqliteDatabase() {
	if (db) {
		sqlite3_close_v2(db);
	}
}

void SqliteDatabase::Raise(const std::string &what) {
	Fail(ErrorKind::IO, "metadata_error",
	     what + " failed in the repository metadata " + path + ": " + sqlite3_errmsg(db) +
	         ". Retry; if it persists run differential_verify().");
}

void SqliteDatabase::Execute(const std::string &sql) {
	char *err = nullptr;
	if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
		std::string msg = err ? err : "unknown error";
		sqlite3_free(err);
		Fail(ErrorKind::IO, "metadata_error",
		     "Metadata statement failed in " + path + ": " + msg +
		         ". Retry; if it persists run differential_verify().");
	}
}

SqliteStatement SqliteDatabase::Prepare(const std::string &sql) {
	sqlite3_stmt *stmt = nullptr;
	if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
		Raise("Preparing a metadata statement");
	}
	return SqliteStatement(*this, stmt);
}

int64_t SqliteDatabase::LastInsertRowId() {
	return sqlite3_last_insert_rowid(db);
}

int SqliteDatabase::Changes() {
	return sqlite3_changes(db);
}

SqliteStatement::~SqliteStatement() {
	if (stmt) {
		sqlite3_finalize(stmt);
	}
}

SqliteStatement &SqliteStatement::Bind(int index, int64_t value) {
	if (sqlite3_bind_int64(stmt, index, value) != SQLITE_OK) {
		db->Raise("Binding a metadata value");
	}
	return *this;
}

SqliteStatement &SqliteStatement::Bind(int index, const std::string &value) {
	if (sqlite3_bind_text(stmt, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
		db->Raise("Binding a metadata value");
	}
	return *this;
}

SqliteStatement &SqliteStatement::BindBlob(int index, const void *data, size_t size) {
	// An empty std::vector's data() may be null, and SQLite binds a null pointer as NULL, not as an empty blob
	// (an empty file's root or a page of holes would then violate NOT NULL).
	static const uint8_t EMPTY = 0;
	if (size == 0) {
		data = &EMPTY;
	}
	if (sqlite3_bind_blob64(stmt, index, data, size, SQLITE_TRANSIENT) != SQLITE_OK) {
		db->Raise("Binding a metadata value");
	}
	return *this;
}

SqliteStatement &SqliteStatement::BindNull(int index) {
	if (sqlite3_bind_null(stmt, index) != SQLITE_OK) {
		db->Raise("Binding a metadata value");
	}
	return *this;
}

bool SqliteStatement::Step() {
	int rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		return true;
	}
	if (rc == SQLITE_DONE) {
		return false;
	}
	db->Raise("A metadata statement");
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

SqliteTransaction::SqliteTransaction(SqliteDatabase &db) : db(db) {
	db.Execute("BEGIN IMMEDIATE");
}

SqliteTransaction::~SqliteTransaction() {
	if (!done) {
		sqlite3_exec(db.Handle(), "ROLLBACK", nullptr, nullptr, nullptr);
	}
}

void SqliteTransaction::Commit() {
	db.Execute("COMMIT");
	done = true;
}

} // namespace differential
