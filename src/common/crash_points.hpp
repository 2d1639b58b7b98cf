// Labelled crash points for the durability tests: with DIFFERENTIAL_CRASH_POINT=<label>:<n> in
// the environment, the process SIGKILLs itself the n-th time it reaches <label>. Unset, a point
// costs one branch on a cached flag. They exist only in the testing build (DIFFERENTIAL_TESTING):
// in the release extension every point is an empty inline function, whatever the environment says.
#pragma once

#include <string>

namespace differential {

#ifdef DIFFERENTIAL_TESTING
void CrashPoint(const char *label);
//! With DIFFERENTIAL_PAUSE_POINT=<label>:<ms>, sleeps that long each time the process reaches <label>:
//! tests use it to observe a merge in the middle (its status and progress) from another thread.
void PausePoint(const char *label);
//! The same for one object: sleeps at `label` only when DIFFERENTIAL_PAUSE_POINT names "<label>.<qualifier>", so a
//! test can slow one branch's step while others run.
void PausePoint(const char *label, const std::string &qualifier);
#else
inline void CrashPoint(const char *) {
}
inline void PausePoint(const char *) {
}
inline void PausePoint(const char *, const std::string &) {
}
#endif

} // namespace differential
