// Identifies a process across time (pid + start time), so pins and segments of processes that
// died are recognised as such even after their pid is reused.
#pragma once

#include <cstdint>

namespace differential {

//! The start time of a process in clock ticks since boot, or 0 when it does not exist.
uint64_t ProcessStartTime(int64_t pid);
uint64_t CurrentProcessStartTime();
//! True while the process that recorded (pid, start) is still running. A start of 0 (unknown)
//! trusts the pid alone.
bool ProcessAlive(int64_t pid, uint64_t start);

} // namespace differential
