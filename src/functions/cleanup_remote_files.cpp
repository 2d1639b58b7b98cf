// differential_cleanup_remote_files(prefix, dry_run =>, grace =>): remote garbage collection of a DATA_PATH
// prefix (remote/remote_cleanup.hpp). Needs no repository: everything it decides from is in the bucket.
#include "common/duckdb_logging.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "duckdb/common/types/interval.hpp"
#include "functions/rows_function.hpp"
#include "functions/sql_functions.hpp"
#include "host/object_store_access.hpp"
#include "remote/logged_object_store.hpp"
#include "remote/remote_cleanup.hpp"
#include "remote/remote_journal.hpp"

namespace differential {

using namespace duckdb;

static constexpr int64_t DEFAULT_GRACE_MS = 7LL * 24 * 3600 * 1000;

static Rows RunCleanup(ClientContext &context, const std::string &url, RemoteCleanupOptions options,
                       const std::shared_ptr<std::atomic<double>> &progress) {
	DuckDBLogScope log(context);
	auto store = OpenObjectStore(context, url);
	options.now_ms = NowUnixMs();
	options.progress = [progress](uint64_t done, uint64_t total) {
		*progress = total ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
	};
	RemoteCleanupReport r;
	LogTimer timer;
	LoggedObjectStore logged(*store, "cleanup_request"); // every request in duckdb_logs
	auto outcome = CleanupRemoteFiles(logged, options, r);
	if (!outcome.Ok()) {
		FailRemote(outcome, *store, "cleaning up (nothing was deleted after this failure)");
	}
	LogEvent("remote_cleanup", timer.ElapsedMs(),
	         std::string(r.dry_run ? "dry run" : "run") + ", deleted " + std::to_string(r.deleted_objects) +
	             " objects, hold " + CleanupHoldName(r.hold));
	vector<Value> keys;
	for (auto &key : r.deleted_keys) {
		keys.emplace_back(key);
	}
	return Rows {{Value::BOOLEAN(r.dry_run), Value::BIGINT(r.roots), Value::BIGINT(r.live_objects),
	              Value::BIGINT(r.unreachable_objects), Value::BIGINT(r.condemned_objects),
	              Value::BIGINT(r.pending_objects), Value::BIGINT(r.deleted_objects), Value::UBIGINT(r.deleted_bytes),
	              Value(CleanupHoldName(r.hold)), Value::LIST(LogicalType::VARCHAR, keys)}};
}

static unique_ptr<FunctionData> Bind(ClientContext &, TableFunctionBindInput &input, vector<LogicalType> &types,
                                     vector<Identifier> &names) {
	auto url = StringArgument(input, 0, "prefix");
	RemoteCleanupOptions options;
	options.grace_ms = DEFAULT_GRACE_MS;
	for (auto &entry : input.named_parameters) {
		auto name = StringUtil::Lower(entry.first.GetIdentifierName());
		if (entry.second.IsNull()) {
			continue;
		}
		if (name == "dry_run") {
			options.dry_run = entry.second.GetValue<bool>();
		} else if (name == "grace") {
			options.grace_ms = Interval::GetMicro(entry.second.GetValue<interval_t>()) / 1000;
		}
	}
	if (options.grace_ms < 0) {
		Fail(ErrorCode::INVALID_ARGUMENT, "grace => INTERVAL must not be negative.");
	}
	auto progress = std::make_shared<std::atomic<double>>(0);
	return BindRows(
	    {{"dry_run", LogicalType::BOOLEAN},
	     {"roots", LogicalType::BIGINT},
	     {"live_objects", LogicalType::BIGINT},
	     {"unreachable_objects", LogicalType::BIGINT},
	     {"condemned_objects", LogicalType::BIGINT},
	     {"pending_objects", LogicalType::BIGINT},
	     {"deleted_objects", LogicalType::BIGINT},
	     {"deleted_bytes", LogicalType::UBIGINT},
	     {"hold", LogicalType::VARCHAR},
	     {"deleted_keys", LogicalType::LIST(LogicalType::VARCHAR)}},
	    [url, options, progress](ClientContext &context) { return RunCleanup(context, url, options, progress); }, types,
	    names, progress);
}

TableFunction CleanupRemoteFilesFunction() {
	auto function = MakeRowsFunction("differential_cleanup_remote_files", {LogicalType::VARCHAR}, TranslatedBind<Bind>);
	function.GetSignature().AddKeywordOnly("dry_run", LogicalType::BOOLEAN, Value(LogicalType::BOOLEAN));
	function.GetSignature().AddKeywordOnly("grace", LogicalType::INTERVAL, Value(LogicalType::INTERVAL));
	return function;
}

} // namespace differential
