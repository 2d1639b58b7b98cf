// Name validation (databases, branches, snapshots become file and lock names) and safe quoting in messages.
#include "common/names.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace differential;
using differential::test::RaisedCode;

namespace {

std::string Validate(const std::string &name) {
	return RaisedCode([&] { ValidateName("branch", name); });
}

} // namespace

TEST(ValidateNameTest, AcceptsSafeNames) {
	for (auto name : {"main", "a", "Feature_1", "release-2.0", "x.y.z", "A9_-.", "_leading_underscore", "0"}) {
		EXPECT_EQ(Validate(name), "<no exception>") << name;
	}
	EXPECT_EQ(Validate(std::string(128, 'n')), "<no exception>");
}

TEST(ValidateNameTest, RejectsEmptyAndTooLong) {
	EXPECT_EQ(Validate(""), "invalid_name");
	EXPECT_EQ(Validate(std::string(129, 'n')), "invalid_name");
	EXPECT_EQ(Validate(std::string(100000, 'n')), "invalid_name");
}

TEST(ValidateNameTest, RejectsDotAndDashPrefixes) {
	EXPECT_EQ(Validate("."), "invalid_name");
	EXPECT_EQ(Validate(".."), "invalid_name");
	EXPECT_EQ(Validate(".hidden"), "invalid_name");
	EXPECT_EQ(Validate("-rf"), "invalid_name");
}

TEST(ValidateNameTest, RejectsPathSeparatorsAndTraversal) {
	EXPECT_EQ(Validate("a/b"), "invalid_name");
	EXPECT_EQ(Validate("a\\b"), "invalid_name");
	EXPECT_EQ(Validate("x/../../etc"), "invalid_name");
	EXPECT_EQ(Validate("/abs"), "invalid_name");
}

TEST(ValidateNameTest, RejectsControlCharactersAndOthers) {
	EXPECT_EQ(Validate(std::string("a\0b", 3)), "invalid_name");
	EXPECT_EQ(Validate("tab\there"), "invalid_name");
	EXPECT_EQ(Validate("line\nbreak"), "invalid_name");
	EXPECT_EQ(Validate("del\x7f"), "invalid_name");
	EXPECT_EQ(Validate("space here"), "invalid_name");
	EXPECT_EQ(Validate("quote'"), "invalid_name");
	EXPECT_EQ(Validate("at@sign"), "invalid_name");
	EXPECT_EQ(Validate("tilde~"), "invalid_name");
	EXPECT_EQ(Validate("caf\xc3\xa9"), "invalid_name");
}

TEST(ValidateNameTest, MessageNamesTheKindAndIsInvalidInput) {
	try {
		ValidateName("snapshot", "bad/name");
		FAIL() << "no exception";
	} catch (const DifferentialError &e) {
		EXPECT_EQ(e.kind, ErrorKind::INVALID_INPUT);
		std::string message = e.what();
		EXPECT_NE(message.find("snapshot name 'bad/name'"), std::string::npos) << message;
		EXPECT_NE(message.find("path separator"), std::string::npos) << message;
	}
}

TEST(QuoteNameTest, EscapesControlCharacters) {
	EXPECT_EQ(QuoteName("plain"), "'plain'");
	EXPECT_EQ(QuoteName(std::string("a\0b", 3)), "'a\\x00b'");
	EXPECT_EQ(QuoteName("x\ny\x7f"), "'x\\x0ay\\x7f'");
	EXPECT_EQ(QuoteName("\x1b[31m"), "'\\x1b[31m'");
}

TEST(QuoteNameTest, TruncatesLongNames) {
	auto quoted = QuoteName(std::string(200, 'q'));
	EXPECT_EQ(quoted, "'" + std::string(80, 'q') + "...'");
	EXPECT_EQ(QuoteName(std::string(80, 'q')), "'" + std::string(80, 'q') + "'");
}
