// Request identity text: different resolution mappings never share one canonical string.
#include "merge/request_identity.hpp"

#include <gtest/gtest.h>

using namespace differential;

namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(RequestIdentity, MappingsThatOnceCollidedNowDiffer) {
	// Joined without escaping, both read "a=x;b=y;": one request id could stand for either mapping.
	Pairs one_table {{"a", "x;b=y"}};
	Pairs two_tables {{"a", "x"}, {"b", "y"}};
	EXPECT_NE(CanonicalPairs(one_table), CanonicalPairs(two_tables));
	EXPECT_EQ(CanonicalPairs(two_tables), "a=x;b=y;");
	EXPECT_EQ(CanonicalPairs(one_table), "a=x\\;b\\=y;");
}

TEST(RequestIdentity, SeparatorsInsideKeysAndBackslashesStayDistinct) {
	EXPECT_NE(CanonicalPairs({{"a=b", "c"}}), CanonicalPairs({{"a", "b=c"}}));
	// A written backslash before a separator must not read as the escape of that separator.
	EXPECT_NE(CanonicalPairs({{"a", "x\\"}, {"b", "y"}}), CanonicalPairs({{"a", "x\\;b=y"}}));
	EXPECT_NE(CanonicalPairs({{"a", "x|y"}}), CanonicalPairs({{"a", "x"}}) + "|y");
}

TEST(RequestIdentity, PlainTextIsUnchanged) {
	// Requests recorded before the escaping keep matching their retries.
	EXPECT_EQ(CanonicalPairs({{"orders", "memory.main.decisions"}}), "orders=memory.main.decisions;");
	EXPECT_EQ(EscapeCanonical("\"Quoted Name\".x"), "\"Quoted Name\".x");
}

} // namespace
