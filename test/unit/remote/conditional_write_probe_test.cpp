// The probe must catch a store that does not honour conditions: here a wrapper that drops them, as
// an S3 server without conditional writes would (s3proxy lets 2+ racing writers win, for one).
#include "remote/conditional_write_probe.hpp"
#include "remote/local_object_store.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

namespace differential {
namespace test {

//! Passes everything on, but with some conditions removed.
class ConditionDroppingStore : public ObjectStore {
public:
	ConditionDroppingStore(ObjectStore &inner_p, bool drop_create_only, bool drop_if_match)
	    : inner(inner_p), drop_create_only(drop_create_only), drop_if_match(drop_if_match) {
	}
	PutResult Put(const PutRequest &request) override {
		PutRequest copy = request;
		auto kind = request.condition.kind;
		if ((kind == PutCondition::Kind::IF_NONE_MATCH_ANY && drop_create_only) ||
		    (kind == PutCondition::Kind::IF_MATCH && drop_if_match)) {
			copy.condition = PutCondition::None();
		}
		return inner.Put(copy);
	}
	GetResult Get(const std::string &key, const std::optional<ByteRange> &range) override {
		return inner.Get(key, range);
	}
	HeadResult Head(const std::string &key) override {
		return inner.Head(key);
	}
	ListPage List(const std::string &prefix, const std::string &token, uint32_t max_keys) override {
		return inner.List(prefix, token, max_keys);
	}
	ObjectOutcome Delete(const std::string &key) override {
		return inner.Delete(key);
	}
	std::string Describe() const override {
		return inner.Describe();
	}

private:
	ObjectStore &inner;
	bool drop_create_only;
	bool drop_if_match;
};

TEST(ConditionalWriteProbe, RefusesAStoreThatIgnoresIfNoneMatch) {
	TempDir dir;
	LocalObjectStore local(dir.Sub("s"));
	ConditionDroppingStore store(local, true, false);
	auto probe = ProbeConditionalWrites(store, "");
	EXPECT_FALSE(probe.passed);
	EXPECT_NE(probe.failure.find("If-None-Match"), std::string::npos) << probe.failure;
	EXPECT_EQ(probe.status, ObjectStatus::OK); // the refused write went through
}

TEST(ConditionalWriteProbe, RefusesAStoreThatIgnoresIfMatch) {
	TempDir dir;
	LocalObjectStore local(dir.Sub("s"));
	ConditionDroppingStore store(local, false, true);
	auto probe = ProbeConditionalWrites(store, "");
	EXPECT_FALSE(probe.passed);
	EXPECT_NE(probe.failure.find("stale etag"), std::string::npos) << probe.failure;
}

TEST(ConditionalWriteProbe, ReportsAStoreItCannotWriteTo) {
	TempDir dir;
	LocalObjectStore local(dir.Sub("s"));
	auto probe = ProbeConditionalWrites(local, "bad//prefix/");
	EXPECT_FALSE(probe.passed);
	EXPECT_EQ(probe.status, ObjectStatus::INVALID) << probe.failure;
}

} // namespace test
} // namespace differential
