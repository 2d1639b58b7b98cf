// Group commit: concurrent publications share transactions, and one failing publication neither
// blocks nor undoes the others.
#include "metadata/metadata_store.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace differential {

static FileAddress WalOf(const std::string &root, const std::string &database) {
	FileAddress address;
	address.repository = root;
	address.database = database;
	address.branch = "main";
	address.file_name = "database.duckdb.wal";
	return address;
}

TEST(GroupCommitTest, ConcurrentPublicationsAllLandAndFailuresStayTheirOwn) {
	test::TempDir dir;
	MetadataStore store(dir.path);
	const int databases = 6;
	const int rounds = 40;
	for (int d = 0; d < databases; d++) {
		store.history.EnsureDatabase("db" + std::to_string(d));
	}
	std::atomic<int> failures {0};
	std::vector<std::thread> threads;
	for (int d = 0; d <= databases; d++) {
		threads.emplace_back([&, d]() {
			// Thread `databases` publishes to a database that does not exist: every call must fail alone.
			auto address = WalOf(dir.path, d == databases ? "missing" : "db" + std::to_string(d));
			PublishedState state;
			for (int r = 0; r < rounds; r++) {
				RangeExtent extent;
				extent.location.segment_id = 1;
				extent.location.offset = static_cast<uint64_t>(r) * 10;
				extent.location.length = 10;
				try {
					store.files.PublishRanged(address, state, static_cast<uint64_t>(r), {extent});
				} catch (DifferentialError &e) {
					EXPECT_EQ(e.code, ErrorCode::BRANCH_NOT_FOUND);
					failures++;
				}
			}
		});
	}
	for (auto &t : threads) {
		t.join();
	}
	EXPECT_EQ(failures.load(), rounds);
	for (int d = 0; d < databases; d++) {
		StoredFile stored;
		ASSERT_TRUE(store.files.LoadFile(WalOf(dir.path, "db" + std::to_string(d)), stored));
		EXPECT_EQ(stored.length, static_cast<uint64_t>(rounds) * 10);
		ASSERT_EQ(stored.extents.size(), static_cast<size_t>(rounds));
		for (int r = 0; r < rounds; r++) {
			EXPECT_EQ(stored.extents[r].location.offset, static_cast<uint64_t>(r) * 10);
		}
	}
	StoredFile missing;
	EXPECT_FALSE(store.files.LoadFile(WalOf(dir.path, "missing"), missing));
}

} // namespace differential
