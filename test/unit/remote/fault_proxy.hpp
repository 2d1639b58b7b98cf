// A TCP proxy on loopback between a store and the real server that can swallow responses, to prove
// what happens when a request reached the server but its answer never came back.
#pragma once

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace differential {
namespace test {

class FaultProxy {
public:
	//! Listens on a free 127.0.0.1 port and forwards every connection to 127.0.0.1:upstream_port.
	explicit FaultProxy(int upstream_port);
	~FaultProxy();
	FaultProxy(const FaultProxy &) = delete;
	FaultProxy &operator=(const FaultProxy &) = delete;

	int Port() const {
		return port;
	}
	//! The next `count` connections pass the request on, then close as soon as the server starts to
	//! answer, so the client sees a dropped connection for a request the server has carried out.
	void DropNextResponses(int count) {
		drops_left = count;
	}
	//! The next `count` connections pass the request on and then hold the server's answer back while
	//! keeping the connection open, as a hung server or network would.
	void StallNextResponses(int count) {
		stalls_left = count;
	}
	//! The next `count` connections pass the request on and then only the first `bytes` of the
	//! server's answer before closing: a connection cut in the middle of a body.
	void CutNextResponses(int count, size_t bytes) {
		cut_after = bytes;
		cuts_left = count;
	}
	int Connections() const {
		return connections;
	}

private:
	void AcceptLoop();
	enum class Fault { NONE, DROP, STALL, CUT };
	void Pump(int client, int upstream, Fault fault);

	int upstream_port;
	int listener = -1;
	int port = 0;
	std::atomic<bool> stopping {false};
	std::atomic<int> drops_left {0};
	std::atomic<int> stalls_left {0};
	std::atomic<int> cuts_left {0};
	std::atomic<size_t> cut_after {0};
	std::atomic<int> connections {0};
	std::thread acceptor;
	std::mutex lock;
	std::vector<std::thread> pumps;
};

} // namespace test
} // namespace differential
