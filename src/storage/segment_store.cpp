// Segment files: a 64-byte header, then records of a 48-byte header and a payload.
#include "storage/segment_store.hpp"

#include "common/errors.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace differential {

static constexpr char SEGMENT_MAGIC[8] = {'D', 'I', 'F', 'F', 'S', 'E', 'G', '1'};
static constexpr uint32_t RECORD_MAGIC = 0x52464944; // "DIFR" little-endian

static void PutU32(uint8_t *p, uint32_t v) {
	std::memcpy(p, &v, 4);
}
static void PutU64(uint8_t *p, uint64_t v) {
	std::memcpy(p, &v, 8);
}
static uint32_t GetU32(const uint8_t *p) {
	uint32_t v;
	std::memcpy(&v, p, 4);
	return v;
}
static uint64_t GetU64(const uint8_t *p) {
	uint64_t v;
	std::memcpy(&v, p, 8);
	return v;
}

[[noreturn]] static void IoFail(const std::string &what, const std::string &path) {
	Fail(ErrorKind::IO, "io_error",
	     what + " " + path + " failed: " + std::strerror(errno) + ". Check free disk space and permissions.");
}

static void WriteAll(int fd, const void *data, size_t size, uint64_t offset, const std::string &path) {
	auto p = static_cast<const uint8_t *>(data);
	while (size > 0) {
		auto n = pwrite(fd, p, size, static_cast<off_t>(offset));
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			IoFail("Writing segment", path);
		}
		p += n;
		size -= static_cast<size_t>(n);
		offset += static_cast<uint64_t>(n);
	}
}

static bool ReadAll(int fd, void *data, size_t size, uint64_t offset) {
	auto p = static_cast<uint8_t *>(data);
	while (size > 0) {
		auto n = pread(fd, p, size, static_cast<off_t>(offset));
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return false;
		}
		p += n;
		size -= static_cast<size_t>(n);
		offset += static_cast<uint64_t>(n);
	}
	return true;
}

SegmentStore::SegmentStore(std::string directory_p, std::function<uint64_t()> allocate)
    : directory(std::move(directory_p)), allocate_segment_id(std::move(allocate)) {
}

SegmentStore::~SegmentStore() {
	for (auto fd : retired_fds) {
		close(fd);
	}
	if (current_fd >= 0) {
		close(current_fd);
	}
	for (auto &entry : reader_fds) {
		close(entry.second);
	}
}

std::string SegmentStore::SegmentPath(const std::string &dir, uint64_t segment_id) {
	char name[32];
	snprintf(name, sizeof(name), "%016llx.seg", static_cast<unsigned long long>(segment_id));
	return dir + "/" + name;
}

std::string SegmentStore::SegmentPath(uint64_t segment_id) const {
	return SegmentPath(directory, segment_id);
}

void SegmentStore::OpenNewSegment() {
	if (current_fd >= 0) {
		// Still owed an fsync if it was appended to; closed once that happened.
		retired_fds.push_back(current_fd);
	}
	current_id = allocate_segment_id();
	auto path = SegmentPath(current_id);
	current_fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (current_fd < 0) {
		IoFail("Creating segment", path);
	}
	uint8_t header[SEGMENT_HEADER_SIZE] = {};
	std::memcpy(header, SEGMENT_MAGIC, 8);
	PutU32(header + 8, SEGMENT_FORMAT_VERSION);
	PutU64(header + 16, current_id);
	PutU32(header + 60, Crc32c(header, 60));
	WriteAll(current_fd, header, sizeof(header), 0, path);
	current_size = SEGMENT_HEADER_SIZE;
	// The new directory entry must survive a crash as soon as anything in it is published.
	if (fsync(current_fd) != 0) {
		IoFail("Syncing segment", path);
	}
	int dir_fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd >= 0) {
		fsync(dir_fd);
		close(dir_fd);
	}
}

void SegmentStore::EncodeRecordHeader(uint8_t *out, uint32_t length, uint32_t crc, const Hash256 &hash) {
	PutU32(out, RECORD_MAGIC);
	PutU32(out + 4, length);
	PutU32(out + 8, crc);
	std::memcpy(out + 16, hash.data(), 32);
	PutU32(out + 12, Crc32c(out + 16, 32, Crc32c(out, 12)));
}

ChunkLocation SegmentStore::Append(const void *data, uint32_t size, const Hash256 &hash) {
	ChunkLocation loc;
	loc.length = size;
	loc.crc32c = Crc32c(data, size);
	uint8_t header[RECORD_HEADER_SIZE];
	EncodeRecordHeader(header, size, loc.crc32c, hash);

	std::lock_guard<std::mutex> guard(write_lock);
	if (current_fd < 0 || current_size + RECORD_HEADER_SIZE + size > SEGMENT_ROLL_SIZE) {
		OpenNewSegment();
	}
	auto path = SegmentPath(current_id);
	WriteAll(current_fd, header, sizeof(header), current_size, path);
	WriteAll(current_fd, data, size, current_size + RECORD_HEADER_SIZE, path);
	loc.segment_id = current_id;
	loc.offset = current_size + RECORD_HEADER_SIZE;
	current_size += RECORD_HEADER_SIZE + size;
	if (unsynced_fds.empty() || unsynced_fds.back() != current_fd) {
		unsynced_fds.push_back(current_fd);
	}
	return loc;
}

