// Counters are plain relaxed atomics: a few nanoseconds on the paths they count, and no lock.
#include "common/counters.hpp"

#include <array>
#include <atomic>

namespace differential {

static constexpr size_t COUNTERS = static_cast<size_t>(Counter::COUNT);

static std::array<std::atomic<uint64_t>, COUNTERS> &Values() {
	static auto *values = new std::array<std::atomic<uint64_t>, COUNTERS>();
	return *values;
}

static const std::array<const char *, COUNTERS> NAMES = {"fs_open",
                                                         "fs_read",
                                                         "fs_read_bytes",
                                                         "fs_write",
                                                         "fs_write_bytes",
                                                         "fs_size",
                                                         "fs_seek",
                                                         "fs_sync",
                                                         "fs_exists",
                                                         "fs_remove",
                                                         "fs_move",
                                                         "fs_trim",
                                                         "fs_truncate",
                                                         "segment_fsync",
                                                         "metadata_statements",
                                                         "metadata_write_transactions",
                                                         "metadata_pages_written",
                                                         "metadata_busy_waits",
                                                         "metadata_busy_wait_total_us",
                                                         "metadata_busy_wait_max_us",
                                                         "pin_write_transactions",
                                                         "pin_busy_waits",
                                                         "pin_busy_wait_total_us",
                                                         "pin_busy_wait_max_us"};

void Count(Counter counter, uint64_t n) {
	Values()[static_cast<size_t>(counter)].fetch_add(n, std::memory_order_relaxed);
}

void CountMax(Counter counter, uint64_t value) {
	auto &slot = Values()[static_cast<size_t>(counter)];
	auto current = slot.load(std::memory_order_relaxed);
	while (value > current && !slot.compare_exchange_weak(current, value, std::memory_order_relaxed)) {
	}
}

std::vector<std::pair<std::string, uint64_t>> CounterValues() {
	std::vector<std::pair<std::string, uint64_t>> out;
	for (size_t i = 0; i < COUNTERS; i++) {
		out.emplace_back(NAMES[i], Values()[i].load(std::memory_order_relaxed));
	}
	return out;
}

} // namespace differential
