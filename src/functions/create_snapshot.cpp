// differential_create_snapshot(attached, name =>, author =>, message =>): checkpoints the
// attachment, then records its state as the database's next snapshot.
#include "common/errors.hpp"
#include "common/names.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/transaction/duck_transaction_manager.hpp"
#include "functions/attached_catalog.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/database_export.hpp"
#include "replication/shared_writers.hpp"

namespace differential {

using namespace duckdb;

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto attached = StringArgument(input, 0, "attached database name");
	SnapshotRequest request;
	request.name = NamedString(input, "name");
	request.author = NamedString(input, "author");
	request.message = NamedString(input, "message");
	if (request.name) {
		ValidateName("snapshot", *request.name);
	}
	// Only an S3 database's export moves it: the checkpoint and the snapshot itself take no measurable time.
	auto progress = std::make_shared<std::atomic<double>>(0);
	return BindRows(
	    {{"snapshot_id", LogicalType::BIGINT},
	     {"snapshot_name", LogicalType::VARCHAR},
	     {"branch_name", LogicalType::VARCHAR},
	     {"created_at", LogicalType::TIMESTAMP_TZ}},
	    [attached, request, progress](ClientContext &context) {
		    auto &catalog = AttachedDifferentialCatalog(context, attached);
		    if (catalog.snapshot_id >= 0 || catalog.GetAttached().IsReadOnly()) {
			    Fail(ErrorCode::READ_ONLY, "The attachment " + QuoteName(attached) +
			                                   " is read-only; snapshots are taken of a branch attached read-write.");
		    }
		    if (!context.transaction.IsAutoCommit()) {
			    Fail(ErrorCode::AUTOCOMMIT_REQUIRED,
			         "differential_create_snapshot checkpoints the database and cannot run inside an "
			         "explicit transaction. COMMIT or ROLLBACK first, then call it on its own.");
		    }
		    try {
			    DuckTransactionManager::Get(catalog.GetAttached()).Checkpoint(context, false);
		    } catch (TransactionException &e) {
			    Fail(ErrorCode::TRANSACTION_CONFLICT, "Cannot snapshot " + QuoteName(attached) +
			                                              " while other transactions write to it (" +
			                                              std::string(e.what()) + "). Retry when they have committed.");
		    }
		    // Copies, not references: another connection may DETACH the database (destroying the catalog) while the
		    // export below runs; the repository stays alive through its own reference.
		    auto repository = catalog.repository;
		    auto database = catalog.database_name;
		    auto branch = catalog.branch_name;
		    auto &metadata = *repository->metadata;
		    if (metadata.shared.Settings(database).shared) {
			    auto snapshot = TakeSharedSnapshot(context, *repository, database, branch, request);
			    return Rows {{Value::BIGINT(snapshot.snapshot_id), OptionalText(snapshot.name),
			                  Value(snapshot.branch_name), TimestampFromMicros(snapshot.created_at_us)}};
		    }
		    auto snapshot = metadata.history.CreateSnapshot(database, branch, request);
		    // The snapshot is durable locally; an S3 database exports it now (a failure says it stays local).
		    ExportDatabase(context, *repository, database, std::nullopt, progress);
		    return Rows {{Value::BIGINT(snapshot.snapshot_id), OptionalText(snapshot.name), Value(snapshot.branch_name),
		                  TimestampFromMicros(snapshot.created_at_us)}};
	    },
	    types, names, progress);
}

TableFunction CreateSnapshotFunction() {
	auto function = MakeRowsFunction("differential_create_snapshot", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	for (auto name : {"name", "author", "message"}) {
		function.GetSignature().AddKeywordOnly(name, LogicalType::VARCHAR, Value(LogicalType::VARCHAR));
	}
	return function;
}

} // namespace differential
