// differential_recover_export(locator, new_name): a new writable local database from an export, read lazily:
// its chunk map is imported without downloading a chunk (all start out evicted and are fetched on demand),
// its DATA_PATH is the export's store (so its snapshots reuse the packs), and snapshot 1 is taken of it.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "export/data_path.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/database_export.hpp"
#include "host/export_opening.hpp"
#include "replication/branch_recovery.hpp"
#include "replication/shared_writers.hpp"
#include "repository/evicted_chunk_reader.hpp"

#include <algorithm>

namespace differential {

using namespace duckdb;

static Rows Recover(ClientContext &context, const std::string &locator, const std::string &name) {
	auto repository = CurrentRepository(context);
	auto &metadata = *repository->metadata;
	if (metadata.history.FindDatabase(name)) {
		Fail(ErrorCode::DATABASE_EXISTS, "Database " + QuoteName(name) +
		                                     " already exists. Recover into a new name, or drop it first with "
		                                     "differential_drop_database('" +
		                                     name + "').");
	}
	auto opened = OpenExport(context, locator);
	auto store_url = CanonicalDataPath(opened.locator.store_url);
	auto recovered = ImportExportImage(name, store_url, opened.resolved.image);
	metadata.remote.RecoverDatabase(recovered);
	RegisterEvictionStore(store_url, opened.store, PACKS_PREFIX);
	auto snapshot = metadata.history.CreateSnapshot(name, "main", SnapshotRequest());
	// Snapshot 1 is durable locally; its export uploads no chunk (the store holds them all), only its
	// index pages, descriptor, commit record and head.
	ExportDatabase(context, *repository, name);
	return Rows {{Value(name), Value::BIGINT(snapshot.snapshot_id), Value::BIGINT(int64_t(recovered.length)),
	              Value::BIGINT(int64_t(recovered.chunks.size())), Value(store_url)}};
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto locator = StringArgument(input, 0, "export locator");
	auto name = StringArgument(input, 1, "new database name");
	ValidateName("database", name);
	return BindRows(
	    {{"database_name", LogicalType::VARCHAR},
	     {"snapshot_id", LogicalType::BIGINT},
	     {"length", LogicalType::BIGINT},
	     {"chunks", LogicalType::BIGINT},
	     {"data_path", LogicalType::VARCHAR}},
	    [locator, name](ClientContext &context) { return Recover(context, locator, name); }, types, names);
}

TableFunction RecoverExportFunction() {
	return MakeRowsFunction("differential_recover_export", {LogicalType::VARCHAR, LogicalType::VARCHAR},
	                        TranslatedBind<Bind>);
}

} // namespace differential
