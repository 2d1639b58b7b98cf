// What a published version of a database file holds, block by block, answered from its root and
// index pages: layers above compare DuckDB blocks by content without knowing how files are chunked.
#pragma once

#include "common/hash.hpp"
#include "storage/file_catalog.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace differential {

class BlockIdentity {
public:
	//! The published version of the database file `file`; Exists() is false when it has none.
	static BlockIdentity Load(FileCatalog &catalog, const FileAddress &file);
	//! SHA-256 over the version's length and its index page hashes, as hex (empty when the file has no
	//! published version): equal roots mean byte-identical files. Reads the root only.
	static std::string ContentRoot(FileCatalog &catalog, const FileAddress &file);
	//! Whether this storage tells DuckDB blocks of `block_size` bytes apart: each must lie in a stored
	//! piece of its own, or a block's hash would also cover its neighbours.
	static bool Distinguishes(uint64_t block_size);

	bool Exists() const {
		return exists;
	}
	//! The content hash of DuckDB block `block` (block ids count from the end of the file's headers),
	//! or nothing when the version does not reach that far. Equal hashes mean equal bytes. Only
	//! meaningful for files whose block size Distinguishes.
	std::optional<Hash256> BlockHash(uint64_t block) const;

private:
	bool exists = false;
	//! The hash of every stored piece of the file, in file order (a hole is the zero hash).
	std::vector<Hash256> chunks;
};

} // namespace differential
