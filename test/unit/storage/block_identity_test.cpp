// BlockIdentity answers block questions from a file version's root and index pages: block b's hash,
// holes and the file's end, page alignment across trimmed pages, and the content root.
#include "storage/block_identity.hpp"

#include "storage/chunk_geometry.hpp"
#include "storage/index_page.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace differential;

namespace {

Hash256 HashOf(const std::string &s) {
	return Sha256(s.data(), s.size());
}

//! A catalog holding published files as their chunk hashes, cut into index pages as publication does.
class FakeCatalog : public FileCatalog {
public:
	void Publish(const std::string &name, uint64_t length, const std::vector<Hash256> &chunks) {
		StoredFile file;
		file.length = length;
		for (size_t start = 0; start < chunks.size(); start += SLOTS_PER_INDEX_PAGE) {
			auto end = std::min<size_t>(chunks.size(), start + SLOTS_PER_INDEX_PAGE);
			auto blob = EncodeIndexPage(std::vector<Hash256>(chunks.begin() + start, chunks.begin() + end));
			auto hash = Sha256(blob.data(), blob.size());
			pages[hash] = blob;
			file.pages.push_back(hash);
		}
		files[name] = file;
	}
	static FileAddress Address(const std::string &name) {
		FileAddress address;
		address.repository = "/repo";
		address.database = name;
		address.snapshot_id = 1;
		address.file_name = MAIN_FILE_NAME;
		return address;
	}

	bool LoadFile(const FileAddress &file, StoredFile &out, PinKind) override {
		auto found = files.find(file.database);
		if (found == files.end()) {
			return false;
		}
		out = found->second;
		return true;
	}
	std::vector<uint8_t> LoadIndexPage(const Hash256 &page) override {
		return pages.at(page);
	}
	void Unpin(const FilePin &) override {
		throw std::logic_error("not used");
	}
	void LookupChunks(const std::vector<Hash256> &, std::vector<ChunkLocation> &) override {
		throw std::logic_error("not used");
	}
	void PublishChunked(const FileAddress &, PublishedState &, uint64_t, const std::vector<Hash256> &,
	                    const std::vector<NewIndexPage> &, const std::vector<NewChunk> &, const FilePin &) override {
		throw std::logic_error("not used");
	}
	void PublishRanged(const FileAddress &, PublishedState &, uint64_t, const std::vector<RangeExtent> &) override {
		throw std::logic_error("not used");
	}
	void RemoveFile(const FileAddress &) override {
		throw std::logic_error("not used");
	}
	void MoveFile(const FileAddress &, const FileAddress &) override {
		throw std::logic_error("not used");
	}
	uint64_t AllocateSegment() override {
		throw std::logic_error("not used");
	}

private:
	std::map<std::string, StoredFile> files;
	std::map<Hash256, std::vector<uint8_t>> pages;
};

//! Chunk hashes of a file: the headers' chunk, then one chunk per block named by `blocks`.
std::vector<Hash256> Chunks(const std::vector<std::string> &blocks) {
	std::vector<Hash256> chunks {HashOf("headers")};
	for (auto &block : blocks) {
		chunks.push_back(block.empty() ? Hash256 {} : HashOf(block));
	}
	return chunks;
}

uint64_t LengthOf(size_t blocks) {
	return FIRST_CHUNK_SIZE + blocks * CHUNK_SIZE;
}

} // namespace

TEST(BlockIdentityTest, BlockHashesComeFromTheChunkAfterTheHeaders) {
	FakeCatalog catalog;
	catalog.Publish("db", LengthOf(3), Chunks({"b0", "b1", "b2"}));
	auto identity = BlockIdentity::Load(catalog, FakeCatalog::Address("db"));
	ASSERT_TRUE(identity.Exists());
	EXPECT_EQ(identity.BlockHash(0), HashOf("b0"));
	EXPECT_EQ(identity.BlockHash(2), HashOf("b2"));
	// The file ends after block 2: no block 3, although the index page could hold its slot.
	EXPECT_FALSE(identity.BlockHash(3).has_value());
}

