// Cleanup is safe against writers in other processes because it never touches a segment owned by
// a live process other than this one, and against this process's writers because it seals the
// current segment first and spares every segment holding an unpublished record.
#include "maintenance/cleanup.hpp"

#include "common/crash_points.hpp"
#include "common/logging.hpp"
#include "common/process_identity.hpp"
#include "storage/diff_file_system.hpp"

#include <set>
#include <sys/stat.h>
#include <unistd.h>

namespace differential {

//! The fault labels of compaction's own I/O (docs/DURABILITY.md): the copies and their fdatasync.
static constexpr const char *COMPACTION_WRITE_EDGE = "compaction.write";
static constexpr const char *COMPACTION_SYNC_EDGE = "compaction.fdatasync";

//! 0 when the file cannot be inspected: the segment is then left for a later cleanup, not compacted.
static uint64_t FileSize(const std::string &path) {
	struct stat st;
	return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

namespace {

//! Which segments cleanup must leave alone, fixed when it starts.
struct SegmentsInUse {
	//! This process opens segments newer than this from the seal on; they stay untouched.
	uint64_t sealed_upto = 0;
	//! Of this process's older segments, those holding records a file here has not published yet.
	std::set<uint64_t> unpublished;
	int64_t self = static_cast<int64_t>(getpid());

	bool Contains(const SegmentUsage &segment) const {
		bool mine = segment.owner_pid == self && ProcessAlive(segment.owner_pid, segment.owner_start);
		return mine ? (segment.segment_id > sealed_upto || unpublished.count(segment.segment_id))
		            : ProcessAlive(segment.owner_pid, segment.owner_start);
	}
};

} // namespace

static SegmentsInUse SealAndFindSegmentsInUse(Repository &repository) {
	auto &storage = *repository.storage;
	storage.SealSegment();
	SegmentsInUse in_use;
	in_use.sealed_upto = repository.metadata->accounting.HighestSegmentId();
	in_use.unpublished = DiffFileSystem::UnpublishedSegments(repository.root);
	in_use.unpublished.insert(storage.segments.CurrentSegmentId());
	return in_use;
}

//! Deletes a segment with no live record; false when a record reached it meanwhile.
static bool DeleteEmptySegment(Repository &repository, uint64_t segment_id, CleanupResult &result) {
	if (!repository.metadata->garbage.ForgetSegmentIfUnused(segment_id)) {
		return false;
	}
	CrashPoint("cleanup.before_unlink");
	result.bytes_freed += repository.storage->segments.RemoveSegmentFile(segment_id);
	result.segments_deleted++;
	return true;
}

//! Compaction: copy the live records into this process's current segment, make the copies durable,
//! then repoint the metadata in one transaction; only then remove the old file.
static void CompactSegment(Repository &repository, const SegmentUsage &segment, CleanupResult &result) {
	auto &metadata = *repository.metadata;
	auto &segments = repository.storage->segments;
	auto records = metadata.garbage.LiveRecordsIn(segment.segment_id);
	for (auto &record : records) {
		if (!record.is_chunk) {
			// WAL ranges are found by location only (no hash to look them up again after a move),
			// and are short-lived: such a segment goes once its ranges do.
			return;
		}
	}
	std::vector<std::pair<LiveRecord, ChunkLocation>> moves;
	std::vector<uint8_t> buffer;
	for (auto &record : records) {
		buffer.resize(record.location.length);
		segments.Read(record.location, buffer.data());
		moves.emplace_back(record, segments.Append(buffer.data(), record.location.length, record.hash,
		                                           COMPACTION_WRITE_EDGE, RecordPlacement::PAGE_ALIGNED));
	}
	segments.Sync(COMPACTION_SYNC_EDGE);
	CrashPoint("compaction.after_copy");
	metadata.garbage.RelocateRecords(moves);
	if (metadata.garbage.ForgetSegmentIfUnused(segment.segment_id)) {
		CrashPoint("cleanup.before_unlink");
		auto removed = segments.RemoveSegmentFile(segment.segment_id);
		result.bytes_freed += removed > segment.live_bytes ? removed - segment.live_bytes : 0;
		result.segments_compacted++;
	}
}

static void ReclaimSegment(Repository &repository, const SegmentUsage &segment, const CleanupOptions &options,
                           CleanupResult &result) {
	if (!options.all && segment.created_at_us >= options.cutoff_us) {
		return;
	}
	if (segment.live_records == 0) {
		DeleteEmptySegment(repository, segment.segment_id, result);
		return;
	}
	auto size = FileSize(repository.storage->segments.SegmentPath(segment.segment_id));
	if (size > 0 && static_cast<double>(segment.live_bytes) < options.compact_below * static_cast<double>(size)) {
		CompactSegment(repository, segment, result);
	}
}

static std::string Summary(const CleanupResult &result) {
	return std::to_string(result.bytes_freed) + " bytes freed, " + std::to_string(result.segments_deleted) +
	       " segments deleted, " + std::to_string(result.segments_compacted) + " compacted, " +
	       std::to_string(result.segments_skipped_in_use) + " in use; " + std::to_string(result.chunks_deleted) +
	       " chunks, " + std::to_string(result.index_pages_deleted) + " index pages, " +
	       std::to_string(result.roots_deleted) + " roots deleted; " + std::to_string(result.pins_released) +
	       " pins released";
}

CleanupResult CleanupRepository(Repository &repository, const CleanupOptions &options) {
	LogTimer timer;
	auto &metadata = *repository.metadata;
	CleanupResult result;
	auto in_use = SealAndFindSegmentsInUse(repository);

	// Files of segments whose removal was recorded but not carried out (a crash in between).
	for (auto id : metadata.accounting.RemovedSegmentIds()) {
		result.bytes_freed += repository.storage->segments.RemoveSegmentFile(id);
	}

	auto report = metadata.garbage.CollectGarbage();
	result.pins_released = report.pins_released;
	result.roots_deleted = report.roots_deleted;
	result.index_pages_deleted = report.pages_deleted;
	result.chunks_deleted = report.chunks_deleted;

	for (auto &segment : report.segments) {
		if (in_use.Contains(segment)) {
			result.segments_skipped_in_use++;
			continue;
		}
		ReclaimSegment(repository, segment, options, result);
	}
	if (!metadata.accounting.CheckpointMetadata()) {
		LogWarning("metadata_checkpoint", "the metadata's WAL is still held by a reader in another process; it "
		                                  "was not truncated, and the next cleanup tries again");
	}
	LogEvent("cleanup", timer.ElapsedMs(), Summary(result));
	return result;
}

} // namespace differential
