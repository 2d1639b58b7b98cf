// Garbage collection in the metadata: delete what branch files, snapshots and pins no longer reach,
// report how much of each segment is still live, and follow compaction's moves.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/pin_store.hpp"
#include "metadata/records.hpp"

#include <string>
#include <utility>
#include <vector>

namespace differential {

class GarbageStore {
public:
	GarbageStore(MetadataCore &core, PinStore &pins) : core(core), pins(pins) {
	}

	//! One transaction, under the reader pins' lock: releases pins of dead processes, counts the roots and pages
	//! written since the last cleanup, then deletes every root, index page and chunk row that no branch file, snapshot
	//! or pin reaches (by reference counts: the work follows the garbage, not the history). Reports segment usage.
	GarbageReport CollectGarbage();
	//! The full mark as a verifier (differential_verify): one line per reference count that disagrees with
	//! the rows, or unreferenced root that no cleanup would find.
	std::vector<std::string> AuditReferences(int64_t &rows_checked);
	std::vector<LiveRecord> LiveRecordsIn(uint64_t segment_id);
	//! Points records at their copies, where they still point at the originals.
	void RelocateRecords(const std::vector<std::pair<LiveRecord, ChunkLocation>> &moves);
	//! Marks the segment removed (its row stays, so its id is never reused) when nothing references
	//! it any more; true if it did.
	bool ForgetSegmentIfUnused(uint64_t segment_id);

private:
	MetadataCore &core;
	PinStore &pins;
};

} // namespace differential
