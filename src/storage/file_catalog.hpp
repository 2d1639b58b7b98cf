// What the storage layer needs from the metadata layer: where published file versions, index
// pages and chunks are recorded. Declared here so storage never includes metadata.
#pragma once

#include "common/hash.hpp"
#include "storage/diff_path.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace differential {

//! Where a record's payload lies: in which segment, at which byte, how long, with which CRC32C.
struct ChunkLocation {
	uint64_t segment_id = 0;
	uint64_t offset = 0;
	uint32_t length = 0;
	uint32_t crc32c = 0;
};

//! One run of a ranged file's (WAL's) bytes: a range record in a segment, or the bytes themselves, kept
//! inline in the metadata row: small appends are published that way so that their commit needs no
//! segment flush (docs/DURABILITY.md §4).
struct RangeExtent {
	//! An inline extent has segment 0 (no segment has that id) and offset 0; length and CRC32C describe
	//! its bytes in either case.
	ChunkLocation location;
	//! The inline bytes, shared by every copy of the extent (frozen views, reloads); null for a record.
	std::shared_ptr<const std::vector<uint8_t>> inline_bytes;

	bool IsInline() const {
		return inline_bytes != nullptr;
	}
};

//! A WAL companion of a branch's database file, as published together with it.
struct CompanionFile {
	std::string file_name;
	uint64_t length = 0;
	std::vector<RangeExtent> extents;
};

//! Who pins a loaded file, which decides where the pin is kept (docs/DURABILITY.md §10): a writer's pin moves to
//! each root it publishes, in the publishing metadata transaction; a reader's never moves and is kept outside
//! the metadata's write lock, so taking it never waits for a writer.
enum class PinKind : uint8_t { NONE, READER, WRITER };

struct FilePin {
	int64_t id = -1;
	PinKind kind = PinKind::NONE;

	bool Held() const {
		return id >= 0;
	}
};

//! A published version of a file as the catalog has it.
struct StoredFile {
	uint64_t length = 0;
	//! Chunked files: one hash per index page, in order.
	std::vector<Hash256> pages;
	//! Ranged files (WAL): the byte ranges, in file order.
	std::vector<RangeExtent> extents;
	//! The metadata's id of the loaded root (chunked files), or -1.
	int64_t root_id = -1;
	//! For a branch's database file loaded with a pin: its WAL companions, read in the same
	//! transaction, so a reader pairs the database with exactly the WAL published with it.
	std::vector<CompanionFile> companions;
	//! The pin taken on the loaded root (chunked files loaded with a pin), if any.
	FilePin pin;
};

struct NewChunk {
	Hash256 hash;
	ChunkLocation location;
};

struct NewIndexPage {
	Hash256 hash;
	std::vector<uint8_t> slots;
};

//! What a writing handle keeps between its publications of one file, so that an ordinary publication (for a WAL,
//! each of DuckDB's commits) looks nothing up: the catalog's id of the file's branch, resolved at the handle's first
//! publication, and (ranged files) how many extents the catalog holds for the file, so that extents are deleted
//! only after a truncation. The branch lock a writer holds keeps both current; a publication that finds the
//! branch gone or replaced fails instead of writing. A count above the catalog's only costs a DELETE.
struct PublishedState {
	int64_t branch_id = -1;
	uint64_t stored_extents = 0;
};

class FileCatalog {
public:
	virtual ~FileCatalog() = default;

	//! False when the file does not exist (never published, or removed). With a `pin` kind, a chunked
	//! file's root is read and pinned atomically with respect to cleanup, which keeps it until Unpin().
	virtual bool LoadFile(const FileAddress &file, StoredFile &out, PinKind pin = PinKind::NONE) = 0;
	virtual void Unpin(const FilePin &pin) = 0;
	virtual std::vector<uint8_t> LoadIndexPage(const Hash256 &page) = 0;
	//! Fills `out` with one location per hash; throws missing_chunk when a hash is unknown.
	virtual void LookupChunks(const std::vector<Hash256> &hashes, std::vector<ChunkLocation> &out) = 0;

	//! Publishes a new version of a chunked file in one durable metadata transaction.
	//! The publisher's pin (a writer's, if held) moves to the new root.
	virtual void PublishChunked(const FileAddress &file, PublishedState &state, uint64_t length,
	                            const std::vector<Hash256> &pages, const std::vector<NewIndexPage> &new_pages,
	                            const std::vector<NewChunk> &new_chunks, const FilePin &publisher_pin) = 0;
	//! Publishes a ranged file: its first `kept_extents` extents stay, `new_extents` follow them. Its length is
	//! theirs: nothing else is stored of it.
	virtual void PublishRanged(const FileAddress &file, PublishedState &state, uint64_t kept_extents,
	                           const std::vector<RangeExtent> &new_extents) = 0;
	virtual void RemoveFile(const FileAddress &file) = 0;
	virtual void MoveFile(const FileAddress &from, const FileAddress &to) = 0;
	//! Registers a new segment and returns its id.
	virtual uint64_t AllocateSegment() = 0;
};

} // namespace differential