void SegmentStore::Sync() {
	// Held across the flush: a caller whose appends another thread already took off the list must not return
	// (and publish) before that thread's fdatasync has finished. Callers queued here share the next flush.
	std::lock_guard<std::mutex> sync_guard(sync_lock);
	std::vector<int> to_sync;
	{
		std::lock_guard<std::mutex> guard(write_lock);
		to_sync.swap(unsynced_fds);
	}
	for (size_t i = 0; i < to_sync.size(); i++) {
		if (fdatasync(to_sync[i]) != 0) {
			auto error = errno;
			{
				// The segments not flushed yet stay owed, so a later Sync cannot skip them.
				std::lock_guard<std::mutex> guard(write_lock);
				unsynced_fds.insert(unsynced_fds.begin(), to_sync.begin() + static_cast<std::ptrdiff_t>(i),
				                    to_sync.end());
			}
			errno = error;
			IoFail("Syncing a segment in", directory);
		}
	}
}

void SegmentStore::Seal() {
	std::lock_guard<std::mutex> guard(write_lock);
	if (current_fd >= 0) {
		retired_fds.push_back(current_fd);
		current_fd = -1;
		current_id = 0;
	}
}

uint64_t SegmentStore::CurrentSegmentId() {
	std::lock_guard<std::mutex> guard(write_lock);
	return current_id;
}

uint64_t SegmentStore::RemoveSegmentFile(uint64_t segment_id) {
	auto path = SegmentPath(segment_id);
	struct stat st;
	if (stat(path.c_str(), &st) != 0) {
		return 0;
	}
	if (unlink(path.c_str()) != 0) {
		IoFail("Removing segment", path);
	}
	// Readers of this process that have it open keep reading the unlinked file until they close.
	return static_cast<uint64_t>(st.st_size);
}

int SegmentStore::ReaderFd(uint64_t segment_id) {
	{
		std::shared_lock<std::shared_mutex> guard(reader_lock);
		auto it = reader_fds.find(segment_id);
		if (it != reader_fds.end()) {
			return it->second;
		}
	}
	std::unique_lock<std::shared_mutex> guard(reader_lock);
	auto it = reader_fds.find(segment_id);
	if (it != reader_fds.end()) {
		return it->second;
	}
	auto path = SegmentPath(segment_id);
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		Fail(ErrorKind::IO, "missing_segment",
		     "Segment " + path + " cannot be opened: " + std::strerror(errno) +
		         ". The repository is damaged; run differential_verify() to see what is affected.");
	}
	reader_fds[segment_id] = fd;
	return fd;
}

void SegmentStore::Read(const ChunkLocation &loc, void *out) {
	auto fd = ReaderFd(loc.segment_id);
	if (!ReadAll(fd, out, loc.length, loc.offset)) {
		Fail(ErrorKind::IO, "corrupt_chunk",
		     "Segment " + SegmentPath(loc.segment_id) + " ends before the record at byte " +
		         std::to_string(loc.offset) + ". The repository is damaged; run differential_verify().");
	}
	if (Crc32c(out, loc.length) != loc.crc32c) {
		Fail(ErrorKind::IO, "corrupt_chunk",
		     "CRC32C mismatch in segment " + SegmentPath(loc.segment_id) + " at byte " + std::to_string(loc.offset) +
		         ": the stored data is damaged and was not returned. Run differential_verify() to see what is "
		         "affected, and restore from another snapshot or replica.");
	}
}

SegmentScan SegmentStore::Scan(const std::string &path) {
	SegmentScan scan;
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		IoFail("Opening segment", path);
	}
	struct stat st;
	fstat(fd, &st);
	uint64_t size = static_cast<uint64_t>(st.st_size);
	uint8_t header[SEGMENT_HEADER_SIZE];
	if (size >= SEGMENT_HEADER_SIZE && ReadAll(fd, header, sizeof(header), 0) &&
	    std::memcmp(header, SEGMENT_MAGIC, 8) == 0 && GetU32(header + 60) == Crc32c(header, 60)) {
		scan.header_valid = true;
		scan.segment_id = GetU64(header + 16);
	}
	uint64_t pos = SEGMENT_HEADER_SIZE;
	std::vector<uint8_t> payload;
	while (scan.header_valid && pos + RECORD_HEADER_SIZE <= size) {
		uint8_t rec[RECORD_HEADER_SIZE];
		if (!ReadAll(fd, rec, sizeof(rec), pos) || GetU32(rec) != RECORD_MAGIC ||
		    GetU32(rec + 12) != Crc32c(rec + 16, 32, Crc32c(rec, 12))) {
			break;
		}
		ScannedRecord r;
		r.length = GetU32(rec + 4);
		r.crc32c = GetU32(rec + 8);
		std::memcpy(r.hash.data(), rec + 16, 32);
		r.payload_offset = pos + RECORD_HEADER_SIZE;
		if (r.payload_offset + r.length > size) {
			break;
		}
		payload.resize(r.length);
		if (!ReadAll(fd, payload.data(), r.length, r.payload_offset) || Crc32c(payload.data(), r.length) != r.crc32c) {
			break;
		}
		scan.records.push_back(r);
		pos = r.payload_offset + r.length;
	}
	scan.torn_bytes = size > pos ? size - pos : 0;
	close(fd);
	return scan;
}

} // namespace differential
