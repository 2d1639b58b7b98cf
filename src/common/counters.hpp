// Process-wide counters of the extension's file system calls and metadata transactions, read by
// differential_io_counters(): the counted evidence behind "a warm query touches no file" and "one commit, one write".
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace differential {

enum class Counter : size_t {
	FS_OPEN,
	FS_READ,
	FS_READ_BYTES,
	FS_WRITE,
	FS_WRITE_BYTES,
	FS_SIZE,
	FS_SEEK,
	FS_SYNC,
	FS_EXISTS,
	FS_REMOVE,
	FS_MOVE,
	FS_TRIM,
	FS_TRUNCATE,
	SEGMENT_FSYNC,
	METADATA_STATEMENTS,
	METADATA_WRITE_TRANSACTIONS,
	METADATA_PAGES_WRITTEN,
	METADATA_BUSY_WAITS,
	METADATA_BUSY_WAIT_TOTAL_US,
	METADATA_BUSY_WAIT_MAX_US,
	PIN_WRITE_TRANSACTIONS,
	PIN_BUSY_WAITS,
	PIN_BUSY_WAIT_TOTAL_US,
	PIN_BUSY_WAIT_MAX_US,
	COUNT
};

//! Adds `n` to a counter (relaxed: counters order nothing).
void Count(Counter counter, uint64_t n = 1);
//! Raises a counter to `value` when it is larger (for maxima).
void CountMax(Counter counter, uint64_t value);
//! Every counter by its stable snake_case name, in declaration order, since the process started.
std::vector<std::pair<std::string, uint64_t>> CounterValues();

} // namespace differential
