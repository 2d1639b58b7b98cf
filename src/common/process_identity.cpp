// Reads /proc/<pid>/stat: field 22 is the start time, after the parenthesised command name.
#include "common/process_identity.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace differential {

uint64_t ProcessStartTime(int64_t pid) {
	auto path = "/proc/" + std::to_string(pid) + "/stat";
	FILE *f = fopen(path.c_str(), "r");
	if (!f) {
		return 0;
	}
	char buffer[1024];
	auto n = fread(buffer, 1, sizeof(buffer) - 1, f);
	fclose(f);
	buffer[n] = '\0';
	auto close_paren = strrchr(buffer, ')');
	if (!close_paren) {
		return 0;
	}
	// After ") " come fields 3, 4, ...: skip 19 of them to reach field 22.
	char *p = close_paren + 2;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p) {
			p++;
		}
	}
	return p ? std::strtoull(p, nullptr, 10) : 0;
}

uint64_t CurrentProcessStartTime() {
	static uint64_t start = ProcessStartTime(getpid());
	return start;
}

bool ProcessAlive(int64_t pid, uint64_t start) {
	if (pid <= 0) {
		return false;
	}
	if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
		return false;
	}
	return start == 0 || ProcessStartTime(pid) == start;
}

} // namespace differential
