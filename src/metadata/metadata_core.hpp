// The metadata core: one SQLite connection per repository and process, its schema, and the
// sessions and transactions every per-concept store works inside.
#pragma once

#include "metadata/sqlite.hpp"

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace differential {

static constexpr int64_t METADATA_SCHEMA_VERSION = 14;
static constexpr int64_t STORE_FORMAT_VERSION = 1;

//! Exclusive use of the connection: statements of one session never interleave with another's.
//! Reads in a session without a transaction see SQLite's per-statement snapshots.
class MetadataSession {
public:
	MetadataSession(std::mutex &lock, SqliteDatabase &db) : guard(lock), db(db) {
	}
	MetadataSession(MetadataSession &&) = default;

private:
	std::unique_lock<std::mutex> guard;

public:
	SqliteDatabase &db;
};

//! A session inside BEGIN IMMEDIATE: every check and write of one operation, atomically. Rolls back
//! unless Commit() is called.
class MetadataTransaction : public MetadataSession {
public:
	MetadataTransaction(std::mutex &lock, SqliteDatabase &db);
	void Commit() {
		transaction.Commit();
	}

private:
	//! Destroyed (rolled back unless committed) before the session's lock is released.
	SqliteTransaction transaction;
};

class MetadataCore {
public:
	//! Opens (creating if needed) <root>/metadata.sqlite and migrates it to the current schema.
	explicit MetadataCore(const std::string &root);
	~MetadataCore();

	MetadataSession Read();
	MetadataTransaction Write();
	//! Runs `apply` inside a metadata transaction shared with every publication queued meanwhile
	//! (group commit): concurrent syncs of different databases cost one transaction and one flush.
	//! A publication that throws is undone alone (a savepoint each) and its error goes to its caller.
	void RunGrouped(const std::function<void(MetadataSession &)> &apply);

	const std::string root;

private:
	std::unique_ptr<SqliteDatabase> db;
	std::mutex lock;

	struct GroupedPublication {
		const std::function<void(MetadataSession &)> *apply = nullptr;
		std::exception_ptr error;
		bool done = false;
	};
	void CommitBatch(const std::vector<GroupedPublication *> &batch);
	std::mutex group_lock;
	std::condition_variable group_done;
	std::vector<GroupedPublication *> group_queue;
	bool group_leader_active = false;
};

int64_t NowMicros();
std::string NewUuid();

} // namespace differential
