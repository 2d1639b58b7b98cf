// A shared writer's imported chunks, fetched back in the background after ATTACH: the import itself
// downloads nothing, and this makes the writer's reads and checkpoints independent of the store soon after.
#pragma once

#include "common/background_thread.hpp"
#include "repository/repository.hpp"

#include <atomic>
#include <memory>
#include <string>
#include <thread>

namespace duckdb {
class ClientContext;
class DatabaseInstance;
} // namespace duckdb

namespace differential {

class ImportedChunkFetch {
public:
	ImportedChunkFetch(std::shared_ptr<Repository> repository, std::string database, duckdb::DatabaseInstance &db);
	//! Stops after the chunk in flight, records what was fetched, and joins: the attachment is going.
	~ImportedChunkFetch();

private:
	void Run();

	std::shared_ptr<Repository> repository;
	std::string database;
	duckdb::DatabaseInstance &db;
	std::atomic<bool> stopping {false};
	BackgroundThread thread;
};

//! The fetch for a writable attachment of a shared database, unless the session asked for eviction
//! (SET differential_evict_after_export = true); nullptr when none is started.
std::shared_ptr<ImportedChunkFetch> StartImportedChunkFetch(duckdb::ClientContext &context,
                                                            std::shared_ptr<Repository> repository,
                                                            const std::string &database);

} // namespace differential
