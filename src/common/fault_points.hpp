// Labelled fault points for the fault-injection tests: with DIFFERENTIAL_FAULT_POINT=<label>:<n>[:<errno>]
// in the environment, the n-th pass of <label> reports that errno (EIO unless ENOSPC is named) once;
// with DIFFERENTIAL_MUTATION=<label>, a named mutation (a deliberate bug the tests must catch) is on.
// Both exist only in the testing build (DIFFERENTIAL_TESTING): the release extension compiles every
// point to "no fault" and every mutation to "off", so no environment can make it fail or compute wrong.
#pragma once

#include <string>

namespace differential {

#ifdef DIFFERENTIAL_TESTING
//! The errno an I/O edge must fail with at this pass of `label` (exactly once: the n-th pass), or 0.
//! Callers fail the way the real call would (return -1 with errno set) so the real error path runs.
int InjectedFault(const char *label);
//! Unit tests (one process, many cases): replaces the environment's setting; "" turns faults off.
//! Not thread-safe against concurrent InjectedFault calls.
void SetFaultPointForTesting(const std::string &spec);

//! Whether the deliberate bug `label` is switched on (DIFFERENTIAL_MUTATION, read once): mutation
//! tests turn one on to show that the tests guarding that code fail when it is wrong.
bool MutationEnabled(const char *label);
#else
inline int InjectedFault(const char *) {
	return 0;
}
inline bool MutationEnabled(const char *) {
	return false;
}
#endif

} // namespace differential
