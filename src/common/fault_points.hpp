// Labelled fault points for the fault-injection tests: with DIFFERENTIAL_FAULT_POINT=<label>:<n>[:<errno>]
// in the environment, the n-th pass of <label> reports that errno (EIO unless ENOSPC is named) once.
#pragma once

#include <string>

namespace differential {

//! The errno an I/O edge must fail with at this pass of `label` (exactly once: the n-th pass), or 0.
//! Callers fail the way the real call would (return -1 with errno set) so the real error path runs.
int InjectedFault(const char *label);
//! Unit tests (one process, many cases): replaces the environment's setting; "" turns faults off.
//! Not thread-safe against concurrent InjectedFault calls.
void SetFaultPointForTesting(const std::string &spec);

} // namespace differential
