// Cleanup is safe against writers in other processes because it never touches a segment owned by
// a live process other than this one, and against this process's writers because it seals the
// current segment first and spares every segment holding an unpublished record.
#include "maintenance/cleanup.hpp"

#include "common/crash_points.hpp"
#include "common/process_identity.hpp"
#include "storage/diff_file_system.hpp"

#include <algorithm>
#include <sys/stat.h>
#include <unistd.h>

namespace differential {

static uint64_t FileSize(const std::string &path) {
	struct stat st;
	return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

CleanupResult CleanupRepository(Repository &repository, const CleanupOptions &options) {
	auto &metadata = *repository.metadata;
	auto &storage = *repository.storage;
	CleanupResult result;

	storage.SealSegment();
	// Segments this process opens from here on are newer than this and stay untouched; of the
	// older ones, those holding records a file here has not published yet stay too.
	uint64_t sealed_upto = metadata.accounting.HighestSegmentId();
	auto unpublished = DiffFileSystem::UnpublishedSegments(repository.root);
	unpublished.insert(storage.segments.CurrentSegmentId());

	// Files of segments whose removal was recorded but not carried out (a crash in between).
	for (auto id : metadata.accounting.RemovedSegmentIds()) {
		result.bytes_freed += storage.segments.RemoveSegmentFile(id);
	}

	auto report = metadata.garbage.CollectGarbage();
	result.pins_released = report.pins_released;
	result.roots_deleted = report.roots_deleted;
	result.index_pages_deleted = report.pages_deleted;
	result.chunks_deleted = report.chunks_deleted;

	auto self = static_cast<int64_t>(getpid());
	for (auto &segment : report.segments) {
		bool mine = segment.owner_pid == self && ProcessAlive(segment.owner_pid, segment.owner_start);
		if (mine ? (segment.segment_id > sealed_upto || unpublished.count(segment.segment_id))
		         : ProcessAlive(segment.owner_pid, segment.owner_start)) {
			result.segments_skipped_in_use++;
			continue;
		}
		if (!options.all && segment.created_at_us >= options.cutoff_us) {
			continue;
		}
		auto path = storage.segments.SegmentPath(segment.segment_id);
		auto size = FileSize(path);
		if (segment.live_records == 0) {
			if (metadata.garbage.ForgetSegmentIfUnused(segment.segment_id)) {
				CrashPoint("cleanup.before_unlink");
				result.bytes_freed += storage.segments.RemoveSegmentFile(segment.segment_id);
				result.segments_deleted++;
			}
			continue;
		}
		if (size == 0 || static_cast<double>(segment.live_bytes) >= options.compact_below * static_cast<double>(size)) {
			continue;
		}
		// Compaction: copy the live records into this process's current segment, make the copies
		// durable, then repoint the metadata in one transaction; only then remove the old file.
		auto records = metadata.garbage.LiveRecordsIn(segment.segment_id);
		bool has_wal = false;
		for (auto &record : records) {
			has_wal = has_wal || !record.is_chunk;
		}
		if (has_wal) {
			// WAL ranges are found by location only (no hash to look them up again after a move),
			// and are short-lived: such a segment goes once its ranges do.
			continue;
		}
		std::vector<std::pair<LiveRecord, ChunkLocation>> moves;
		std::vector<uint8_t> buffer;
		for (auto &record : records) {
			buffer.resize(record.location.length);
			storage.segments.Read(record.location, buffer.data());
			moves.emplace_back(record, storage.segments.Append(buffer.data(), record.location.length, record.hash));
		}
		storage.segments.Sync();
		CrashPoint("compaction.after_copy");
		metadata.garbage.RelocateRecords(moves);
		if (metadata.garbage.ForgetSegmentIfUnused(segment.segment_id)) {
			CrashPoint("cleanup.before_unlink");
			auto removed = storage.segments.RemoveSegmentFile(segment.segment_id);
			result.bytes_freed += removed > segment.live_bytes ? removed - segment.live_bytes : 0;
			result.segments_compacted++;
		}
	}
	metadata.accounting.CheckpointMetadata();
	return result;
}

} // namespace differential
