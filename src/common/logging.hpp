// Logging for the layers below DuckDB (storage, metadata, maintenance, merge): they report events here
// without including DuckDB; the extension installs a sink that forwards them to DuckDB's logger.
#pragma once

#include <chrono>
#include <string>

namespace differential {

enum class LogLevel { INFO, WARNING };

//! One event. `event` is a stable snake_case name (segment_fsync, publish, group_commit, cleanup,
//! merge_<phase>, ...); `duration_ms` is how long it took, or negative when it is not a timing;
//! `detail` is for people (what, how much), never parsed.
struct LogEntry {
	std::string event;
	double duration_ms = -1;
	std::string detail;
	LogLevel level = LogLevel::INFO;
};

class LogSink {
public:
	virtual ~LogSink() = default;
	//! Whether an entry of this level would be kept: callers skip building details when not.
	virtual bool Enabled(LogLevel level) = 0;
	virtual void Write(const LogEntry &entry) = 0;
};

//! Routes the events this thread reports to `sink` while the scope lives; scopes nest (the inner
//! one wins, the outer one is restored). Without a scope, events go nowhere.
class LogScope {
public:
	explicit LogScope(LogSink *sink);
	~LogScope();
	LogScope(const LogScope &) = delete;
	LogScope &operator=(const LogScope &) = delete;

private:
	LogSink *previous;
};

//! Whether anyone listens on this thread at `level`.
bool LogEnabled(LogLevel level = LogLevel::INFO);
//! Reports a timed event. Never throws: a failing sink must not turn an operation's result around.
void LogEvent(const std::string &event, double duration_ms, const std::string &detail = "");
//! Reports a failure that was handled (not raised): what failed and what was done about it.
void LogWarning(const std::string &event, const std::string &detail);

//! Measures wall time from construction, for LogEvent durations.
class LogTimer {
public:
	LogTimer() : start(std::chrono::steady_clock::now()) {
	}
	double ElapsedMs() const {
		return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
	}

private:
	std::chrono::steady_clock::time_point start;
};

} // namespace differential
