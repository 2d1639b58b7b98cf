// One conformance suite, typed over the ObjectStore interface: every store must behave as S3 does for
// what storage relies on (conditional writes, checksums, ranges, listing order and pages).
#include "remote/conditional_write_probe.hpp"
#include "store_fixtures.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <gtest/gtest.h>
#include <mutex>
#include <random>
#include <thread>

namespace differential {
namespace test {

template <class Kind>
class ObjectStoreConformance : public StoreTest<Kind> {
protected:
	std::string GetText(const std::string &key) {
		auto result = this->store->Get(key);
		EXPECT_TRUE(result.outcome.Ok()) << result.outcome.detail;
		return result.data;
	}
};

TYPED_TEST_SUITE(ObjectStoreConformance, StoreKinds, KindNames);

static std::string RandomBytes(size_t size, uint32_t seed) {
	std::mt19937 generator(seed);
	std::string out(size, '\0');
	for (auto &c : out) {
		c = static_cast<char>(generator());
	}
	return out;
}

TYPED_TEST(ObjectStoreConformance, PutGetHeadRoundTrip) {
	auto bytes = RandomBytes(1 << 20, 1); // binary, with NULs, more than one network read
	auto put = this->PutText("packs/one", bytes);
	ASSERT_TRUE(put.outcome.Ok()) << put.outcome.detail;
	EXPECT_FALSE(put.etag.empty());
	auto get = this->store->Get("packs/one");
	ASSERT_TRUE(get.outcome.Ok()) << get.outcome.detail;
	EXPECT_TRUE(get.data == bytes);
	EXPECT_EQ(get.etag, put.etag);
	EXPECT_EQ(get.object_size, bytes.size());
	auto head = this->store->Head("packs/one");
	ASSERT_TRUE(head.outcome.Ok()) << head.outcome.detail;
	EXPECT_EQ(head.info.etag, put.etag);
	EXPECT_EQ(head.info.size, bytes.size());
	// An empty object is an object too.
	ASSERT_TRUE(this->PutText("empty", "").outcome.Ok());
	EXPECT_EQ(this->GetText("empty"), "");
	EXPECT_EQ(this->store->Head("empty").info.size, 0u);
}

TYPED_TEST(ObjectStoreConformance, FullPackRoundTrip) {
	// A pack is at most 8 MiB: the whole of one, and a chunk-sized range across its middle.
	auto pack = RandomBytes(8 << 20, 3);
	auto put = this->PutText("packs/full", pack, PutCondition::CreateOnly());
	ASSERT_TRUE(put.outcome.Ok()) << put.outcome.detail;
	auto get = this->store->Get("packs/full");
	ASSERT_TRUE(get.outcome.Ok()) << get.outcome.detail;
	EXPECT_TRUE(get.data == pack);
	auto chunk = this->store->Get("packs/full", ByteRange {(4 << 20) - 100, 256 << 10});
	ASSERT_TRUE(chunk.outcome.Ok()) << chunk.outcome.detail;
	EXPECT_TRUE(chunk.data == pack.substr((4 << 20) - 100, 256 << 10));
	EXPECT_EQ(chunk.object_size, pack.size());
}

TYPED_TEST(ObjectStoreConformance, OverwriteChangesEtag) {
	auto first = this->PutText("heads/main", "one");
	auto second = this->PutText("heads/main", "two");
	ASSERT_TRUE(first.outcome.Ok() && second.outcome.Ok());
	EXPECT_NE(first.etag, second.etag);
	EXPECT_EQ(this->GetText("heads/main"), "two");
}

TYPED_TEST(ObjectStoreConformance, RangedGet) {
	auto bytes = RandomBytes(100000, 2);
	ASSERT_TRUE(this->PutText("ranged", bytes).outcome.Ok());
	auto middle = this->store->Get("ranged", ByteRange {12345, 1000});
	ASSERT_TRUE(middle.outcome.Ok()) << middle.outcome.detail;
	EXPECT_TRUE(middle.data == bytes.substr(12345, 1000));
	EXPECT_EQ(middle.object_size, bytes.size());
	auto tail = this->store->Get("ranged", ByteRange {99990, 100}); // runs past the end: cut short
	ASSERT_TRUE(tail.outcome.Ok()) << tail.outcome.detail;
	EXPECT_TRUE(tail.data == bytes.substr(99990));
	auto past = this->store->Get("ranged", ByteRange {100000, 10});
	EXPECT_EQ(past.outcome.status, ObjectStatus::INVALID) << past.outcome.detail;
	EXPECT_EQ(this->store->Get("ranged", ByteRange {5, 0}).outcome.status, ObjectStatus::INVALID);
}

TYPED_TEST(ObjectStoreConformance, MissingKeys) {
	EXPECT_EQ(this->store->Get("nothing/here").outcome.status, ObjectStatus::NOT_FOUND);
	EXPECT_EQ(this->store->Get("nothing", ByteRange {0, 10}).outcome.status, ObjectStatus::NOT_FOUND);
	EXPECT_EQ(this->store->Head("nothing").outcome.status, ObjectStatus::NOT_FOUND);
	EXPECT_TRUE(this->store->Delete("nothing").Ok()); // as S3: deleting what is not there succeeds
	// A prefix of existing keys is not an object.
	ASSERT_TRUE(this->PutText("dir/leaf", "x").outcome.Ok());
	EXPECT_EQ(this->store->Head("dir").outcome.status, ObjectStatus::NOT_FOUND);
	EXPECT_EQ(this->store->Get("dir").outcome.status, ObjectStatus::NOT_FOUND);
}

TYPED_TEST(ObjectStoreConformance, DeleteRemoves) {
	ASSERT_TRUE(this->PutText("commits/c1", "record").outcome.Ok());
	ASSERT_TRUE(this->store->Delete("commits/c1").Ok());
	EXPECT_EQ(this->store->Head("commits/c1").outcome.status, ObjectStatus::NOT_FOUND);
	// The name is free again, also for a create-only write.
	EXPECT_TRUE(this->PutText("commits/c1", "again", PutCondition::CreateOnly()).outcome.Ok());
}

TYPED_TEST(ObjectStoreConformance, ListInKeyOrderWithPages) {
	std::vector<std::string> keys = {"idx/b", "idx/a", "idx/c/1", "idx/c/2", "idx/d", "idx/e", "idx/f"};
	for (auto &key : keys) {
		ASSERT_TRUE(this->PutText(key, "v-" + key).outcome.Ok()) << key;
	}
	ASSERT_TRUE(this->PutText("idy", "outside").outcome.Ok());
	ASSERT_TRUE(this->PutText("other/a", "outside").outcome.Ok());
	std::sort(keys.begin(), keys.end());
	std::vector<std::string> seen;
	std::string token;
	int pages = 0;
	do {
		auto page = this->store->List("idx/", token, 3);
		ASSERT_TRUE(page.outcome.Ok()) << page.outcome.detail;
		ASSERT_LE(page.objects.size(), 3u);
		for (auto &object : page.objects) {
			seen.push_back(object.key);
			EXPECT_EQ(object.size, ("v-" + object.key).size());
			EXPECT_EQ(object.etag, this->store->Head(object.key).info.etag);
		}
		token = page.next_token;
		ASSERT_LT(++pages, 10);
	} while (!token.empty());
	EXPECT_EQ(seen, keys);
	EXPECT_EQ(pages, 3);
	std::vector<ObjectInfo> all;
	ASSERT_TRUE(ListAll(*this->store, "idx/c", all).Ok());
	ASSERT_EQ(all.size(), 2u);
	EXPECT_EQ(all[0].key, "idx/c/1");
	auto none = this->store->List("absent/");
	EXPECT_TRUE(none.outcome.Ok());
	EXPECT_TRUE(none.objects.empty());
	EXPECT_TRUE(none.next_token.empty());
}

TYPED_TEST(ObjectStoreConformance, CreateOnlyRefusesExisting) {
	auto first = this->PutText("descriptors/d", "first", PutCondition::CreateOnly());
	ASSERT_TRUE(first.outcome.Ok()) << first.outcome.detail;
	auto second = this->PutText("descriptors/d", "second", PutCondition::CreateOnly());
	EXPECT_EQ(second.outcome.status, ObjectStatus::PRECONDITION_FAILED) << second.outcome.detail;
	EXPECT_EQ(this->GetText("descriptors/d"), "first");
}

TYPED_TEST(ObjectStoreConformance, IfMatchRefusesStaleEtag) {
	auto v1 = this->PutText("branches/main", "v1");
	ASSERT_TRUE(v1.outcome.Ok());
	auto v2 = this->PutText("branches/main", "v2", PutCondition::IfMatch(v1.etag));
	ASSERT_TRUE(v2.outcome.Ok()) << v2.outcome.detail;
	auto stale = this->PutText("branches/main", "v3", PutCondition::IfMatch(v1.etag));
	EXPECT_EQ(stale.outcome.status, ObjectStatus::PRECONDITION_FAILED) << stale.outcome.detail;
	EXPECT_EQ(this->GetText("branches/main"), "v2");
	auto missing = this->PutText("branches/none", "v1", PutCondition::IfMatch(v1.etag));
	EXPECT_EQ(missing.outcome.status, ObjectStatus::NOT_FOUND) << missing.outcome.detail;
	EXPECT_EQ(this->store->Head("branches/none").outcome.status, ObjectStatus::NOT_FOUND);
}

TYPED_TEST(ObjectStoreConformance, WrongChecksumIsRefused) {
	std::string text = "chunk bytes";
	PutRequest request;
	request.key = "packs/bad";
	request.data = text.data();
	request.size = text.size();
	request.sha256 = Sha256("other bytes", 11);
	auto put = this->store->Put(request);
	EXPECT_EQ(put.outcome.status, ObjectStatus::INVALID) << put.outcome.detail;
	EXPECT_EQ(this->store->Head("packs/bad").outcome.status, ObjectStatus::NOT_FOUND);
	request.sha256 = Sha256(text.data(), text.size()); // the right one passes
	EXPECT_TRUE(this->store->Put(request).outcome.Ok());
}

TYPED_TEST(ObjectStoreConformance, InvalidKeysAreRefused) {
	for (const std::string &key :
	     std::vector<std::string> {"", "/abs", "a//b", "a/../b", "trailing/", "a/./b", std::string(256, 'k'),
	                               std::string("nul\0x", 5), ".differential-store/x"}) {
		EXPECT_EQ(this->PutText(key, "x").outcome.status, ObjectStatus::INVALID) << key;
		EXPECT_EQ(this->store->Head(key).outcome.status, ObjectStatus::INVALID) << key;
	}
}

//! Runs `fn(i)` on `n` threads released at the same moment, so the requests really race.
template <class F>
static void Race(int n, F fn) {
	std::mutex lock;
	std::condition_variable go;
	bool started = false;
	std::vector<std::thread> threads;
	for (int i = 0; i < n; i++) {
		threads.emplace_back([&, i] {
			{
				std::unique_lock<std::mutex> guard(lock);
				go.wait(guard, [&] { return started; });
			}
			fn(i);
		});
	}
	{
		std::lock_guard<std::mutex> guard(lock);
		started = true;
	}
	go.notify_all();
	for (auto &thread : threads) {
		thread.join();
	}
}

TYPED_TEST(ObjectStoreConformance, OneOfEightCreateOnlyWritersWins) {
	std::atomic<int> wins {0}, refused {0};
	std::vector<std::string> bodies(8);
	Race(8, [&](int i) {
		bodies[i] = "writer-" + std::to_string(i);
		auto put = this->PutText("heads/race", bodies[i], PutCondition::CreateOnly());
		bool lost =
		    put.outcome.status == ObjectStatus::PRECONDITION_FAILED || put.outcome.status == ObjectStatus::CONFLICT;
		(put.outcome.Ok() ? wins : refused)++;
		EXPECT_TRUE(put.outcome.Ok() || lost) << put.outcome.detail;
	});
	EXPECT_EQ(wins.load(), 1);
	EXPECT_EQ(refused.load(), 7);
	auto winner = this->GetText("heads/race");
	EXPECT_NE(std::find(bodies.begin(), bodies.end(), winner), bodies.end());
}

TYPED_TEST(ObjectStoreConformance, OneOfEightIfMatchWritersWins) {
	auto base = this->PutText("heads/main", "base");
	ASSERT_TRUE(base.outcome.Ok());
	std::atomic<int> wins {0};
	Race(8, [&](int i) {
		auto put = this->PutText("heads/main", "writer-" + std::to_string(i), PutCondition::IfMatch(base.etag));
		wins += put.outcome.Ok() ? 1 : 0;
		EXPECT_TRUE(put.outcome.Ok() || put.outcome.status == ObjectStatus::PRECONDITION_FAILED ||
		            put.outcome.status == ObjectStatus::CONFLICT)
		    << put.outcome.detail;
	});
	EXPECT_EQ(wins.load(), 1);
}

TYPED_TEST(ObjectStoreConformance, IfMatchCounterLosesNoUpdate) {
	// 8 writers each add 5 to a counter by read, then If-Match write, retrying on a lost race: any lost
	// update would show in the total.
	ASSERT_TRUE(this->PutText("counter", "0").outcome.Ok());
	std::atomic<int> attempts {0};
	Race(8, [&](int) {
		for (int done = 0; done < 5 && attempts < 2000; attempts++) {
			auto get = this->store->Get("counter");
			ASSERT_TRUE(get.outcome.Ok()) << get.outcome.detail;
			auto next = std::to_string(std::stoi(get.data) + 1);
			auto put = this->PutText("counter", next, PutCondition::IfMatch(get.etag));
			done += put.outcome.Ok() ? 1 : 0;
		}
	});
	EXPECT_EQ(this->GetText("counter"), "40");
}

TYPED_TEST(ObjectStoreConformance, PassesTheConditionalWriteProbe) {
	auto probe = ProbeConditionalWrites(*this->store, "scratch/");
	EXPECT_TRUE(probe.passed) << probe.failure;
	std::vector<ObjectInfo> left;
	ASSERT_TRUE(ListAll(*this->store, "scratch/", left).Ok());
	EXPECT_TRUE(left.empty()); // the probe cleans up after itself
}

} // namespace test
} // namespace differential
