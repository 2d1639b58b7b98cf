// Toxiproxy: the server as a child process, configured through its own CLI (never hand-made HTTP).
#include "remote/toxiproxy.hpp"

#include <stdexcept>
#include <unistd.h>

namespace differential {
namespace test {

static const std::string SERVER = std::string(TOXIPROXY_DIR) + "/server";
static const std::string CLI = std::string(TOXIPROXY_DIR) + "/cli";

Toxiproxy::Toxiproxy() {
	if (access(SERVER.c_str(), X_OK) != 0 || access(CLI.c_str(), X_OK) != 0) {
		throw std::runtime_error("Toxiproxy is not installed at " + std::string(TOXIPROXY_DIR) +
		                         ": run scripts/setup.sh");
	}
	for (int attempt = 0; attempt < 3 && pid <= 0; attempt++) {
		api_port = FreeLoopbackPort();
		pid = Spawn({SERVER, "-host", "127.0.0.1", "-port", std::to_string(api_port)}, {"PATH=/usr/bin:/bin"},
		            dir.path + "/server.log");
		if (pid > 0 && !WaitListening(pid, api_port, 15)) {
			Stop(pid);
		}
	}
	if (pid <= 0) {
		throw std::runtime_error("toxiproxy did not start: " + ReadFile(dir.path + "/server.log"));
	}
}

Toxiproxy::~Toxiproxy() {
	Stop(pid);
}

void Toxiproxy::Cli(std::vector<std::string> args) {
	args.insert(args.begin(), {CLI, "--host", "http://127.0.0.1:" + std::to_string(api_port)});
	if (Run(args, dir.path + "/cli.log") != 0) {
		throw std::runtime_error("toxiproxy-cli failed: " + ReadFile(dir.path + "/cli.log"));
	}
}

int Toxiproxy::AddProxy(const std::string &name, int upstream_port) {
	int port = FreeLoopbackPort();
	Cli({"create", "--listen", "127.0.0.1:" + std::to_string(port), "--upstream",
	     "127.0.0.1:" + std::to_string(upstream_port), name});
	return port;
}

void Toxiproxy::AddToxic(const std::string &proxy, const std::string &type,
                         const std::vector<std::string> &attributes) {
	std::vector<std::string> args = {"toxic", "add", "--type", type};
	for (auto &attribute : attributes) {
		args.insert(args.end(), {"--attribute", attribute});
	}
	args.push_back(proxy);
	Cli(args);
}

} // namespace test
} // namespace differential
