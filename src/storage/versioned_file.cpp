// What both kinds of file share: existence, length, locking, and Sync's order of durability
// (segments first, then the metadata); the kinds decide how content is stored and published.
#include "storage/versioned_file.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "storage/chunked_file.hpp"
#include "storage/ranged_file.hpp"

#include <algorithm>
#include <mutex>

namespace differential {

std::unique_ptr<VersionedFile> VersionedFile::Open(FileAddress address, std::shared_ptr<RepositoryStorage> storage,
                                                   bool writable) {
	if (address.IsMainFile()) {
		return std::unique_ptr<VersionedFile>(new ChunkedFile(std::move(address), std::move(storage), writable));
	}
	return std::unique_ptr<VersionedFile>(new RangedFile(std::move(address), std::move(storage), writable));
}

VersionedFile::VersionedFile(FileAddress address_p, std::shared_ptr<RepositoryStorage> storage_p, bool writable_p)
    : writable(writable_p), address(std::move(address_p)), storage(std::move(storage_p)) {
}

bool VersionedFile::Load() {
	std::unique_lock<std::shared_mutex> guard(lock);
	StoredFile stored;
	exists = storage->catalog->LoadFile(address, stored, PinsOnLoad());
	KeepLoadedLocked(stored);
	length = 0;
	if (exists) {
		length = stored.length;
		ApplyLocked(stored);
	}
	return exists;
}

bool VersionedFile::LoadFrom(const StoredFile &stored, bool exists_p) {
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = exists_p;
	if (exists) {
		StoredFile copy = stored;
		length = copy.length;
		ApplyLocked(copy);
	}
	return exists;
}

std::vector<CompanionFile> VersionedFile::TakeCompanions() {
	return {};
}

void VersionedFile::KeepLoadedLocked(StoredFile &stored) {
}

void VersionedFile::CreateEmpty() {
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = true;
	dirty = true;
	length = 0;
	ClearLocked();
}

void VersionedFile::MarkRemoved() {
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = false;
	dirty = false;
	length = 0;
	ClearLocked();
}

bool VersionedFile::Exists() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return exists;
}

uint64_t VersionedFile::Length() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return length;
}

bool VersionedFile::HasUnpublishedChanges() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return dirty;
}

void VersionedFile::CollectUnpublishedSegments(std::set<uint64_t> &out) {
	std::shared_lock<std::shared_mutex> guard(lock);
	CollectUnpublishedLocked(out);
}

uint64_t VersionedFile::Read(void *buffer, uint64_t size, uint64_t offset) {
	std::shared_lock<std::shared_mutex> guard(lock);
	if (offset >= length || size == 0) {
		return 0;
	}
	return ReadLocked(static_cast<uint8_t *>(buffer), std::min(size, length - offset), offset);
}

void VersionedFile::Write(const void *buffer, uint64_t size, uint64_t offset) {
	if (size == 0) {
		return;
	}
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = true;
	dirty = true;
	WriteLocked(static_cast<const uint8_t *>(buffer), size, offset);
}

void VersionedFile::Truncate(uint64_t new_length) {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (new_length > length) {
		// Growing by truncate: DuckDB never does it, but a file system must; store zeros.
		std::vector<uint8_t> zeros(new_length - length);
		exists = true;
		dirty = true;
		WriteLocked(zeros.data(), zeros.size(), length);
	} else if (new_length < length) {
		dirty = true;
		ShrinkLocked(new_length);
	}
}

bool VersionedFile::Trim(uint64_t offset, uint64_t size) {
	return false;
}

void VersionedFile::Sync() {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (!dirty || !exists) {
		return;
	}
	if (!writable || address.IsSnapshot()) {
		Fail(ErrorCode::READ_ONLY, "Cannot write " + address.ToPath() + ": it is opened read-only.");
	}
	LogTimer timer;
	if (UnpublishedInSegmentsLocked()) {
		CrashPoint("sync.before_segment_fsync");
		storage->segments.Sync();
		CrashPoint("sync.after_segment_fsync");
	} else {
		// Everything to publish travels inside the metadata transaction: its commit is the one durable write.
		CrashPoint("sync.before_inline_publish");
	}
	PublishLocked();
	CrashPoint("sync.after_publish");
	dirty = false;
	if (LogEnabled()) {
		LogEvent("publish", timer.ElapsedMs(), address.ToPath() + " (" + std::to_string(length) + " bytes)");
	}
}

FileAddress VersionedFile::Address() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return address;
}

void VersionedFile::Rename(const FileAddress &to) {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (to.IsMainFile() != address.IsMainFile()) {
		Fail(ErrorCode::INVALID_PATH,
		     "Cannot rename " + address.ToPath() + " to " + to.ToPath() +
		         ": a database file and its WAL files are stored differently. Copy the data instead.");
	}
	address = to;
}

} // namespace differential
