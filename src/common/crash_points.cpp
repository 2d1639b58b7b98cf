// Reads DIFFERENTIAL_CRASH_POINT once; counts hits of the named point and kills the process.
#include "common/crash_points.hpp"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

namespace differential {

struct CrashConfig {
	bool enabled = false;
	std::string label;
	long target = 1;
	std::atomic<long> hits {0};
};

static CrashConfig &Config() {
	static CrashConfig *config = []() {
		auto c = new CrashConfig();
		auto env = std::getenv("DIFFERENTIAL_CRASH_POINT");
		if (env && *env) {
			std::string spec = env;
			auto colon = spec.rfind(':');
			c->label = spec.substr(0, colon);
			c->target = colon == std::string::npos ? 1 : std::atol(spec.c_str() + colon + 1);
			c->enabled = true;
		}
		return c;
	}();
	return *config;
}

void CrashPoint(const char *label) {
	auto &config = Config();
	if (!config.enabled || config.label != label) {
		return;
	}
	if (++config.hits >= config.target) {
		kill(getpid(), SIGKILL);
		pause();
	}
}

} // namespace differential
