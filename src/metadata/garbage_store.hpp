// Garbage collection in the metadata: mark what branch files, snapshots and pins reach, sweep the
// rest, report how much of each segment is still live, and follow compaction's moves.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"

#include <utility>
#include <vector>

namespace differential {

class GarbageStore {
public:
	explicit GarbageStore(MetadataCore &core) : core(core) {
	}

	//! Mark and sweep in one transaction: releases pins of dead processes, then deletes every root,
	//! index page and chunk row that no branch file, snapshot or pin reaches. Reports segment usage.
	GarbageReport CollectGarbage();
	std::vector<LiveRecord> LiveRecordsIn(uint64_t segment_id);
	//! Points records at their copies, where they still point at the originals.
	void RelocateRecords(const std::vector<std::pair<LiveRecord, ChunkLocation>> &moves);
	//! Marks the segment removed (its row stays, so its id is never reused) when nothing references
	//! it any more; true if it did.
	bool ForgetSegmentIfUnused(uint64_t segment_id);

private:
	MetadataCore &core;
};

} // namespace differential
