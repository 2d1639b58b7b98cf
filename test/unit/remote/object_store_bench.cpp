// Measures the object stores on this machine: small-object latency and 8 MiB pack throughput, against a
// local directory and versitygw on loopback. Not a test; run build/unit/differential_remote_bench.
#include "remote/toxiproxy.hpp"
#include "store_fixtures.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <thread>
#include <unistd.h>

namespace differential {
namespace test {

using Clock = std::chrono::steady_clock;

//! Runs `op(i)` `count` times and returns the median time of one call in microseconds.
static double MedianMicros(int count, const std::function<bool(int)> &op) {
	std::vector<double> times;
	for (int i = 0; i < count; i++) {
		auto start = Clock::now();
		if (!op(i)) {
			std::fprintf(stderr, "operation %d failed\n", i);
			return -1;
		}
		times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
	}
	std::sort(times.begin(), times.end());
	return times[times.size() / 2];
}

static void Measure(const char *name, ObjectStore &store) {
	std::string small(4096, 'x'), pack(8 << 20, '\0');
	std::mt19937 generator(7);
	for (auto &c : pack) {
		c = static_cast<char>(generator());
	}
	auto put = [&](const std::string &key, const std::string &data, PutCondition condition) {
		PutRequest request;
		request.key = key;
		request.data = data.data();
		request.size = data.size();
		request.condition = std::move(condition);
		return store.Put(request).outcome.Ok();
	};
	const int n = 200, packs = 10;
	double put_small = MedianMicros(n, [&](int i) { return put("s/" + std::to_string(i), small, {}); });
	double put_create =
	    MedianMicros(n, [&](int i) { return put("c/" + std::to_string(i), small, PutCondition::CreateOnly()); });
	double head = MedianMicros(n, [&](int i) { return store.Head("s/" + std::to_string(i)).outcome.Ok(); });
	double get_small = MedianMicros(n, [&](int i) { return store.Get("s/" + std::to_string(i)).outcome.Ok(); });
	double put_pack = MedianMicros(packs, [&](int i) { return put("p/" + std::to_string(i), pack, {}); });
	double get_pack = MedianMicros(packs, [&](int i) { return store.Get("p/" + std::to_string(i)).outcome.Ok(); });
	double get_range = MedianMicros(n, [&](int i) {
		return store.Get("p/" + std::to_string(i % packs), ByteRange {uint64_t(i % 32) << 18, 1 << 18}).outcome.Ok();
	});
	// 8 writers at once: what an export that uploads packs from a thread pool can expect.
	auto start = Clock::now();
	std::vector<std::thread> writers;
	std::atomic<int> failures {0};
	for (int w = 0; w < 8; w++) {
		writers.emplace_back([&, w] {
			for (int i = 0; i < 4; i++) {
				failures += put("q/" + std::to_string(w) + "-" + std::to_string(i), pack, {}) ? 0 : 1;
			}
		});
	}
	for (auto &writer : writers) {
		writer.join();
	}
	double parallel_s = std::chrono::duration<double>(Clock::now() - start).count();
	double mib = 8.0;
	std::printf("| %s | %.0f | %.0f | %.0f | %.0f | %.1f (%.0f MiB/s) | %.1f (%.0f MiB/s) | %.0f |\n", name, put_small,
	            put_create, head, get_small, put_pack / 1000, mib / (put_pack / 1e6), get_pack / 1000,
	            mib / (get_pack / 1e6), get_range);
	std::printf("  %s: 8 writers x 4 packs of 8 MiB in %.2f s = %.0f MiB/s (%d failed)\n", name, parallel_s,
	            32 * mib / parallel_s, failures.load());
}

} // namespace test
} // namespace differential

int main() {
	using namespace differential::test;
	std::printf(
	    "| store | PUT 4 KiB µs | PUT If-None-Match 4 KiB µs | HEAD µs | GET 4 KiB µs | PUT 8 MiB ms | GET 8 MiB "
	    "ms | GET 256 KiB range µs |\n|---|---|---|---|---|---|---|---|\n");
	LocalStoreKind local;
	auto local_store = local.Make();
	Measure("local directory", *local_store);
	VersitygwStoreKind versitygw;
	auto s3_store = versitygw.Make();
	Measure("versitygw (loopback, http)", *s3_store);
	// The same server 20 ms away (Toxiproxy delays every answer): what request counts cost on a network.
	Toxiproxy toxiproxy;
	int port = toxiproxy.AddProxy("s3", S3TestServer::Shared().Port());
	toxiproxy.AddToxic("s3", "latency", {"latency=20"});
	auto credentials = ServerCredentials(S3TestServer::Shared());
	credentials.endpoint = "127.0.0.1:" + std::to_string(port);
	differential::S3ObjectStore far({SharedBucket(), "far-" + RandomToken(8) + "/"}, credentials);
	Measure("versitygw + 20 ms latency (Toxiproxy)", far);
	// The opt-in second server, when scripts/setup_seaweedfs.sh has built it.
	if (access(SEAWEEDFS_BIN, X_OK) == 0) {
		SeaweedfsStoreKind seaweedfs;
		auto seaweedfs_store = seaweedfs.Make();
		Measure("SeaweedFS (loopback, http)", *seaweedfs_store);
	}
	return 0;
}
