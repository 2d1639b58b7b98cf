// Testing build only: reads DIFFERENTIAL_FAULT_POINT once and counts passes of the named point; unset, a point costs
// one branch on a cached flag.
#include "common/fault_points.hpp"

#ifdef DIFFERENTIAL_TESTING
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <string>

namespace differential {

namespace {

struct FaultConfig {
	bool enabled = false;
	std::string label;
	long target = 1;
	int error = EIO;
	std::atomic<long> passes {0};
};

int ErrnoNamed(const std::string &name) {
	if (name == "ENOSPC") {
		return ENOSPC;
	}
	return EIO;
}

//! Parses "<label>:<n>[:<errno>]" into `c`; an empty spec disables every point.
void Configure(FaultConfig &c, const std::string &spec) {
	c.enabled = false;
	c.label.clear();
	c.target = 1;
	c.error = EIO;
	c.passes = 0;
	if (spec.empty()) {
		return;
	}
	auto first = spec.find(':');
	c.label = spec.substr(0, first);
	if (first != std::string::npos) {
		auto second = spec.find(':', first + 1);
		c.target = std::atol(spec.substr(first + 1, second - first - 1).c_str());
		if (second != std::string::npos) {
			c.error = ErrnoNamed(spec.substr(second + 1));
		}
	}
	c.enabled = c.target > 0;
}

FaultConfig &Config() {
	static FaultConfig *config = []() {
		auto c = new FaultConfig();
		auto env = std::getenv("DIFFERENTIAL_FAULT_POINT");
		Configure(*c, env ? env : "");
		return c;
	}();
	return *config;
}

} // namespace

int InjectedFault(const char *label) {
	auto &config = Config();
	if (!config.enabled || config.label != label) {
		return 0;
	}
	return ++config.passes == config.target ? config.error : 0;
}

void SetFaultPointForTesting(const std::string &spec) {
	Configure(Config(), spec);
}

bool MutationEnabled(const char *label) {
	static const std::string mutation = []() {
		auto env = std::getenv("DIFFERENTIAL_MUTATION");
		return std::string(env ? env : "");
	}();
	return !mutation.empty() && mutation == label;
}

} // namespace differential

#endif // DIFFERENTIAL_TESTING
