// The probe must catch a store that does not honour conditions: here a wrapper that drops them, as
// an S3 server without conditional writes would (s3proxy lets 2+ racing writers win, for one).
#include "remote/condition_dropping_store.hpp"
#include "remote/conditional_write_probe.hpp"
#include "remote/local_object_store.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

namespace differential {
namespace test {

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
