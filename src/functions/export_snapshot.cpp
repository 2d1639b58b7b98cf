// differential_export_snapshot(database, snapshot =>): exports the database's snapshots that are not in
// its DATA_PATH yet (up to `snapshot`), then moves the heads behind; the retry after a failed export.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/database_export.hpp"

namespace differential {

using namespace duckdb;

static Rows ExportRows(const ExportRun &run, const std::string &store_url) {
	Rows rows;
	for (auto &snapshot : run.snapshots) {
		bool head = false;
		for (auto &moved : run.heads) {
			head |= moved.branch_name == snapshot.branch_name && moved.snapshot_id == snapshot.snapshot_id;
		}
		auto &stats = snapshot.stats;
		rows.push_back({Value::BIGINT(snapshot.snapshot_id), Value(snapshot.branch_name),
		                Value(store_url + "descriptors/" + HashToHex(snapshot.descriptor)),
		                Value::BIGINT(int64_t(stats.packs)), Value::BIGINT(int64_t(stats.chunks)),
		                Value::BIGINT(int64_t(stats.bytes)), Value::BIGINT(int64_t(stats.requests)),
		                Value::BOOLEAN(head)});
	}
	return rows;
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto database = StringArgument(input, 0, "database name");
	ValidateName("database", database);
	auto snapshot = NamedInteger(input, "snapshot");
	auto progress = std::make_shared<std::atomic<double>>(0);
	return BindRows(
	    {{"snapshot_id", LogicalType::BIGINT},
	     {"branch_name", LogicalType::VARCHAR},
	     {"locator", LogicalType::VARCHAR},
	     {"packs_uploaded", LogicalType::BIGINT},
	     {"chunks_uploaded", LogicalType::BIGINT},
	     {"bytes_uploaded", LogicalType::BIGINT},
	     {"requests", LogicalType::BIGINT},
	     {"head_moved", LogicalType::BOOLEAN}},
	    [database, snapshot, progress](ClientContext &context) {
		    auto repository = CurrentRepository(context);
		    auto &metadata = *repository->metadata;
		    auto data_path = metadata.remote.DataPath(database);
		    if (!data_path) {
			    Fail(ErrorCode::NO_DATA_PATH,
			         "Database " + QuoteName(database) +
			             " has no DATA_PATH, so its snapshots are local only. Give it one with ATTACH 'differential:" +
			             database + "' (DATA_PATH 's3://bucket/prefix/').");
		    }
		    if (snapshot && !metadata.history.FindSnapshot(database, *snapshot)) {
			    Fail(ErrorCode::SNAPSHOT_NOT_FOUND,
			         "Database " + QuoteName(database) + " has no snapshot " + std::to_string(*snapshot) +
			             ". List its snapshots with differential_snapshots('" + database + "').");
		    }
		    auto run = ExportDatabase(context, *repository, database, snapshot, progress);
		    return ExportRows(*run, data_path->store_url);
	    },
	    types, names, progress);
}

TableFunction ExportSnapshotFunction() {
	auto function = MakeRowsFunction("differential_export_snapshot", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("snapshot", LogicalType::BIGINT, Value(LogicalType::BIGINT));
	return function;
}

} // namespace differential
