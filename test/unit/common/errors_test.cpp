// Reading our errors back out of the text DuckDB made of them: code and detail whole, whatever surrounds them,
// and nothing read out of text that only looks like our prefix.
#include "common/errors.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace differential;

TEST(ParseRaisedError, ReadsCodeAndDetailInsideDuckDBContext) {
	DifferentialError raised(ErrorKind::NOT_FOUND, "branch_not_found",
	                         "Branch 'x' does not exist. List branches with differential_branches().");
	auto text = std::string("Failed to attach database: ") + raised.what();
	auto parsed = ParseRaisedError(ErrorKind::NOT_FOUND, text);
	ASSERT_TRUE(parsed.has_value());
	EXPECT_EQ(parsed->code, "branch_not_found");
	EXPECT_EQ(parsed->detail, raised.detail);
	EXPECT_EQ(std::string(parsed->what()), std::string(raised.what()));
	EXPECT_EQ(parsed->kind, ErrorKind::NOT_FOUND);
}

TEST(ParseRaisedError, IgnoresWhatIsNotOurPrefix) {
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "Catalog Error: Table with name t does not exist!").has_value());
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "[differential:] empty code").has_value());
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "[differential:Bad Code] spaces").has_value());
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "ends early [differential:code").has_value());
	// A lookalike first, then ours: ours is found.
	auto parsed = ParseRaisedError(ErrorKind::IO, "[differential:x y] then [differential:io_error] disk full");
	ASSERT_TRUE(parsed.has_value());
	EXPECT_EQ(parsed->code, "io_error");
	EXPECT_EQ(parsed->detail, "disk full");
}

TEST(ParseRaisedError, NeedsNoMemoryOfTheRaise) {
	// The text alone carries the error: raising any number of others in between changes nothing.
	DifferentialError first(ErrorKind::CONFLICT, "branch_locked", "held elsewhere");
	for (int i = 0; i < 1000; i++) {
		DifferentialError other(ErrorKind::IO, "io_error", "noise " + std::to_string(i));
	}
	auto parsed = ParseRaisedError(ErrorKind::CONFLICT, first.what());
	ASSERT_TRUE(parsed.has_value());
	EXPECT_EQ(parsed->code, "branch_locked");
}
