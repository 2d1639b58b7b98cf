// The extension side of common/logging.hpp: a sink writing to DuckDB's logger under the log type
// "differential", so `SET enable_logging = true` shows our events in duckdb_logs.
#pragma once

#include "common/logging.hpp"
#include "duckdb/main/client_context.hpp"
#include "duckdb/main/database.hpp"

namespace differential {

//! Log type name and level, as `SET enabled_log_types = 'differential'` and duckdb_logs show them.
static constexpr const char *DUCKDB_LOG_TYPE = "differential";

class DuckDBLogSink : public LogSink {
public:
	//! Instance-wide: for file system calls, which carry no client context.
	explicit DuckDBLogSink(duckdb::DatabaseInstance &db);
	//! Per connection and query: for table functions (cleanup, merges).
	explicit DuckDBLogSink(duckdb::ClientContext &context);

	bool Enabled(LogLevel level) override;
	void Write(const LogEntry &entry) override;

private:
	duckdb::Logger &logger;
};

//! A sink and its scope in one: `DuckDBLogScope log(context);` at the top of a table function routes
//! everything the call reports (on this thread) to DuckDB's log.
class DuckDBLogScope {
public:
	explicit DuckDBLogScope(duckdb::DatabaseInstance &db) : sink(db), scope(&sink) {
	}
	explicit DuckDBLogScope(duckdb::ClientContext &context) : sink(context), scope(&sink) {
	}

private:
	DuckDBLogSink sink;
	LogScope scope;
};

//! Registers the structured "differential" log type (event, duration_ms, detail) with the instance,
//! so duckdb_logs_parsed('differential') splits the message into columns. Idempotent.
void RegisterDuckDBLogType(duckdb::DatabaseInstance &db);

} // namespace differential
