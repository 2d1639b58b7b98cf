// FaultProxy: one thread accepts, one thread per connection moves bytes both ways with poll(2).
#include "remote/fault_proxy.hpp"

#include <arpa/inet.h>
#include <cstdint>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace differential {
namespace test {

static sockaddr_in Loopback(int port) {
	sockaddr_in addr {};
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	addr.sin_port = htons(static_cast<uint16_t>(port));
	return addr;
}

FaultProxy::FaultProxy(int upstream_port_p) : upstream_port(upstream_port_p) {
	listener = socket(AF_INET, SOCK_STREAM, 0);
	auto addr = Loopback(0);
	socklen_t len = sizeof(addr);
	if (bind(listener, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 || listen(listener, 64) != 0 ||
	    getsockname(listener, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
		close(listener);
		throw std::runtime_error("fault proxy: cannot listen on 127.0.0.1");
	}
	port = ntohs(addr.sin_port);
	acceptor = std::thread([this] { AcceptLoop(); });
}

FaultProxy::~FaultProxy() {
	stopping = true;
	acceptor.join();
	close(listener);
	std::lock_guard<std::mutex> guard(lock);
	for (auto &pump : pumps) {
		pump.join();
	}
}

void FaultProxy::AcceptLoop() {
	while (!stopping) {
		pollfd poll_listener {listener, POLLIN, 0};
		if (poll(&poll_listener, 1, 50) <= 0) {
			continue; // wake up now and then to notice `stopping`
		}
		int client = accept(listener, nullptr, nullptr);
		if (client < 0) {
			continue;
		}
		int upstream = socket(AF_INET, SOCK_STREAM, 0);
		auto addr = Loopback(upstream_port);
		if (connect(upstream, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
			close(upstream);
			close(client);
			continue;
		}
		connections++;
		auto fault = drops_left.fetch_sub(1) > 0    ? Fault::DROP
		             : stalls_left.fetch_sub(1) > 0 ? Fault::STALL
		             : cuts_left.fetch_sub(1) > 0   ? Fault::CUT
		                                            : Fault::NONE;
		std::lock_guard<std::mutex> guard(lock);
		pumps.emplace_back([this, client, upstream, fault] { Pump(client, upstream, fault); });
	}
}

void FaultProxy::Pump(int client, int upstream, Fault fault) {
	char buffer[65536];
	pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
	// A stalled connection reads the answer and sends nothing back until the client gives up.
	bool drop_response = fault == Fault::DROP, hold_response = fault == Fault::STALL;
	// A cut connection passes this many bytes of the answer on, then closes.
	size_t answer_left = fault == Fault::CUT ? cut_after.load() : SIZE_MAX;
	while (!stopping) {
		if (poll(fds, 2, 50) <= 0) {
			continue;
		}
		bool closed = false;
		for (int i = 0; i < 2 && !closed; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				continue;
			}
			auto n = read(fds[i].fd, buffer, sizeof(buffer));
			if (i == 1 && hold_response && n <= 0) {
				fds[1].fd = -1; // the server is done (it may close); the client still waits, in vain
				continue;
			}
			// The server has carried the request out and begun its answer: swallow it and hang up.
			closed = n <= 0 || (i == 1 && drop_response);
			bool cut = false;
			if (!closed && i == 1 && static_cast<size_t>(n) >= answer_left) {
				n = static_cast<ssize_t>(answer_left);
				cut = true;
			} else if (!closed && i == 1 && answer_left != SIZE_MAX) {
				answer_left -= static_cast<size_t>(n);
			}
			for (ssize_t sent = 0; !closed && !(i == 1 && hold_response) && sent < n;) {
				auto m = write(fds[1 - i].fd, buffer + sent, static_cast<size_t>(n - sent));
				closed = m <= 0;
				sent += m > 0 ? m : 0;
			}
			closed = closed || cut;
		}
		if (closed) {
			break;
		}
	}
	close(client);
	close(upstream);
}

} // namespace test
} // namespace differential
