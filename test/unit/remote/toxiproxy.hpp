// Toxiproxy (the pinned server and CLI from scripts/setup_toxiproxy.sh) between a store and its server,
// for latency and network faults that a real network has and loopback does not.
#pragma once

#include "remote/process.hpp"
#include "test_support.hpp"

#include <string>
#include <vector>

namespace differential {
namespace test {

class Toxiproxy {
public:
	//! Starts toxiproxy's server with its API on a free loopback port; throws when it is not installed
	//! or does not come up.
	Toxiproxy();
	~Toxiproxy();
	Toxiproxy(const Toxiproxy &) = delete;
	Toxiproxy &operator=(const Toxiproxy &) = delete;

	//! A proxy named `name` from a free loopback port to 127.0.0.1:upstream_port; returns that port.
	int AddProxy(const std::string &name, int upstream_port);
	//! A toxic on the proxy's answers (server to client), e.g. ("latency", {"latency=20"}).
	void AddToxic(const std::string &proxy, const std::string &type, const std::vector<std::string> &attributes);

private:
	void Cli(std::vector<std::string> args);

	TempDir dir;
	pid_t pid = -1;
	int api_port = 0;
};

} // namespace test
} // namespace differential
