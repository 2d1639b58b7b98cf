// Segment files: a 64-byte header, then records of a 48-byte header and a payload.
#include "storage/segment_store.hpp"

#include "common/counters.hpp"
#include "common/errors.hpp"
#include "common/logging.hpp"
#include "storage/system_calls.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace differential {

static constexpr char SEGMENT_MAGIC[8] = {'D', 'I', 'F', 'F', 'S', 'E', 'G', '1'};
static constexpr uint32_t RECORD_MAGIC = 0x52464944;  // "DIFR" little-endian
static constexpr uint32_t PADDING_MAGIC = 0x50464944; // "DIFP" little-endian: a padding record, zeros
//! Zeros for the largest padding payload (a page, plus the part of one a header would not fit in).
static const uint8_t PADDING_ZEROS[RECORD_PAGE_SIZE + RECORD_HEADER_SIZE] = {};

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
	Fail(ErrorCode::IO_ERROR, what + " " + path + " failed: " + std::strerror(errno) +
	                              ". Check free disk space and permissions, then retry.");
}

static void WriteAll(const char *edge, int fd, const void *data, size_t size, uint64_t offset,
                     const std::string &path) {
	if (sys::PWriteAll(edge, fd, data, size, static_cast<off_t>(offset)) < 0) {
		IoFail("Writing segment", path);
	}
}

//! Closes a descriptor whose writes are already durable (or abandoned): a failing close loses
//! nothing, so it is logged, not raised.
static void CloseLogged(int fd, const std::string &what) {
	if (close(fd) != 0) {
		LogWarning("segment_close_failed", "Closing " + what + " failed: " + std::strerror(errno) + " (ignored).");
	}
}

SegmentStore::SegmentStore(std::string directory_p, std::function<uint64_t()> allocate)
    : directory(std::move(directory_p)), allocate_segment_id(std::move(allocate)) {
}

