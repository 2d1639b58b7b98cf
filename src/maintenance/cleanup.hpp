// differential_cleanup_old_files's engine: sweep unreachable metadata, then delete segments with
// no live record and compact mostly-dead ones, never touching data a live process may still use.
#pragma once

#include "repository/repository.hpp"

namespace differential {

struct CleanupOptions {
	//! Reclaim regardless of age.
	bool all = false;
	//! Otherwise only segments created before this time (microseconds since the epoch).
	int64_t cutoff_us = 0;
	//! Compact a segment when less than this share of its bytes is live.
	double compact_below = 0.5;
};

struct CleanupResult {
	int64_t pins_released = 0;
	int64_t roots_deleted = 0;
	int64_t index_pages_deleted = 0;
	int64_t chunks_deleted = 0;
	int64_t segments_deleted = 0;
	int64_t segments_compacted = 0;
	int64_t segments_skipped_in_use = 0;
	uint64_t bytes_freed = 0;
};

CleanupResult CleanupRepository(Repository &repository, const CleanupOptions &options);

} // namespace differential
