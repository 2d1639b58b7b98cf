// The S3 store behind Toxiproxy: a real network's latency and resets, on loopback.
#include "remote/toxiproxy.hpp"
#include "store_fixtures.hpp"

#include <algorithm>
#include <chrono>
#include <gtest/gtest.h>

namespace differential {
namespace test {

static S3Credentials Through(int port) {
	auto credentials = ServerCredentials(S3TestServer::Shared());
	credentials.endpoint = "127.0.0.1:" + std::to_string(port);
	return credentials;
}

TEST(Toxiproxy, TwentyMillisecondsOnEveryAnswer) {
	// The benchmarks' setting: every answer's first byte comes 20 ms late.
	Toxiproxy toxiproxy;
	int port = toxiproxy.AddProxy("s3", S3TestServer::Shared().Port());
	toxiproxy.AddToxic("s3", "latency", {"latency=20"});
	S3ObjectStore store({SharedBucket(), "latency-" + RandomToken(8) + "/"}, Through(port));
	std::string text = "slow";
	PutRequest put;
	put.key = "k";
	put.data = text.data();
	put.size = text.size();
	ASSERT_TRUE(store.Put(put).outcome.Ok());
	std::vector<double> ms;
	for (int i = 0; i < 10; i++) {
		auto start = std::chrono::steady_clock::now();
		auto head = store.Head("k");
		ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
		ASSERT_TRUE(head.outcome.Ok()) << head.outcome.detail;
	}
	std::sort(ms.begin(), ms.end());
	EXPECT_GE(ms[5], 20.0);
	EXPECT_LT(ms[5], 500.0);
}

TEST(Toxiproxy, ResetConnectionsAreTransientAfterRetries) {
	Toxiproxy toxiproxy;
	int port = toxiproxy.AddProxy("s3", S3TestServer::Shared().Port());
	toxiproxy.AddToxic("s3", "reset_peer", {"timeout=0"});
	S3Tuning tuning;
	tuning.max_retries = 2;
	tuning.backoff_scale_ms = 10;
	S3ObjectStore store({SharedBucket(), "reset/"}, Through(port), tuning);
	auto head = store.Head("k");
	EXPECT_EQ(head.outcome.status, ObjectStatus::TRANSIENT) << head.outcome.detail;
	EXPECT_EQ(head.outcome.attempts, 3u);
}

} // namespace test
} // namespace differential
