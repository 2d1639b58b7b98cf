// Running merges of this process: what differential_merge_status() lists, the progress DuckDB's
// progress bar shows, the per-process concurrency limit, and the per-call resource limits.
#pragma once

#include "merge/merge_states.hpp"
#include "merge/table_merge.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace differential {

//! Per-call limits (defaults in docs/MERGES.md §9); a retry may change them.
struct MergeLimits {
	int64_t max_rows_read = 10000000;
	int64_t max_bytes_read = int64_t(1) << 30;
	int64_t max_staging_bytes = int64_t(1) << 30;
	int64_t timeout_ms = 600000;
};

struct MergeTableStatus {
	std::string table;
	TableState state = TableState::WAITING;
	TableMergeCounts counts;
};

struct MergeStatusRow {
	std::string operation_id;
	std::string request_id;
	std::string database;
	MergePhase phase = MergePhase::SELECTION;
	int64_t started_at_us = 0;
	int64_t elapsed_ms = 0;
	double progress = 0;
	std::vector<MergeTableStatus> tables;
};

//! One running merge, registered for its lifetime. Refuses to start (merge_busy) when the process
//! already runs `max_concurrent` merges.
class MergeOperation {
public:
	MergeOperation(std::string database, std::string request_id, int64_t max_concurrent, MergeLimits limits,
	               std::shared_ptr<std::atomic<double>> progress_sink);
	~MergeOperation();
	MergeOperation(const MergeOperation &) = delete;
	MergeOperation &operator=(const MergeOperation &) = delete;

	void SetOperationId(const std::string &operation_id);
	//! Enters a phase, at its share of the total progress (MERGE_PHASES).
	void Phase(MergePhase phase);
	void SetTables(const std::vector<std::string> &tables);
	void TableDone(size_t index, TableState state, const TableMergeCounts &counts);
	//! merge_limit_exceeded when the call has run longer than its timeout.
	void CheckDeadline() const;
	const MergeLimits &Limits() const {
		return limits;
	}
	MergeStatusRow Status() const;

private:
	void Report(double progress);
	//! Reports how long the current phase took (its log event) and starts timing the next.
	void EndPhase(bool failed);

	mutable std::mutex lock;
	MergeStatusRow status;
	MergeLimits limits;
	std::chrono::steady_clock::time_point started;
	std::chrono::steady_clock::time_point phase_started;
	std::shared_ptr<std::atomic<double>> progress_sink;
	//! Exceptions in flight when the merge started: more at its end means it failed.
	int unwinding_at_start = 0;
	double phase_start = 0;
	double phase_end = 0;
	size_t tables_done = 0;
};

std::vector<MergeStatusRow> RunningMerges();

//! Whole milliseconds since `start`, for the timings a merge reports.
inline int64_t MillisSince(std::chrono::steady_clock::time_point start) {
	return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
}

[[noreturn]] void FailLimit(const std::string &what, int64_t used, int64_t limit, const std::string &option);

} // namespace differential
