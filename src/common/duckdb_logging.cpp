// Entries are written as the STRUCT's text form, which duckdb_logs_parsed casts back to the struct.
#include "common/duckdb_logging.hpp"

#include "duckdb/logging/log_manager.hpp"
#include "duckdb/logging/log_type.hpp"
#include "duckdb/logging/logger.hpp"

namespace differential {

using duckdb::LogicalType;
using duckdb::Value;

static LogicalType EntryType() {
	duckdb::child_list_t<LogicalType> fields = {
	    {"event", LogicalType::VARCHAR}, {"duration_ms", LogicalType::DOUBLE}, {"detail", LogicalType::VARCHAR}};
	return LogicalType::STRUCT(std::move(fields));
}

static duckdb::LogLevel DuckDBLevel(LogLevel level) {
	return level == LogLevel::WARNING ? duckdb::LogLevel::LOG_WARNING : duckdb::LogLevel::LOG_INFO;
}

DuckDBLogSink::DuckDBLogSink(duckdb::DatabaseInstance &db) : logger(duckdb::Logger::Get(db)) {
}

DuckDBLogSink::DuckDBLogSink(duckdb::ClientContext &context) : logger(duckdb::Logger::Get(context)) {
}

bool DuckDBLogSink::Enabled(LogLevel level) {
	return logger.ShouldLog(DUCKDB_LOG_TYPE, DuckDBLevel(level));
}

void DuckDBLogSink::Write(const LogEntry &entry) {
	auto level = DuckDBLevel(entry.level);
	if (!logger.ShouldLog(DUCKDB_LOG_TYPE, level)) {
		return;
	}
	duckdb::child_list_t<Value> fields = {
	    {"event", Value(entry.event)},
	    {"duration_ms", entry.duration_ms < 0 ? Value(LogicalType::DOUBLE) : Value::DOUBLE(entry.duration_ms)},
	    {"detail", Value(entry.detail)}};
	logger.WriteLog(DUCKDB_LOG_TYPE, level, Value::STRUCT(std::move(fields)).ToString());
}

class DifferentialLogType : public duckdb::LogType {
public:
	DifferentialLogType() : duckdb::LogType(DUCKDB_LOG_TYPE, duckdb::LogLevel::LOG_INFO, EntryType()) {
	}
};

void RegisterDuckDBLogType(duckdb::DatabaseInstance &db) {
	auto &manager = db.GetLogManager();
	if (!manager.LookupLogType(DUCKDB_LOG_TYPE)) {
		manager.RegisterLogType(duckdb::make_uniq<DifferentialLogType>());
	}
}

} // namespace differential
