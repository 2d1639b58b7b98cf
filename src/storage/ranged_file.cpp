// Ranged files change by appends; any other write becomes truncate + append, so published ranges
// are never rewritten in place. Small appends wait in memory and are published inline.
#include "storage/ranged_file.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"

#include <algorithm>
#include <cstring>

namespace differential {

// Appends larger than this are split so a record length always fits 32 bits comfortably.
static constexpr uint64_t MAX_RANGE_RECORD = 64ULL << 20;
//! The fault label of WAL range writes (docs/DURABILITY.md).
static constexpr const char *RANGE_WRITE_EDGE = "wal.range_write";

[[noreturn]] static void InlineCorrupt(const std::string &what) {
	Fail(ErrorCode::CORRUPT_CHUNK,
	     "CRC32C mismatch in the inline bytes of " + what +
	         ": the stored data is damaged and was not returned. Run differential_verify() to see what is affected.");
}

void ReadExtent(SegmentStore &segments, const RangeExtent &extent, void *out) {
	if (!extent.IsInline()) {
		segments.Read(extent.location, out);
		return;
	}
	if (Crc32c(extent.inline_bytes->data(), extent.inline_bytes->size()) != extent.location.crc32c) {
		InlineCorrupt("a WAL byte range");
	}
	std::memcpy(out, extent.inline_bytes->data(), extent.inline_bytes->size());
}

RangedFile::RangedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable)
    : VersionedFile(std::move(address), std::move(storage), writable) {
}

void RangedFile::ApplyLocked(StoredFile &stored) {
	ClearLocked();
	extents = stored.extents;
	uint64_t pos = 0;
	for (auto &e : extents) {
		// Checked once here rather than on every read: reads copy parts of inline extents directly.
		if (e.IsInline() && Crc32c(e.inline_bytes->data(), e.inline_bytes->size()) != e.location.crc32c) {
			InlineCorrupt(address.ToPath());
		}
		extent_starts.push_back(pos);
		pos += e.location.length;
	}
	// The metadata stores no length of a ranged file (schema 13): it is its extents' sum.
	length = pos;
	published_extents = extents.size();
	published.stored_extents = extents.size();
}

void RangedFile::ClearLocked() {
	extents.clear();
	extent_starts.clear();
	published_extents = 0;
	pending.clear();
	unpublished_records = false;
}

void RangedFile::CollectUnpublishedLocked(std::set<uint64_t> &out) {
	for (auto e = published_extents; e < extents.size(); e++) {
		if (!extents[e].IsInline()) {
			out.insert(extents[e].location.segment_id);
		}
	}
}

uint64_t RangedFile::ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) {
	auto end = ExtentsEnd();
	uint64_t done = 0;
	if (offset < end) {
		auto it = std::upper_bound(extent_starts.begin(), extent_starts.end(), offset);
		size_t e = static_cast<size_t>(it - extent_starts.begin()) - 1;
		auto in_extents = std::min(size, end - offset);
		std::vector<uint8_t> scratch;
		while (done < in_extents) {
			auto &ext = extents[e];
			auto from = offset + done - extent_starts[e];
			auto n = std::min<uint64_t>(in_extents - done, ext.location.length - from);
			if (ext.IsInline()) {
				std::memcpy(out + done, ext.inline_bytes->data() + from, n);
			} else if (from == 0 && n == ext.location.length) {
				storage->segments.Read(ext.location, out + done);
			} else {
				scratch.resize(ext.location.length);
				storage->segments.Read(ext.location, scratch.data());
				std::memcpy(out + done, scratch.data() + from, n);
			}
			done += n;
			e++;
		}
	}
	if (done < size) {
		std::memcpy(out + done, pending.data() + (offset + done - end), size - done);
		done = size;
	}
	return done;
}

void RangedFile::AddExtentLocked(RangeExtent extent, uint64_t start) {
	extents.push_back(std::move(extent));
	extent_starts.push_back(start);
}

void RangedFile::AppendRecordsLocked(const uint8_t *in, uint64_t size) {
	for (uint64_t done = 0; done < size; done += MAX_RANGE_RECORD) {
		auto n = std::min(MAX_RANGE_RECORD, size - done);
		RangeExtent extent;
		extent.location = storage->segments.Append(in + done, static_cast<uint32_t>(n), Hash256 {}, RANGE_WRITE_EDGE);
		AddExtentLocked(std::move(extent), length);
		length += n;
		unpublished_records = true;
	}
}

void RangedFile::AppendLocked(const uint8_t *in, uint64_t size) {
	if (size == 0) {
		return;
	}
	if (!unpublished_records && pending.size() + size <= INLINE_APPEND_LIMIT) {
		pending.insert(pending.end(), in, in + size);
		length += size;
		return;
	}
	if (!pending.empty()) {
		// The sync will flush segments anyway: the held bytes go to a record first, in file order.
		std::vector<uint8_t> held;
		held.swap(pending);
		length -= held.size();
		try {
			AppendRecordsLocked(held.data(), held.size());
		} catch (...) {
			length += held.size();
			pending.swap(held);
			throw;
		}
		CrashPoint("wal.after_spill");
	}
	AppendRecordsLocked(in, size);
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
	auto end = ExtentsEnd();
	if (new_length >= end) {
		pending.resize(new_length - end);
		length = new_length;
		return;
	}
	pending.clear();
	length = end;
	auto keep = static_cast<size_t>(std::lower_bound(extent_starts.begin(), extent_starts.end(), new_length) -
	                                extent_starts.begin());
	std::vector<uint8_t> partial;
	if (keep > 0 && extent_starts[keep - 1] + extents[keep - 1].location.length > new_length) {
		// The last kept extent straddles the new end: store its head again as its own extent.
		auto &ext = extents[keep - 1];
		partial.resize(ext.location.length);
		ReadExtent(storage->segments, ext, partial.data());
		partial.resize(new_length - extent_starts[keep - 1]);
		keep--;
	}
	extents.resize(keep);
	extent_starts.resize(keep);
	published_extents = std::min<uint64_t>(published_extents, keep);
	length = keep ? extent_starts[keep - 1] + extents[keep - 1].location.length : 0;
	unpublished_records = std::any_of(extents.begin() + static_cast<std::ptrdiff_t>(published_extents), extents.end(),
	                                  [](const RangeExtent &e) { return !e.IsInline(); });
	AppendLocked(partial.data(), partial.size());
}

void RangedFile::PublishLocked() {
	if (!pending.empty()) {
		RangeExtent extent;
		auto bytes = std::make_shared<std::vector<uint8_t>>();
		bytes->swap(pending);
		auto start = length - bytes->size();
		extent.location.length = static_cast<uint32_t>(bytes->size());
		extent.location.crc32c = Crc32c(bytes->data(), bytes->size());
		extent.inline_bytes = std::move(bytes);
		AddExtentLocked(std::move(extent), start);
	}
	std::vector<RangeExtent> fresh(extents.begin() + static_cast<std::ptrdiff_t>(published_extents), extents.end());
	storage->catalog->PublishRanged(address, published, published_extents, fresh);
	published_extents = extents.size();
	unpublished_records = false;
}

} // namespace differential
