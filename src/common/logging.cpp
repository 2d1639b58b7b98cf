// The per-thread sink pointer behind LogEvent: the code that knows the DuckDB instance (the file
// system, a table function) opens a LogScope; the layers below only report.
#include "common/logging.hpp"

#include "common/log_handoff.hpp"

namespace differential {

static thread_local LogSink *current_sink = nullptr;

LogScope::LogScope(LogSink *sink) : previous(current_sink) {
	current_sink = sink;
}

LogScope::~LogScope() {
	current_sink = previous;
}

LogSink *CurrentLogSink() {
	return current_sink;
}

bool LogEnabled(LogLevel level) {
	try {
		return current_sink && current_sink->Enabled(level);
	} catch (...) {
		return false;
	}
}

static void Report(const std::string &event, double duration_ms, const std::string &detail, LogLevel level) {
	try {
		if (!current_sink || !current_sink->Enabled(level)) {
			return;
		}
		LogEntry entry;
		entry.event = event;
		entry.duration_ms = duration_ms;
		entry.detail = detail;
		entry.level = level;
		current_sink->Write(entry);
	} catch (...) {
		// Logging is an observer: losing an entry is better than failing (or masking) the operation.
	}
}

void LogEvent(const std::string &event, double duration_ms, const std::string &detail) {
	Report(event, duration_ms, detail, LogLevel::INFO);
}

void LogWarning(const std::string &event, const std::string &detail) {
	Report(event, -1, detail, LogLevel::WARNING);
}

} // namespace differential
