// Labelled crash points for the durability tests: with DIFFERENTIAL_CRASH_POINT=<label>:<n> in
// the environment, the process SIGKILLs itself the n-th time it reaches <label>. Unset, a point
// costs one branch on a cached flag.
#pragma once

namespace differential {

void CrashPoint(const char *label);
//! With DIFFERENTIAL_PAUSE_POINT=<label>:<ms>, sleeps that long each time the process reaches <label>:
//! tests use it to observe a merge in the middle (its status and progress) from another thread.
void PausePoint(const char *label);

} // namespace differential
