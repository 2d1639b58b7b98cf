// One file of a branch or snapshot as this process sees it: the published version it started
// from plus the writes since, which already sit in segments. Sync() publishes them. Two kinds
// share this interface: ChunkedFile (the database file) and RangedFile (its WAL companions).
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
	//! The kind the address calls for: chunked for a database file, ranged for anything else.
	static std::unique_ptr<VersionedFile> Open(FileAddress address, std::shared_ptr<RepositoryStorage> storage,
	                                           bool writable);
	virtual ~VersionedFile() = default;
	VersionedFile(const VersionedFile &) = delete;
	VersionedFile &operator=(const VersionedFile &) = delete;

	//! Loads the published version; returns false when the file does not exist.
	bool Load();
	//! Takes a version read elsewhere (a companion loaded with its database file).
	bool LoadFrom(const StoredFile &stored, bool exists);
	//! The WAL companions read with this (database) file, handed over once.
	virtual std::vector<CompanionFile> TakeCompanions();
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
	//! Returns true when anything changed; ranged files never change.
	virtual bool Trim(uint64_t offset, uint64_t size);
	//! The durability point: fsync the segments (if a change is in one), then publish in one metadata transaction.
	void Sync();
	bool HasUnpublishedChanges();
	//! Adds the segments holding records written here but not yet published.
	void CollectUnpublishedSegments(std::set<uint64_t> &out);
	void MarkRemoved();
	//! The SHA-256 of every chunk as this process sees the file now (unpublished writes included; zero for
	//! holes); empty for ranged files. WAL shipping compares it with what it shipped last.
	virtual std::vector<Hash256> CurrentChunkHashes() {
		return {};
	}

	FileAddress Address();
	//! MoveFile keeps open handles pointing at the file under its new name (of the same kind).
	void Rename(const FileAddress &to);
	const bool writable;

protected:
	VersionedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable);

	// The kind-specific parts, called with `lock` held (shared for reads, exclusive otherwise).
	//! Which pin Load takes on the loaded root (and whether it reads the companions with it).
	virtual PinKind PinsOnLoad() const = 0;
	//! Keeps what a Load hands over besides the content (a pin, the companions), found or not.
	virtual void KeepLoadedLocked(StoredFile &stored);
	//! Takes the loaded version's content; `length` is already set.
	virtual void ApplyLocked(StoredFile &stored) = 0;
	//! Forgets all content (an empty or removed file).
	virtual void ClearLocked() = 0;
	virtual uint64_t ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) = 0;
	//! Stores the bytes and moves `length` to cover them.
	virtual void WriteLocked(const uint8_t *in, uint64_t size, uint64_t offset) = 0;
	//! Cuts the file to `new_length`, shorter than `length`.
	virtual void ShrinkLocked(uint64_t new_length) = 0;
	//! Whether an unpublished change lies in a segment record, which Sync must flush before publishing;
	//! when none does, the publication's own metadata commit is the sync's only durable write.
	virtual bool UnpublishedInSegmentsLocked() {
		return true;
	}
	//! Records the unpublished changes in the metadata (their segment records are already durable).
	virtual void PublishLocked() = 0;
	virtual void CollectUnpublishedLocked(std::set<uint64_t> &out) = 0;

	FileAddress address;
	std::shared_ptr<RepositoryStorage> storage;
	std::shared_mutex lock;
	//! What the catalog's publications of this file kept (its branch's id, its extent count).
	PublishedState published;
	bool exists = false;
	bool dirty = false;
	uint64_t length = 0;
};

} // namespace differential
