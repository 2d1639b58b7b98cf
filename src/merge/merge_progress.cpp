// The registry of running merges: a process-wide list guarded by one mutex (merges are few and
// long; status reads are rare).
#include "merge/merge_progress.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"

#include <algorithm>
#include <exception>

namespace differential {

namespace {
std::mutex registry_lock;
std::vector<MergeOperation *> registry;

//! Where a merge's time goes, for DuckDB's log (SET enable_logging): one event per phase, merge_<phase>.
void LogPhaseDuration(MergePhase phase, double elapsed_ms, const std::string &database, const std::string &request_id,
                      bool failed) {
	if (!LogEnabled()) {
		return;
	}
	LogEvent(std::string("merge_") + ToString(phase), elapsed_ms,
	         "database " + database + (request_id.empty() ? std::string() : ", request " + request_id) +
	             (failed ? ", failed" : ""));
}

int64_t NowMicros() {
	return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}
} // namespace

MergeOperation::MergeOperation(std::string database, std::string request_id, int64_t max_concurrent,
                               MergeLimits limits_p, std::shared_ptr<std::atomic<double>> progress_sink_p)
    : limits(limits_p), started(std::chrono::steady_clock::now()), phase_started(started),
      progress_sink(std::move(progress_sink_p)), unwinding_at_start(std::uncaught_exceptions()) {
	status.database = std::move(database);
	status.request_id = std::move(request_id);
	status.started_at_us = NowMicros();
	std::lock_guard<std::mutex> guard(registry_lock);
	if (max_concurrent > 0 && int64_t(registry.size()) >= max_concurrent) {
		Fail(ErrorCode::MERGE_BUSY,
		     "This process already runs " + std::to_string(registry.size()) +
		         " merges (SET differential_merge_max_concurrent = " + std::to_string(max_concurrent) +
		         "); nothing was merged. Retry when one finishes, or raise the setting.");
	}
	registry.push_back(this);
}

MergeOperation::~MergeOperation() {
	// The last phase ends with the call, also when it fails (then the log says where it stopped).
	EndPhase(std::uncaught_exceptions() > unwinding_at_start);
	std::lock_guard<std::mutex> guard(registry_lock);
	registry.erase(std::remove(registry.begin(), registry.end(), this), registry.end());
}

void MergeOperation::SetOperationId(const std::string &operation_id) {
	std::lock_guard<std::mutex> guard(lock);
	status.operation_id = operation_id;
}

void MergeOperation::Report(double progress) {
	status.progress = progress;
	if (progress_sink) {
		progress_sink->store(progress);
	}
}

void MergeOperation::EndPhase(bool failed) {
	MergePhase phase;
	{
		std::lock_guard<std::mutex> guard(lock);
		phase = status.phase;
	}
	auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - phase_started).count();
	LogPhaseDuration(phase, elapsed, status.database, status.request_id, failed);
	phase_started = std::chrono::steady_clock::now();
}

void MergeOperation::Phase(MergePhase phase) {
	EndPhase(false);
	auto &info = InfoOf(phase);
	{
		std::lock_guard<std::mutex> guard(lock);
		status.phase = phase;
		phase_start = info.progress_start;
		phase_end = info.progress_end;
		tables_done = 0;
		Report(info.progress_start);
	}
	// The crash tests kill a merge at the start of each phase; the status tests hold it there.
	auto label = std::string("merge.") + info.text;
	CrashPoint(label.c_str());
	PausePoint(label.c_str());
}

void MergeOperation::SetTables(const std::vector<std::string> &tables) {
	std::lock_guard<std::mutex> guard(lock);
	status.tables.clear();
	for (auto &t : tables) {
		MergeTableStatus table;
		table.table = t;
		status.tables.push_back(table);
	}
}

void MergeOperation::TableDone(size_t index, TableState state, const TableMergeCounts &counts) {
	std::lock_guard<std::mutex> guard(lock);
	if (index < status.tables.size()) {
		status.tables[index].state = state;
		status.tables[index].counts = counts;
	}
	tables_done++;
	auto total = std::max<size_t>(status.tables.size(), 1);
	Report(phase_start + (phase_end - phase_start) * double(std::min(tables_done, total)) / double(total));
}

void MergeOperation::CheckDeadline() const {
	auto elapsed =
	    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
	if (limits.timeout_ms > 0 && elapsed > limits.timeout_ms) {
		FailLimit("ran for " + std::to_string(elapsed) + " ms", elapsed, limits.timeout_ms, "timeout_ms");
	}
}

MergeStatusRow MergeOperation::Status() const {
	std::lock_guard<std::mutex> guard(lock);
	auto row = status;
	row.elapsed_ms =
	    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
	return row;
}

std::vector<MergeStatusRow> RunningMerges() {
	std::lock_guard<std::mutex> guard(registry_lock);
	std::vector<MergeStatusRow> out;
	for (auto *operation : registry) {
		out.push_back(operation->Status());
	}
	return out;
}

void FailLimit(const std::string &what, int64_t used, int64_t limit, const std::string &option) {
	Fail(ErrorCode::MERGE_LIMIT_EXCEEDED,
	     "The merge " + what + ", over its limit of " + std::to_string(limit) + " (" + std::to_string(used) +
	         "); nothing was merged. Raise it for this call with " + option + " => <n>, which a retry may change.");
}

} // namespace differential
