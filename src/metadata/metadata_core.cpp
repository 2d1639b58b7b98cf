// Metadata core: the connection, its pragmas and migrations, sessions, and group commit, the
// durable commit point of every sync.
#include "metadata/metadata_core.hpp"

#include "common/crash_points.hpp"
#include "common/logging.hpp"
#include "metadata/schema.hpp"
#include "metadata/sqlite.hpp"

#include <chrono>
#include <cstdio>
#include <random>

namespace differential {

int64_t NowMicros() {
	return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

std::string NewUuid() {
	std::random_device rd;
	std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(NowMicros()));
	uint64_t a = gen(), b = gen();
	a = (a & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
	b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
	char out[40];
	snprintf(out, sizeof(out), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
	         static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
	         static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFULL));
	return out;
}

// The SQLite transaction itself (BEGIN IMMEDIATE, rollback unless committed) is SqliteTransaction's; this
// adds only the connection's mutex, taken first by the session.
MetadataTransaction::MetadataTransaction(std::mutex &lock, SqliteDatabase &db)
    : MetadataSession(lock, db), transaction(db) {
}

MetadataCore::MetadataCore(const std::string &root_p)
    : root(root_p), db(std::make_unique<SqliteDatabase>(root_p + "/metadata.sqlite")) {
	// Processes opening a new repository at once race to switch its file to WAL; the loser is told "busy" at
	// once (waiting could deadlock), and succeeds once the winner's switch is done.
	db->ExecuteRetryingBusy("PRAGMA journal_mode=WAL");
	db->Execute("PRAGMA synchronous=FULL");
	std::lock_guard<std::mutex> guard(lock);
	MigrateSchema(*db, root);
}

MetadataCore::~MetadataCore() = default;

MetadataSession MetadataCore::Read() {
	return MetadataSession(lock, *db);
}

MetadataTransaction MetadataCore::Write() {
	return MetadataTransaction(lock, *db);
}

void MetadataCore::CommitBatch(const std::vector<GroupedPublication *> &batch) {
	auto txn = Write();
	if (batch.size() == 1) {
		// Alone in its transaction (every commit of a single writer), a publication needs no savepoint: when it
		// fails, the whole transaction rolls back (txn's destructor), which undoes exactly it. Two statements
		// fewer per small commit.
		try {
			(*batch[0]->apply)(txn);
		} catch (...) {
			batch[0]->error = std::current_exception();
			return;
		}
		CrashPoint("publish.before_commit");
		txn.Commit();
		return;
	}
	for (auto publication : batch) {
		// A savepoint per publication: one that fails is undone alone and reported to its caller.
		txn.db.Execute("SAVEPOINT publication");
		try {
			(*publication->apply)(txn);
			txn.db.Execute("RELEASE publication");
		} catch (...) {
			publication->error = std::current_exception();
			txn.db.Execute("ROLLBACK TO publication");
			txn.db.Execute("RELEASE publication");
		}
	}
	CrashPoint("publish.before_commit");
	txn.Commit();
}

void MetadataCore::RunGrouped(const std::function<void(MetadataSession &)> &apply) {
	GroupedPublication mine;
	mine.apply = &apply;
	std::unique_lock<std::mutex> queue_guard(group_lock);
	group_queue.push_back(&mine);
	while (!mine.done) {
		if (group_leader_active) {
			group_done.wait(queue_guard);
			continue;
		}
		// Become the leader: everything queued so far shares one transaction and one device flush.
		group_leader_active = true;
		std::vector<GroupedPublication *> batch;
		batch.swap(group_queue);
		queue_guard.unlock();
		std::exception_ptr batch_error;
		LogTimer timer;
		try {
			CommitBatch(batch);
		} catch (...) {
			batch_error = std::current_exception();
		}
		if (LogEnabled()) {
			LogEvent("group_commit", timer.ElapsedMs(),
			         std::to_string(batch.size()) + " publication(s) in one transaction" +
			             (batch_error ? ", failed" : ""));
		}
		queue_guard.lock();
		for (auto publication : batch) {
			if (batch_error && !publication->error) {
				publication->error = batch_error;
			}
			publication->done = true;
		}
		group_leader_active = false;
		group_done.notify_all();
	}
	if (mine.error) {
		std::rethrow_exception(mine.error);
	}
}

} // namespace differential
