// A WAL companion (any file but the database file): a list of byte ranges, each one segment record,
// appended as DuckDB streams the WAL; publishing records the ranges after the still-valid prefix.
#pragma once

#include "storage/versioned_file.hpp"

namespace differential {

class RangedFile : public VersionedFile {
public:
	RangedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable);

protected:
	bool PinsOnLoad() const override {
		return false;
	}
	void ApplyLocked(StoredFile &stored) override;
	void ClearLocked() override;
	uint64_t ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) override;
	void WriteLocked(const uint8_t *in, uint64_t size, uint64_t offset) override;
	void ShrinkLocked(uint64_t new_length) override;
	void PublishLocked() override;
	void CollectUnpublishedLocked(std::set<uint64_t> &out) override;

private:
	//! Appends bytes at the end as range records.
	void AppendLocked(const uint8_t *in, uint64_t size);

	//! Extents in file order, with their start offsets.
	std::vector<ChunkLocation> extents;
	std::vector<uint64_t> extent_starts;
	//! How many leading extents the metadata already has.
	uint64_t published_extents = 0;
};

} // namespace differential
