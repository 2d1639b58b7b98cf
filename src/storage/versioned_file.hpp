// One file of a branch or snapshot as this process sees it: the published version it started
// from plus the writes since, which already sit in segments. Sync() publishes them.
#pragma once

#include "storage/diff_path.hpp"
#include "storage/repository_storage.hpp"

#include <memory>
#include <set>
#include <shared_mutex>
#include <vector>

namespace differential {

class VersionedFile {
public:
	VersionedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable);
	~VersionedFile();

	//! Loads the published version; returns false when the file does not exist.
	bool Load();
	//! Takes a version read elsewhere (a companion loaded with its database file).
	bool LoadFrom(const StoredFile &stored, bool exists);
	//! The WAL companions read with this (database) file, handed over once.
	std::vector<CompanionFile> TakeCompanions();
	//! Makes an empty file that exists (published at the next Sync).
	void CreateEmpty();
	bool Exists();
	uint64_t Length();
	//! Returns the bytes read, short only at the end of the file.
	uint64_t Read(void *buffer, uint64_t size, uint64_t offset);
	void Write(const void *buffer, uint64_t size, uint64_t offset);
	void Truncate(uint64_t length);
	//! Forgets the content of every whole chunk inside the range (they read as zeros): DuckDB
	//! trims the blocks a checkpoint freed, and their old bytes must not stay live in the map.
	//! Returns true when anything changed.
	bool Trim(uint64_t offset, uint64_t size);
	//! The durability point: fsync the segments, then publish in one metadata transaction.
	void Sync();
	bool HasUnpublishedChanges();
	//! Adds the segments holding records written here but not yet published.
	void CollectUnpublishedSegments(std::set<uint64_t> &out);
	void MarkRemoved();

	FileAddress Address();
	//! MoveFile keeps open handles pointing at the file under its new name.
	void Rename(const FileAddress &to);
	const bool writable;

private:
	struct Chunk {
		Hash256 hash {};
		ChunkLocation location;
		bool present = false;
	};

	FileAddress address;
	bool chunked() const {
		return address.IsMainFile();
	}
	void ReadChunk(const Chunk &chunk, uint64_t index, uint8_t *out);
	void WriteChunkLocked(uint64_t index, const uint8_t *content, uint64_t size);
	uint64_t ReadRangedLocked(void *buffer, uint64_t size, uint64_t offset);
	void TruncateRangedLocked(uint64_t length);
	void SyncChunkedLocked();
	void SyncRangedLocked();
	bool ApplyLocked(const StoredFile &stored);
	std::vector<CompanionFile> companions;

	std::shared_ptr<RepositoryStorage> storage;
	std::shared_mutex lock;
	bool exists = false;
	bool dirty = false;
	//! Keeps the loaded (then the last published) root of a chunked file safe from cleanup.
	int64_t pin_id = -1;
	uint64_t length = 0;

	// Chunked files.
	std::vector<Chunk> chunks;
	std::vector<Hash256> pages;
	std::set<uint64_t> dirty_chunks;
	bool length_dirty = false;

	// Ranged files: extents in file order, with their start offsets.
	std::vector<ChunkLocation> extents;
	std::vector<uint64_t> extent_starts;
	uint64_t published_extents = 0;
};

} // namespace differential