TEST(BlockIdentityTest, ChangedBlocksDifferAndUnchangedOnesMatch) {
	FakeCatalog catalog;
	catalog.Publish("before", LengthOf(3), Chunks({"b0", "b1", "b2"}));
	catalog.Publish("after", LengthOf(4), Chunks({"b0", "b1 changed", "b2", "b3"}));
	auto before = BlockIdentity::Load(catalog, FakeCatalog::Address("before"));
	auto after = BlockIdentity::Load(catalog, FakeCatalog::Address("after"));
	EXPECT_EQ(before.BlockHash(0), after.BlockHash(0));
	EXPECT_NE(before.BlockHash(1), after.BlockHash(1));
	EXPECT_EQ(before.BlockHash(2), after.BlockHash(2));
	EXPECT_FALSE(before.BlockHash(3).has_value());
	EXPECT_EQ(after.BlockHash(3), HashOf("b3"));
}

TEST(BlockIdentityTest, BlocksStayAlignedAcrossIndexPagesWithTrimmedHoles) {
	// The first page ends in a hole, which encoding trims: the second page's blocks must not shift.
	std::vector<std::string> blocks(SLOTS_PER_INDEX_PAGE + 1);
	for (size_t i = 0; i < blocks.size(); i++) {
		blocks[i] = "block " + std::to_string(i);
	}
	blocks[SLOTS_PER_INDEX_PAGE - 2] = "";
	FakeCatalog catalog;
	catalog.Publish("db", LengthOf(blocks.size()), Chunks(blocks));
	auto identity = BlockIdentity::Load(catalog, FakeCatalog::Address("db"));
	EXPECT_EQ(identity.BlockHash(SLOTS_PER_INDEX_PAGE - 2), Hash256 {});
	EXPECT_EQ(identity.BlockHash(SLOTS_PER_INDEX_PAGE - 1),
	          HashOf("block " + std::to_string(SLOTS_PER_INDEX_PAGE - 1)));
	EXPECT_EQ(identity.BlockHash(SLOTS_PER_INDEX_PAGE), HashOf("block " + std::to_string(SLOTS_PER_INDEX_PAGE)));
	EXPECT_FALSE(identity.BlockHash(SLOTS_PER_INDEX_PAGE + 1).has_value());
}

TEST(BlockIdentityTest, AMissingFileHoldsNoBlocks) {
	FakeCatalog catalog;
	auto identity = BlockIdentity::Load(catalog, FakeCatalog::Address("none"));
	EXPECT_FALSE(identity.Exists());
	EXPECT_FALSE(identity.BlockHash(0).has_value());
	EXPECT_EQ(BlockIdentity::ContentRoot(catalog, FakeCatalog::Address("none")), "");
}

TEST(BlockIdentityTest, ContentRootsTellFileVersionsApart) {
	FakeCatalog catalog;
	catalog.Publish("a", LengthOf(2), Chunks({"b0", "b1"}));
	catalog.Publish("same as a", LengthOf(2), Chunks({"b0", "b1"}));
	catalog.Publish("other block", LengthOf(2), Chunks({"b0", "b1 changed"}));
	// Same pages, other length: the last chunk is shorter, so the bytes differ.
	catalog.Publish("shorter", LengthOf(2) - 10, Chunks({"b0", "b1"}));
	auto root = [&](const std::string &name) {
		return BlockIdentity::ContentRoot(catalog, FakeCatalog::Address(name));
	};
	EXPECT_EQ(root("a").size(), 64u);
	EXPECT_EQ(root("a"), root("same as a"));
	EXPECT_NE(root("a"), root("other block"));
	EXPECT_NE(root("a"), root("shorter"));
}

TEST(BlockIdentityTest, OnlyBlocksOfOneChunkAreDistinguished) {
	EXPECT_TRUE(BlockIdentity::Distinguishes(CHUNK_SIZE));
	// Smaller blocks share a chunk (its hash also covers the neighbours); larger ones span several.
	EXPECT_FALSE(BlockIdentity::Distinguishes(16384));
	EXPECT_FALSE(BlockIdentity::Distinguishes(2 * CHUNK_SIZE));
}
