// The background fetch of a shared writer's evicted chunks: one thread per writable attachment, which
// ends when every chunk is local, or when the attachment goes.
#include "replication/imported_chunk_fetch.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "repository/eviction.hpp"

#include "duckdb/main/client_context.hpp"

namespace differential {

ImportedChunkFetch::ImportedChunkFetch(std::shared_ptr<Repository> repository_p, std::string database_p,
                                       duckdb::DatabaseInstance &db_p)
    : repository(std::move(repository_p)), database(std::move(database_p)), db(db_p) {
	thread.Start("diff-fetch", [this]() { Run(); });
}

ImportedChunkFetch::~ImportedChunkFetch() {
	stopping = true;
	thread.Join();
}

void ImportedChunkFetch::Run() {
	DuckDBLogScope log(db);
	LogTimer timer;
	try {
		auto counts = FetchEvicted(*repository, database, &stopping);
		LogEvent("shared_chunks_fetched", timer.ElapsedMs(),
		         database + ": " + std::to_string(counts.chunks) + " chunks, " + std::to_string(counts.bytes) +
		             " bytes made local" + (stopping ? " (stopped: the attachment went)" : ""));
	} catch (std::exception &error) {
		// Reads still fetch evicted chunks on demand: what is lost is independence from the store, and the log
		// says so; the next writable ATTACH tries again.
		LogWarning("shared_chunks_fetch_failed", database + ": " + error.what());
	}
}

std::shared_ptr<ImportedChunkFetch> StartImportedChunkFetch(duckdb::ClientContext &context,
                                                            std::shared_ptr<Repository> repository,
                                                            const std::string &database) {
	duckdb::Value evict;
	if (context.TryGetCurrentSetting("differential_evict_after_export", evict) && !evict.IsNull() &&
	    evict.GetValue<bool>()) {
		return nullptr;
	}
	return std::make_shared<ImportedChunkFetch>(std::move(repository), database, *context.db);
}

} // namespace differential
