// Append-only segment files: the write journal and, once published, the home of every chunk.
// A write lands in the open segment before write() returns; FileSync makes it durable.
#pragma once

#include "common/hash.hpp"
#include "storage/file_catalog.hpp"

#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace differential {

//! Segment file header (64 bytes) and record header (48 bytes); docs/FORMAT.md has the offset tables.
static constexpr uint64_t SEGMENT_HEADER_SIZE = 64;
static constexpr uint64_t RECORD_HEADER_SIZE = 48;
//! 2: a record may be preceded by a padding record that puts its payload on a page boundary.
static constexpr uint32_t SEGMENT_FORMAT_VERSION = 2;
//! The boundary a page-aligned payload starts on.
static constexpr uint64_t RECORD_PAGE_SIZE = 4096;
static constexpr uint64_t SEGMENT_ROLL_SIZE = 1ULL << 30;

//! Where a record's payload may start. A database chunk's payload is read whole, by DuckDB's block reads: on a page
//! boundary the read covers exactly its own pages (64 for a 256 KiB chunk, not 65), which cold reads were measured
//! to depend on. WAL ranges are read in order once; they stay packed.
enum class RecordPlacement : uint8_t { PACKED, PAGE_ALIGNED };

struct ScannedRecord {
	uint64_t payload_offset;
	uint32_t length;
	uint32_t crc32c;
	Hash256 hash;
};

struct SegmentScan {
	uint64_t segment_id = 0;
	std::vector<ScannedRecord> records;
	//! Bytes after the last whole record: a torn tail left by a crash (never published).
	uint64_t torn_bytes = 0;
	bool header_valid = false;
};

class SegmentStore {
public:
	SegmentStore(std::string directory, std::function<uint64_t()> allocate_segment_id);
	~SegmentStore();

	//! Appends one record; thread-safe. The payload is not durable until Sync(). `edge` names the
	//! write for fault injection (docs/DURABILITY.md): database chunks, WAL ranges and compaction copies.
	ChunkLocation Append(const void *data, uint32_t size, const Hash256 &hash,
	                     const char *edge = "segment.record_write",
	                     RecordPlacement placement = RecordPlacement::PACKED);
	//! fdatasyncs every segment appended to since the last Sync; `edge` as for Append.
	void Sync(const char *edge = "segment.fdatasync");
	//! Ends the current segment: the next append opens a new one. Cleanup seals before it looks at
	//! this process's own segments, so that only the new, nearly empty one must be spared.
	void Seal();
	//! The segment appends go to now, or 0 before the first append.
	uint64_t CurrentSegmentId();
	//! Removes a segment file that the metadata no longer references; returns the bytes freed.
	uint64_t RemoveSegmentFile(uint64_t segment_id);
	//! Reads a record's payload and checks its CRC32C; throws corrupt_chunk on a mismatch.
	void Read(const ChunkLocation &location, void *out);

	std::string SegmentPath(uint64_t segment_id) const;
	static std::string SegmentPath(const std::string &directory, uint64_t segment_id);
	//! Reads a segment file record by record (skipping padding), stopping at the first torn or invalid one.
	static SegmentScan Scan(const std::string &path);
	static void EncodeRecordHeader(uint8_t *out, uint32_t length, uint32_t crc, const Hash256 &hash);
	//! The padding to write at `end` so that a record's payload after it starts on a page boundary: 0, or a
	//! whole padding record (its header and zeros).
	static uint64_t PaddingBefore(uint64_t end);

private:
	int ReaderFd(uint64_t segment_id);
	//! Makes a new segment current, or throws with the store unchanged.
	void OpenNewSegment();
	void WriteSegmentHeader(int fd, uint64_t segment_id, const std::string &path);
	//! Closes the retired segments no longer owed an fsync.
	void CloseFlushedRetired();

	std::string directory;
	std::function<uint64_t()> allocate_segment_id;

	std::mutex write_lock;
	//! Serializes Sync() so that it returns only once everything appended before the call is on disk.
	std::mutex sync_lock;
	uint64_t current_id = 0;
	int current_fd = -1;
	uint64_t current_size = 0;
	//! Segments with appends not yet fsynced (the current one, and any rolled over since).
	std::vector<int> unsynced_fds;
	//! Former current segments, kept open until a Sync has flushed their appends.
	std::vector<int> retired_fds;

	std::shared_mutex reader_lock;
	std::unordered_map<uint64_t, int> reader_fds;
};

} // namespace differential
