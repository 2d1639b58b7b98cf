// Reader pins (docs/DURABILITY.md §10) live in <root>/pins.sqlite, apart from the metadata, so a reader that
// opens a snapshot or a branch never waits for a writer's metadata transaction (nor a writer for it).
#pragma once

#include "metadata/metadata_core.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

namespace differential {

//! Inserts a row for `root_id`, owned by this process, into the `pins` table of `db` (the metadata's, writers'
//! pins, or pins.sqlite's); returns its id.
int64_t InsertPin(SqliteDatabase &db, int64_t root_id);

class PinStore {
public:
	//! Opens (creating if needed) <root>/pins.sqlite.
	explicit PinStore(const std::string &root);
	~PinStore();

	//! pins.sqlite's write lock, for one operation: a reader reads its root and pins it under it, and cleanup
	//! reads the pins and sweeps under it, so neither sees the other half done.
	MetadataTransaction Lock();
	//! Records that this process has `root_id` open; returns the pin's id.
	int64_t Insert(MetadataTransaction &locked, int64_t root_id) {
		return InsertPin(locked.db, root_id);
	}
	//! Deletes this process's pin (autocommitted).
	void Release(int64_t pin_id);
	std::unordered_set<int64_t> PinnedRoots(MetadataTransaction &locked);

private:
	std::unique_ptr<SqliteDatabase> db;
	std::mutex lock;
};

//! Deletes the rows of the `pins` table of `db` (the metadata's, writers' pins, or pins.sqlite's) whose process is
//! gone; returns how many.
int64_t DeletePinsOfGoneProcesses(SqliteDatabase &db);

} // namespace differential
