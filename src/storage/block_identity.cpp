// Blocks map onto chunks by the file's geometry: after the 12 KiB first chunk (DuckDB's three
// headers), chunk k holds block k - 1 when a block is exactly one chunk long.
#include "storage/block_identity.hpp"

#include "storage/chunk_geometry.hpp"
#include "storage/index_page.hpp"

#include <algorithm>

namespace differential {

BlockIdentity BlockIdentity::Load(FileCatalog &catalog, const FileAddress &file) {
	BlockIdentity identity;
	StoredFile stored;
	if (!catalog.LoadFile(file, stored)) {
		return identity;
	}
	identity.exists = true;
	for (auto &page : stored.pages) {
		auto slots = DecodeIndexPage(catalog.LoadIndexPage(page));
		// Pages trim trailing holes: pad each back to its full width so chunk indexes line up.
		slots.resize(SLOTS_PER_INDEX_PAGE);
		identity.chunks.insert(identity.chunks.end(), slots.begin(), slots.end());
	}
	// The last page's padding lies beyond the file's end: no block lives there.
	identity.chunks.resize(std::min<uint64_t>(identity.chunks.size(), ChunkCount(stored.length)));
	return identity;
}

std::string BlockIdentity::ContentRoot(FileCatalog &catalog, const FileAddress &file) {
	StoredFile stored;
	if (!catalog.LoadFile(file, stored)) {
		return "";
	}
	std::string bytes(reinterpret_cast<const char *>(&stored.length), sizeof(stored.length));
	for (auto &page : stored.pages) {
		bytes.append(reinterpret_cast<const char *>(page.data()), page.size());
	}
	return HashToHex(Sha256(bytes.data(), bytes.size()));
}

bool BlockIdentity::Distinguishes(uint64_t block_size) {
	return block_size == CHUNK_SIZE;
}

std::optional<Hash256> BlockIdentity::BlockHash(uint64_t block) const {
	auto chunk = ChunkIndexOf(FIRST_CHUNK_SIZE + block * CHUNK_SIZE);
	if (chunk >= chunks.size()) {
		return std::nullopt;
	}
	return chunks[chunk];
}

} // namespace differential
