// The SQL side of exports: credentials come from the session (a TYPE s3 secret or the AWS chain),
// the work from export/.
#include "catalog/database_export.hpp"

#include "catalog/object_store_access.hpp"
#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"

namespace differential {

std::optional<ExportRun> ExportDatabase(duckdb::ClientContext &context, Repository &repository,
                                        const std::string &database, std::optional<int64_t> up_to) {
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
	return ExportPendingSnapshots(repository, database, *store, data_path->store_url, up_to);
}

} // namespace differential
