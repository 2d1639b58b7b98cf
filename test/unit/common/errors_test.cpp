// Reading our errors back out of the text DuckDB made of them: code and detail whole, whatever surrounds them,
// and nothing read out of text that only looks like our prefix.
#include "common/errors.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace differential;

TEST(ParseRaisedError, ReadsCodeAndDetailInsideDuckDBContext) {
	DifferentialError raised(ErrorKind::NOT_FOUND, ErrorCode::BRANCH_NOT_FOUND,
	                         "Branch 'x' does not exist. List branches with differential_branches().");
	auto text = std::string("Failed to attach database: ") + raised.what();
	auto parsed = ParseRaisedError(ErrorKind::NOT_FOUND, text);
	ASSERT_TRUE(parsed.has_value());
	EXPECT_EQ(parsed->code, ErrorCode::BRANCH_NOT_FOUND);
	EXPECT_EQ(parsed->detail, raised.detail);
	EXPECT_EQ(std::string(parsed->what()), std::string(raised.what()));
	EXPECT_EQ(parsed->kind, ErrorKind::NOT_FOUND);
}

TEST(ParseRaisedError, IgnoresWhatIsNotOurPrefix) {
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "Catalog Error: Table with name t does not exist!").has_value());
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "[differential:] empty code").has_value());
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "[differential:Bad Code] spaces").has_value());
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "ends early [differential:io_error").has_value());
	// A well-formed prefix with a code the registry does not have is not ours either.
	EXPECT_FALSE(ParseRaisedError(ErrorKind::IO, "[differential:no_such_code] text").has_value());
	// A lookalike first, then ours: ours is found.
	auto parsed = ParseRaisedError(ErrorKind::IO, "[differential:x y] then [differential:io_error] disk full");
	ASSERT_TRUE(parsed.has_value());
	EXPECT_EQ(parsed->code, ErrorCode::IO_ERROR);
	EXPECT_EQ(parsed->detail, "disk full");
}

TEST(ParseRaisedError, NeedsNoMemoryOfTheRaise) {
	// The text alone carries the error: raising any number of others in between changes nothing.
	DifferentialError first(ErrorKind::CONFLICT, ErrorCode::BRANCH_LOCKED, "held elsewhere");
	for (int i = 0; i < 1000; i++) {
		DifferentialError other(ErrorKind::IO, ErrorCode::IO_ERROR, "noise " + std::to_string(i));
	}
	auto parsed = ParseRaisedError(ErrorKind::CONFLICT, first.what());
	ASSERT_TRUE(parsed.has_value());
	EXPECT_EQ(parsed->code, ErrorCode::BRANCH_LOCKED);
}

TEST(ErrorCodeRegistry, EveryCodeReadsBackAsItself) {
	// The enum and the table come from one list; a code's text names it again, and no two codes share a text.
	for (size_t i = 0; i < ERROR_CODE_COUNT; i++) {
		auto code = static_cast<ErrorCode>(i);
		auto again = ErrorCodeOf(ToString(code));
		ASSERT_TRUE(again.has_value()) << ToString(code);
		EXPECT_EQ(*again, code) << ToString(code);
	}
	EXPECT_EQ(KindOf(ErrorCode::BRANCH_LOCKED), ErrorKind::CONFLICT);
	EXPECT_FALSE(ErrorCodeOf("Branch_Locked").has_value());
}
