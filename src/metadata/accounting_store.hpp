// Accounting in the metadata: what the repository holds (totals, segments) and the full listings
// that verification walks.
#pragma once

#include "metadata/metadata_core.hpp"
#include "metadata/records.hpp"

#include <string>
#include <utility>
#include <vector>

namespace differential {

class AccountingStore {
public:
	explicit AccountingStore(MetadataCore &core) : core(core) {
	}

	//! Totals over the whole repository, or one database when `database` is not empty.
	StorageTotals Totals(const std::string &database);
	//! Segments not removed.
	std::vector<uint64_t> AllSegmentIds();
	//! Segments marked removed; their files may be left over from an interrupted cleanup.
	std::vector<uint64_t> RemovedSegmentIds();
	uint64_t HighestSegmentId();
	//! Folds SQLite's WAL back into the metadata file and truncates it (after a cleanup); false when
	//! readers in other processes still hold the WAL (the next cleanup tries again).
	bool CheckpointMetadata();

	std::vector<ChunkRow> AllChunks();
	//! Every root still referenced by a branch file or a snapshot.
	std::vector<RootRow> LiveRoots();
	std::vector<std::pair<std::string, RangeExtent>> AllExtents();
	//! Each ranged file whose extents' seq numbers do not run from 0 without a gap: "<owner>: <what>" lines.
	std::vector<std::string> ExtentGaps();
	bool HasIndexPage(const Hash256 &page);
	bool HasChunk(const Hash256 &hash);

private:
	std::vector<uint64_t> SegmentIds(const char *sql);
	bool HasHash(const char *sql, const Hash256 &hash);
	MetadataCore &core;
};

} // namespace differential
