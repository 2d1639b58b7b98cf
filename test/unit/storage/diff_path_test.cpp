// diff:// paths: building and parsing round trips, and hostile paths refused before they reach the file system.
#include "storage/diff_path.hpp"

#include "test_support.hpp"

#include <gtest/gtest.h>

#include <string>

using namespace differential;
using differential::test::RaisedCode;

namespace {

std::string ParseError(const std::string &path) {
	return RaisedCode([&] { ParseDiffPath(path); });
}

} // namespace

TEST(DiffPathTest, BranchPathRoundTrip) {
	auto path = BranchPath("/data/repo", "analytics", "feature-1.x");
	EXPECT_EQ(path, "diff:///data/repo/@/analytics/feature-1.x/database.duckdb");
	ASSERT_TRUE(IsDiffPath(path));
	auto addr = ParseDiffPath(path);
	EXPECT_EQ(addr.repository, "/data/repo");
	EXPECT_EQ(addr.database, "analytics");
	EXPECT_EQ(addr.branch, "feature-1.x");
	EXPECT_EQ(addr.snapshot_id, -1);
	EXPECT_FALSE(addr.IsSnapshot());
	EXPECT_EQ(addr.file_name, "database.duckdb");
	EXPECT_TRUE(addr.IsMainFile());
	EXPECT_EQ(addr.ToPath(), path);
	EXPECT_EQ(addr.OwnerKey(), "/data/repo/@/analytics/feature-1.x");
}

TEST(DiffPathTest, SnapshotPathRoundTrip) {
	auto path = SnapshotPath("/data/repo", "analytics", 42);
	EXPECT_EQ(path, "diff:///data/repo/@/analytics/~42/database.duckdb");
	auto addr = ParseDiffPath(path);
	EXPECT_EQ(addr.repository, "/data/repo");
	EXPECT_EQ(addr.database, "analytics");
	EXPECT_TRUE(addr.branch.empty());
	EXPECT_EQ(addr.snapshot_id, 42);
	EXPECT_TRUE(addr.IsSnapshot());
	EXPECT_TRUE(addr.IsMainFile());
	EXPECT_EQ(addr.ToPath(), path);
	EXPECT_EQ(addr.OwnerKey(), "/data/repo/@/analytics/~42");
	EXPECT_EQ(ParseDiffPath(SnapshotPath("/r", "d", 0)).snapshot_id, 0);
}

TEST(DiffPathTest, WalCompanionsParse) {
	for (auto suffix : {".wal", ".wal.checkpoint", ".wal.recovery"}) {
		auto path = BranchPath("/r", "db", "main") + suffix;
		auto addr = ParseDiffPath(path);
		EXPECT_EQ(addr.file_name, std::string("database.duckdb") + suffix);
		EXPECT_FALSE(addr.IsMainFile());
		EXPECT_EQ(addr.ToPath(), path);
		// The companions share the owner of the main file, so locks and handle counts cover them.
		EXPECT_EQ(addr.OwnerKey(), ParseDiffPath(BranchPath("/r", "db", "main")).OwnerKey());
	}
}

TEST(DiffPathTest, RepositoryMayContainTheSeparator) {
	// The last "/@/" separates the repository from the database: names cannot contain '@' or '/'.
	auto path = BranchPath("/odd/@/repo", "db", "main");
	auto addr = ParseDiffPath(path);
	EXPECT_EQ(addr.repository, "/odd/@/repo");
	EXPECT_EQ(addr.database, "db");
	EXPECT_EQ(addr.ToPath(), path);
}

TEST(DiffPathTest, IsDiffPath) {
	EXPECT_TRUE(IsDiffPath("diff:///x"));
	EXPECT_FALSE(IsDiffPath("/tmp/diff:///x"));
	EXPECT_FALSE(IsDiffPath("DIFF:///x"));
	EXPECT_FALSE(IsDiffPath("diff:/x"));
	EXPECT_FALSE(IsDiffPath(""));
}

TEST(DiffPathTest, RejectsMissingOrWrongScheme) {
	EXPECT_EQ(ParseError("/r/@/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("file:///r/@/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("DIFF:///r/@/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:/r/@/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError(""), "invalid_path");
	EXPECT_EQ(ParseError("diff://"), "invalid_path");
}

TEST(DiffPathTest, RejectsMalformedStructure) {
	// No separator, relative repository, empty repository, too few or too many components.
	EXPECT_EQ(ParseError("diff:///r/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff://r/@/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff://@/db/main/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/main/extra/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/main/database.duckdb/"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/"), "invalid_path");
}

TEST(DiffPathTest, RejectsWrongFileName) {
	EXPECT_EQ(ParseError("diff:///r/@/db/main/other.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/main/database.duck"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/main/"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/main/..database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/main/DATABASE.DUCKDB"), "invalid_path");
}

TEST(DiffPathTest, RejectsTraversal) {
	EXPECT_EQ(ParseError("diff:///r/@/../main/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/db/../database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/db/./database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/db/../../database.duckdb"), "invalid_path");
}

TEST(DiffPathTest, RejectsSeparatorsAndControlCharactersInNames) {
	EXPECT_EQ(ParseError("diff:///r/@/db/ma\\in/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/d\\b/main/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError(std::string("diff:///r/@/db/ma\0in/database.duckdb", 36)), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/db/ma\nin/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/d\x01/main/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/db/main\x7f/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@//main/database.duckdb"), "invalid_name");
	EXPECT_EQ(ParseError("diff:///r/@/db//database.duckdb"), "invalid_name");
}

TEST(DiffPathTest, RejectsOverlongNames) {
	EXPECT_NO_THROW(ParseDiffPath(BranchPath("/r", std::string(128, 'd'), std::string(128, 'b'))));
	EXPECT_EQ(ParseError(BranchPath("/r", std::string(129, 'd'), "main")), "invalid_name");
	EXPECT_EQ(ParseError(BranchPath("/r", "db", std::string(129, 'b'))), "invalid_name");
	EXPECT_EQ(ParseError(BranchPath("/r", "db", std::string(10000, 'b'))), "invalid_name");
}

TEST(DiffPathTest, RejectsMalformedSnapshotIds) {
	EXPECT_EQ(ParseError("diff:///r/@/db/~/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~-1/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~1x/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~x1/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~99999999999999999999999/database.duckdb"), "invalid_path");
}

TEST(DiffPathTest, SnapshotIdsMustBeCanonical) {
	// One snapshot, one path: no sign, no whitespace (let alone control characters), no leading zeros.
	EXPECT_EQ(ParseError("diff:///r/@/db/~+1/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~ 1/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~\n1/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~\t7/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~007/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseError("diff:///r/@/db/~-0/database.duckdb"), "invalid_path");
	EXPECT_EQ(ParseDiffPath("diff:///r/@/db/~7/database.duckdb").snapshot_id, 7);
}

TEST(DiffPathTest, RefusalQuotesControlCharacters) {
	try {
		ParseDiffPath("file:///evil\x1b[2J");
		FAIL() << "no exception";
	} catch (const DifferentialError &e) {
		std::string message = e.what();
		EXPECT_EQ(message.find('\x1b'), std::string::npos);
		EXPECT_NE(message.find("\\x1b"), std::string::npos) << message;
	}
}