SegmentStore::~SegmentStore() {
	for (auto fd : retired_fds) {
		CloseLogged(fd, "a retired segment in " + directory);
	}
	if (current_fd >= 0) {
		CloseLogged(current_fd, SegmentPath(current_id));
	}
	for (auto &entry : reader_fds) {
		CloseLogged(entry.second, SegmentPath(entry.first));
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

//! Writes and fsyncs a new segment's header, then fsyncs the directory: the new directory entry
//! must survive a crash as soon as anything in the segment is published.
void SegmentStore::WriteSegmentHeader(int fd, uint64_t segment_id, const std::string &path) {
	uint8_t header[SEGMENT_HEADER_SIZE] = {};
	std::memcpy(header, SEGMENT_MAGIC, 8);
	PutU32(header + 8, SEGMENT_FORMAT_VERSION);
	PutU64(header + 16, segment_id);
	PutU32(header + 60, Crc32c(header, 60));
	WriteAll("segment.header_write", fd, header, sizeof(header), 0, path);
	if (sys::FSync("segment.header_fsync", fd) != 0) {
		IoFail("Syncing the header of segment", path);
	}
	int dir_fd = sys::Open("segment.dir_open", directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		IoFail("Opening the segment directory", directory);
	}
	if (sys::FSync("segment.dir_fsync", dir_fd) != 0) {
		auto error = errno;
		close(dir_fd);
		errno = error;
		IoFail("Syncing the segment directory", directory);
	}
	CloseLogged(dir_fd, "the segment directory " + directory);
}

void SegmentStore::OpenNewSegment() {
	auto segment_id = allocate_segment_id();
	auto path = SegmentPath(segment_id);
	int fd = sys::Open("segment.open", path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		IoFail("Creating segment", path);
	}
	try {
		WriteSegmentHeader(fd, segment_id, path);
	} catch (...) {
		// The store keeps appending to the segment it had; the new file holds nothing and goes. Its
		// metadata row has no records, so cleanup forgets it once this process is gone.
		CloseLogged(fd, path);
		if (unlink(path.c_str()) != 0 && errno != ENOENT) {
			LogWarning("segment_discard_failed", "Removing the unusable new segment " + path +
			                                         " failed: " + std::strerror(errno) +
			                                         ". It holds no record; cleanup removes it later.");
		}
		throw;
	}
	// Only a segment whose header is durable becomes current.
	if (current_fd >= 0) {
		// Still owed an fsync if it was appended to; closed by the Sync that flushes it.
		retired_fds.push_back(current_fd);
	}
	current_id = segment_id;
	current_fd = fd;
	current_size = SEGMENT_HEADER_SIZE;
}

//! A record or padding header: magic, payload length and CRC, hash, and the CRC of all that.
static void EncodeHeader(uint8_t *out, uint32_t magic, uint32_t length, uint32_t crc, const Hash256 &hash) {
	PutU32(out, magic);
	PutU32(out + 4, length);
	PutU32(out + 8, crc);
	std::memcpy(out + 16, hash.data(), 32);
	PutU32(out + 12, Crc32c(out + 16, 32, Crc32c(out, 12)));
}

void SegmentStore::EncodeRecordHeader(uint8_t *out, uint32_t length, uint32_t crc, const Hash256 &hash) {
	EncodeHeader(out, RECORD_MAGIC, length, crc, hash);
}

uint64_t SegmentStore::PaddingBefore(uint64_t end) {
	auto pad = (RECORD_PAGE_SIZE - (end + RECORD_HEADER_SIZE) % RECORD_PAGE_SIZE) % RECORD_PAGE_SIZE;
	// A padding record needs room for its own header: a gap smaller than one grows by a page.
	return pad != 0 && pad < RECORD_HEADER_SIZE ? pad + RECORD_PAGE_SIZE : pad;
}

ChunkLocation SegmentStore::Append(const void *data, uint32_t size, const Hash256 &hash, const char *edge,
                                   RecordPlacement placement) {
	ChunkLocation loc;
	loc.length = size;
	loc.crc32c = Crc32c(data, size);
	uint8_t header[RECORD_HEADER_SIZE];
	EncodeRecordHeader(header, size, loc.crc32c, hash);

	std::lock_guard<std::mutex> guard(write_lock);
	auto padding = [&] {
		return placement == RecordPlacement::PAGE_ALIGNED ? PaddingBefore(current_size) : 0;
	};
	if (current_fd < 0 || current_size + padding() + RECORD_HEADER_SIZE + size > SEGMENT_ROLL_SIZE) {
		OpenNewSegment();
	}
	auto pad = padding();
	uint8_t pad_header[RECORD_HEADER_SIZE];
	std::vector<iovec> parts;
	if (pad > 0) {
		EncodeHeader(pad_header, PADDING_MAGIC, static_cast<uint32_t>(pad - RECORD_HEADER_SIZE), 0, Hash256 {});
		parts.push_back({pad_header, sizeof(pad_header)});
		parts.push_back({const_cast<uint8_t *>(PADDING_ZEROS), pad - RECORD_HEADER_SIZE});
	}
	parts.push_back({header, sizeof(header)});
	parts.push_back({const_cast<void *>(data), size});
	// A failed write leaves current_size where it was: the next record overwrites the torn one.
	if (sys::PWriteAll(edge, current_fd, std::move(parts), static_cast<off_t>(current_size)) < 0) {
		IoFail("Writing segment", SegmentPath(current_id));
	}
	loc.segment_id = current_id;
	loc.offset = current_size + pad + RECORD_HEADER_SIZE;
	current_size += pad + RECORD_HEADER_SIZE + size;
	if (unsynced_fds.empty() || unsynced_fds.back() != current_fd) {
		unsynced_fds.push_back(current_fd);
	}
	return loc;
}

void SegmentStore::Sync(const char *edge) {
	// Held across the flush: a caller whose appends another thread already took off the list must not return
	// (and publish) before that thread's fdatasync has finished. Callers queued here share the next flush.
	std::lock_guard<std::mutex> sync_guard(sync_lock);
	std::vector<int> to_sync;
	{
		std::lock_guard<std::mutex> guard(write_lock);
		to_sync.swap(unsynced_fds);
	}
	if (to_sync.empty()) {
		return;
	}
	LogTimer timer;
	for (size_t i = 0; i < to_sync.size(); i++) {
		if (sys::FDataSync(edge, to_sync[i]) != 0) {
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
	Count(Counter::SEGMENT_FSYNC, to_sync.size());
	CloseFlushedRetired();
	if (LogEnabled()) {
		LogEvent("segment_fsync", timer.ElapsedMs(),
		         std::to_string(to_sync.size()) + " segment file(s) in " + directory);
	}
}

void SegmentStore::CloseFlushedRetired() {
	std::lock_guard<std::mutex> guard(write_lock);
	std::vector<int> still_owed;
	for (auto fd : retired_fds) {
		if (std::find(unsynced_fds.begin(), unsynced_fds.end(), fd) != unsynced_fds.end()) {
			still_owed.push_back(fd);
		} else {
			CloseLogged(fd, "a retired segment in " + directory);
		}
	}
	retired_fds.swap(still_owed);
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
		if (errno == ENOENT) {
			return 0;
		}
		IoFail("Inspecting segment", path);
	}
	if (sys::Unlink("segment.unlink", path.c_str()) != 0 && errno != ENOENT) {
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
	int fd = sys::Open("segment.reader_open", path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		Fail(ErrorCode::MISSING_SEGMENT,
		     "Segment " + path +
		         " does not exist. The repository is damaged; run differential_verify() to see what "
		         "is affected.");
	}
	if (fd < 0) {
		IoFail("Opening segment", path);
	}
	reader_fds[segment_id] = fd;
	return fd;
}

void SegmentStore::Read(const ChunkLocation &loc, void *out) {
	auto fd = ReaderFd(loc.segment_id);
	auto n = sys::PReadAll("segment.read", fd, out, loc.length, static_cast<off_t>(loc.offset));
	if (n < 0) {
		IoFail("Reading segment", SegmentPath(loc.segment_id));
	}
	if (static_cast<uint64_t>(n) != loc.length) {
		Fail(ErrorCode::CORRUPT_CHUNK, "Segment " + SegmentPath(loc.segment_id) + " ends before the record at byte " +
		                                   std::to_string(loc.offset) +
		                                   ". The repository is damaged; run differential_verify().");
	}
	if (Crc32c(out, loc.length) != loc.crc32c) {
		Fail(ErrorCode::CORRUPT_CHUNK,
		     "CRC32C mismatch in segment " + SegmentPath(loc.segment_id) + " at byte " + std::to_string(loc.offset) +
		         ": the stored data is damaged and was not returned. Run differential_verify() to see what is "
		         "affected, and restore from another snapshot or replica.");
	}
}

//! Scan's reads: a read error, like a short read, ends the scan where the readable records end.
static bool ScanRead(int fd, void *data, size_t size, uint64_t offset) {
	return sys::PReadAll("segment.scan_read", fd, data, size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
}

SegmentScan SegmentStore::Scan(const std::string &path) {
	SegmentScan scan;
	int fd = sys::Open("segment.scan_open", path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		IoFail("Opening segment", path);
	}
	struct stat st;
	if (sys::FStat("segment.scan_stat", fd, &st) != 0) {
		auto error = errno;
		close(fd);
		errno = error;
		IoFail("Inspecting segment", path);
	}
	uint64_t size = static_cast<uint64_t>(st.st_size);
	uint8_t header[SEGMENT_HEADER_SIZE];
	if (size >= SEGMENT_HEADER_SIZE && ScanRead(fd, header, sizeof(header), 0) &&
	    std::memcmp(header, SEGMENT_MAGIC, 8) == 0 && GetU32(header + 60) == Crc32c(header, 60)) {
		scan.header_valid = true;
		scan.segment_id = GetU64(header + 16);
	}
	uint64_t pos = SEGMENT_HEADER_SIZE;
	std::vector<uint8_t> payload;
	while (scan.header_valid && pos + RECORD_HEADER_SIZE <= size) {
		uint8_t rec[RECORD_HEADER_SIZE];
		if (!ScanRead(fd, rec, sizeof(rec), pos) || (GetU32(rec) != RECORD_MAGIC && GetU32(rec) != PADDING_MAGIC) ||
		    GetU32(rec + 12) != Crc32c(rec + 16, 32, Crc32c(rec, 12))) {
			break;
		}
		if (GetU32(rec) == PADDING_MAGIC) {
			// Its zeros are not checked: nothing reads them. A padding cut short is a torn tail.
			if (pos + RECORD_HEADER_SIZE + GetU32(rec + 4) > size) {
				break;
			}
			pos += RECORD_HEADER_SIZE + GetU32(rec + 4);
			continue;
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
		if (!ScanRead(fd, payload.data(), r.length, r.payload_offset) || Crc32c(payload.data(), r.length) != r.crc32c) {
			break;
		}
		scan.records.push_back(r);
		pos = r.payload_offset + r.length;
	}
	scan.torn_bytes = size > pos ? size - pos : 0;
	CloseLogged(fd, path);
	return scan;
}

} // namespace differential
