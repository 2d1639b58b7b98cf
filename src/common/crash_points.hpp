// Labelled crash points for the durability tests: with DIFFERENTIAL_CRASH_POINT=<label>:<n> in
// the environment, the process SIGKILLs itself the n-th time it reaches <label>. Unset, a point
// costs one branch on a cached flag.
#pragma once

namespace differential {

void CrashPoint(const char *label);

} // namespace differential
