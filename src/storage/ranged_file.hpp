// A WAL companion (any file but the database file): a list of byte ranges. Appends since the last
// publication are held in memory while they are small and published inline in the metadata, so a small
// commit costs one durable write; larger ones go to segment records as DuckDB streams the WAL.
#pragma once

#include "storage/versioned_file.hpp"

namespace differential {

//! Up to this many bytes appended since a WAL's last publication are published inline (docs/DURABILITY.md §4);
//! beyond it they go to segment records, whose flush then costs less than SQLite writing the bytes twice.
static constexpr uint64_t INLINE_APPEND_LIMIT = 64ULL << 10;

//! Reads an extent's bytes (a segment record, or its inline bytes) and checks their CRC32C.
void ReadExtent(SegmentStore &segments, const RangeExtent &extent, void *out);

class RangedFile : public VersionedFile {
public:
	RangedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable);

protected:
	PinKind PinsOnLoad() const override {
		return PinKind::NONE;
	}
	void ApplyLocked(StoredFile &stored) override;
	void ClearLocked() override;
	uint64_t ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) override;
	void WriteLocked(const uint8_t *in, uint64_t size, uint64_t offset) override;
	void ShrinkLocked(uint64_t new_length) override;
	bool UnpublishedInSegmentsLocked() override {
		return unpublished_records;
	}
	void PublishLocked() override;
	void CollectUnpublishedLocked(std::set<uint64_t> &out) override;

private:
	//! Appends bytes at the end: into `pending` while the unpublished appends stay small and in memory,
	//! else as range records.
	void AppendLocked(const uint8_t *in, uint64_t size);
	void AppendRecordsLocked(const uint8_t *in, uint64_t size);
	void AddExtentLocked(RangeExtent extent, uint64_t start);
	//! The end of the last extent: where `pending` starts.
	uint64_t ExtentsEnd() const {
		return length - pending.size();
	}

	//! Extents in file order, with their start offsets.
	std::vector<RangeExtent> extents;
	std::vector<uint64_t> extent_starts;
	//! How many leading extents the metadata already has.
	uint64_t published_extents = 0;
	//! Appended bytes that are in no extent yet, at the end of the file: the next publication stores them
	//! inline. Never more than INLINE_APPEND_LIMIT.
	std::vector<uint8_t> pending;
	//! Whether an unpublished extent is a segment record: its sync must flush the segments first.
	bool unpublished_records = false;
};

} // namespace differential
