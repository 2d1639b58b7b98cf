// Reader pins in their own SQLite file: losing them in a crash loses nothing (the pinning processes are gone
// too), so commits skip the flush that the metadata's need.
#include "metadata/pin_store.hpp"

#include "common/process_identity.hpp"
#include "metadata/sqlite.hpp"

#include <unistd.h>
#include <vector>

namespace differential {

PinStore::PinStore(const std::string &root)
    : db(std::make_unique<SqliteDatabase>(root + "/pins.sqlite", SqliteFile::PINS)) {
	db->ExecuteRetryingBusy("PRAGMA journal_mode=WAL");
	// NORMAL in WAL mode: a commit is not flushed, and a crash of the machine cannot corrupt the file (it can
	// only lose the last pins, which belonged to processes that died with it).
	db->Execute("PRAGMA synchronous=NORMAL");
	db->ExecuteRetryingBusy("CREATE TABLE IF NOT EXISTS pins(pin_id INTEGER PRIMARY KEY AUTOINCREMENT, root_id INTEGER "
	                        "NOT NULL, pid INTEGER NOT NULL, process_start INTEGER NOT NULL, created_at_us INTEGER "
	                        "NOT NULL)");
}

PinStore::~PinStore() = default;

MetadataTransaction PinStore::Lock() {
	return MetadataTransaction(lock, *db);
}

int64_t InsertPin(SqliteDatabase &db, int64_t root_id) {
	db.Prepare("INSERT INTO pins(root_id, pid, process_start, created_at_us) VALUES (?, ?, ?, ?)")
	    .Bind(1, root_id)
	    .Bind(2, static_cast<int64_t>(getpid()))
	    .Bind(3, static_cast<int64_t>(CurrentProcessStartTime()))
	    .Bind(4, NowMicros())
	    .Run();
	return db.LastInsertRowId();
}

void PinStore::Release(int64_t pin_id) {
	std::lock_guard<std::mutex> guard(lock);
	db->Prepare("DELETE FROM pins WHERE pin_id = ? AND pid = ?")
	    .Bind(1, pin_id)
	    .Bind(2, static_cast<int64_t>(getpid()))
	    .Run();
}

int64_t DeletePinsOfGoneProcesses(SqliteDatabase &db) {
	std::vector<int64_t> dead;
	auto pins = db.Prepare("SELECT pin_id, pid, process_start FROM pins");
	while (pins.Step()) {
		if (!ProcessAlive(pins.Int(1), static_cast<uint64_t>(pins.Int(2)))) {
			dead.push_back(pins.Int(0));
		}
	}
	auto release = db.Prepare("DELETE FROM pins WHERE pin_id = ?");
	for (auto pin : dead) {
		release.Reset();
		release.Bind(1, pin).Run();
	}
	return static_cast<int64_t>(dead.size());
}

std::unordered_set<int64_t> PinStore::PinnedRoots(MetadataTransaction &locked) {
	std::unordered_set<int64_t> roots;
	auto stmt = locked.db.Prepare("SELECT DISTINCT root_id FROM pins");
	while (stmt.Step()) {
		roots.insert(stmt.Int(0));
	}
	return roots;
}

} // namespace differential
