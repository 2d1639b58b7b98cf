// Ranged files change by appends; any other write becomes truncate + append, so published ranges
// are never rewritten in place.
#include "storage/ranged_file.hpp"

#include "common/errors.hpp"

#include <algorithm>
#include <cstring>

namespace differential {

// Appends larger than this are split so a record length always fits 32 bits comfortably.
static constexpr uint64_t MAX_RANGE_RECORD = 64ULL << 20;
//! The fault label of WAL range writes (docs/DURABILITY.md).
static constexpr const char *RANGE_WRITE_EDGE = "wal.range_write";

RangedFile::RangedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable)
    : VersionedFile(std::move(address), std::move(storage), writable) {
}

void RangedFile::ApplyLocked(StoredFile &stored) {
	extents = stored.extents;
	extent_starts.clear();
	uint64_t pos = 0;
	for (auto &e : extents) {
		extent_starts.push_back(pos);
		pos += e.length;
	}
	if (pos != length) {
		Fail(ErrorKind::IO, "corrupt_metadata",
		     "The stored byte ranges of " + address.ToPath() + " add up to " + std::to_string(pos) + " bytes, not " +
		         std::to_string(length) + ". Run differential_verify().");
	}
	published_extents = extents.size();
}

void RangedFile::ClearLocked() {
	extents.clear();
	extent_starts.clear();
	published_extents = 0;
}

void RangedFile::CollectUnpublishedLocked(std::set<uint64_t> &out) {
	for (auto e = published_extents; e < extents.size(); e++) {
		out.insert(extents[e].segment_id);
	}
}

uint64_t RangedFile::ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) {
	auto it = std::upper_bound(extent_starts.begin(), extent_starts.end(), offset);
	size_t e = static_cast<size_t>(it - extent_starts.begin()) - 1;
	uint64_t done = 0;
	std::vector<uint8_t> scratch;
	while (done < size && e < extents.size()) {
		auto &ext = extents[e];
		auto from = offset + done - extent_starts[e];
		auto n = std::min<uint64_t>(size - done, ext.length - from);
		if (from == 0 && n == ext.length) {
			storage->segments.Read(ext, out + done);
		} else {
			scratch.resize(ext.length);
			storage->segments.Read(ext, scratch.data());
			std::memcpy(out + done, scratch.data() + from, n);
		}
		done += n;
		e++;
	}
	return done;
}

void RangedFile::AppendLocked(const uint8_t *in, uint64_t size) {
	for (uint64_t done = 0; done < size; done += MAX_RANGE_RECORD) {
		auto n = std::min(MAX_RANGE_RECORD, size - done);
		auto loc = storage->segments.Append(in + done, static_cast<uint32_t>(n), Hash256 {}, RANGE_WRITE_EDGE);
		extents.push_back(loc);
		extent_starts.push_back(length);
		length += n;
	}
}

void RangedFile::WriteLocked(const uint8_t *in, uint64_t size, uint64_t offset) {
	std::vector<uint8_t> tail;
	if (offset + size < length) {
		tail.resize(length - offset - size);
		ReadLocked(tail.data(), tail.size(), offset + size);
	}
	if (offset < length) {
		ShrinkLocked(offset);
	}
	std::vector<uint8_t> zeros(offset > length ? offset - length : 0);
	AppendLocked(zeros.data(), zeros.size());
	AppendLocked(in, size);
	AppendLocked(tail.data(), tail.size());
}

void RangedFile::ShrinkLocked(uint64_t new_length) {
	auto keep = static_cast<size_t>(std::lower_bound(extent_starts.begin(), extent_starts.end(), new_length) -
	                                extent_starts.begin());
	std::vector<uint8_t> partial;
	if (keep > 0 && extent_starts[keep - 1] + extents[keep - 1].length > new_length) {
		// The last kept extent straddles the new end: store its head again as its own record.
		auto &ext = extents[keep - 1];
		partial.resize(ext.length);
		storage->segments.Read(ext, partial.data());
		partial.resize(new_length - extent_starts[keep - 1]);
		keep--;
	}
	extents.resize(keep);
	extent_starts.resize(keep);
	published_extents = std::min<uint64_t>(published_extents, keep);
	length = keep ? extent_starts[keep - 1] + extents[keep - 1].length : 0;
	AppendLocked(partial.data(), partial.size());
}

void RangedFile::PublishLocked() {
	std::vector<ChunkLocation> fresh(extents.begin() + static_cast<std::ptrdiff_t>(published_extents), extents.end());
	storage->catalog->PublishRanged(address, length, published_extents, fresh);
	published_extents = extents.size();
}

} // namespace differential
