// Testing build only: reads DIFFERENTIAL_CRASH_POINT once; counts hits of the named point and kills the process.
// DIFFERENTIAL_PAUSE_POINT works the same way but sleeps instead.
#include "common/crash_points.hpp"

#ifdef DIFFERENTIAL_TESTING
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

struct PauseConfig {
	std::string label;
	long millis = 0;
};

static const PauseConfig &Pause() {
	static const PauseConfig config = []() {
		PauseConfig c;
		auto env = std::getenv("DIFFERENTIAL_PAUSE_POINT");
		if (env && *env) {
			std::string spec = env;
			auto colon = spec.rfind(':');
			c.label = spec.substr(0, colon);
			c.millis = colon == std::string::npos ? 1000 : std::atol(spec.c_str() + colon + 1);
		}
		return c;
	}();
	return config;
}

void PausePoint(const char *label) {
	auto &config = Pause();
	if (config.millis > 0 && config.label == label) {
		std::this_thread::sleep_for(std::chrono::milliseconds(config.millis));
	}
}

void PausePoint(const char *label, const std::string &qualifier) {
	auto &config = Pause();
	if (config.millis > 0 && config.label.size() == std::strlen(label) + 1 + qualifier.size() &&
	    config.label == std::string(label) + "." + qualifier) {
		std::this_thread::sleep_for(std::chrono::milliseconds(config.millis));
	}
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

#endif // DIFFERENTIAL_TESTING
