// The SQL side of exports: credentials come from the session (a TYPE s3 secret or the AWS chain),
// the work from export/.
#include "host/database_export.hpp"

#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "export/s3_merge_publisher.hpp"
#include "host/object_store_access.hpp"
#include "remote/export_format.hpp"
#include "repository/evicted_chunk_reader.hpp"
#include "repository/eviction.hpp"

namespace differential {

std::optional<ExportRun> ExportDatabase(duckdb::ClientContext &context, Repository &repository,
                                        const std::string &database, std::optional<int64_t> up_to,
                                        const std::shared_ptr<std::atomic<double>> &progress) {
	auto data_path = repository.metadata->remote.DataPath(database);
	if (!data_path) {
		return std::nullopt;
	}
	DuckDBLogScope log(context);
	std::shared_ptr<ObjectStore> store;
	try {
		store = OpenObjectStore(context, data_path->store_url);
	} catch (DifferentialError &e) {
		Fail(e.kind, e.code,
		     "Database " + database + " has snapshots to export to " + data_path->store_url +
		         ", but its store cannot be opened: " + e.detail +
		         " The snapshots stay local; export them later with CALL differential_export_snapshot('" + database +
		         "').");
	}
	RegisterEvictionStore(data_path->store_url, store, PACKS_PREFIX);
	ExportTuning tuning;
	if (progress) {
		tuning.progress = [&progress](double percent) {
			*progress = percent;
		};
	}
	duckdb::Value concurrency;
	if (context.TryGetCurrentSetting("differential_export_concurrency", concurrency) && !concurrency.IsNull()) {
		tuning.upload_concurrency = static_cast<size_t>(concurrency.GetValue<int64_t>());
	}
	auto run = ExportPendingSnapshots(repository, database, *store, data_path->store_url, up_to, tuning);
	duckdb::Value evict;
	if (context.TryGetCurrentSetting("differential_evict_after_export", evict) && !evict.IsNull() &&
	    evict.GetValue<bool>()) {
		// All the exported chunks, not only this run's: a superset that costs one pass over the store's chunks.
		EvictExported(repository, database);
	}
	return run;
}

std::shared_ptr<MergePublisher> OpenMergePublisher(duckdb::ClientContext &context,
                                                   const std::shared_ptr<Repository> &repository,
                                                   const std::string &database) {
	auto data_path = repository->metadata->remote.DataPath(database);
	if (!data_path || repository->metadata->shared.Settings(database).shared) {
		return nullptr;
	}
	// Also opens the store for reading evicted inputs back (the export registers it).
	ExportDatabase(context, *repository, database);
	return MakeS3MergePublisher(repository, database, data_path->store_url,
	                            OpenObjectStore(context, data_path->store_url));
}

} // namespace differential
