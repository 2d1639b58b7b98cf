// The overlay of one open file. Chunked files (the database) change chunk by chunk; ranged files
// (the WAL) change by appends, each stored as one segment record.
#include "storage/versioned_file.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/index_page.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace differential {

// Ranged appends larger than this are split so a record length always fits 32 bits comfortably.
static constexpr uint64_t MAX_RANGE_RECORD = 64ULL << 20;

VersionedFile::VersionedFile(FileAddress address_p, std::shared_ptr<RepositoryStorage> storage_p, bool writable_p)
    : writable(writable_p), address(std::move(address_p)), storage(std::move(storage_p)) {
}

VersionedFile::~VersionedFile() {
	if (pin_id >= 0) {
		try {
			storage->catalog->Unpin(pin_id);
		} catch (...) {
			// A pin left behind is released by cleanup once this process is gone.
		}
	}
}

bool VersionedFile::Load() {
	std::unique_lock<std::shared_mutex> guard(lock);
	StoredFile stored;
	exists = storage->catalog->LoadFile(address, stored, chunked());
	pin_id = stored.pin_id;
	companions = std::move(stored.companions);
	return exists && ApplyLocked(stored);
}

bool VersionedFile::LoadFrom(const StoredFile &stored, bool exists_p) {
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = exists_p;
	return exists && ApplyLocked(stored);
}

std::vector<CompanionFile> VersionedFile::TakeCompanions() {
	std::unique_lock<std::shared_mutex> guard(lock);
	return std::move(companions);
}

bool VersionedFile::ApplyLocked(const StoredFile &stored) {
	length = stored.length;
	if (chunked()) {
		pages = stored.pages;
		chunks.assign(ChunkCount(length), Chunk());
		std::vector<Hash256> wanted;
		std::vector<uint64_t> wanted_index;
		for (uint64_t p = 0; p < pages.size(); p++) {
			auto slots = DecodeIndexPage(storage->catalog->LoadIndexPage(pages[p]));
			for (uint64_t s = 0; s < slots.size(); s++) {
				auto index = p * SLOTS_PER_INDEX_PAGE + s;
				if (IsZeroHash(slots[s]) || index >= chunks.size()) {
					continue;
				}
				wanted.push_back(slots[s]);
				wanted_index.push_back(index);
			}
		}
		std::vector<ChunkLocation> locations;
		storage->catalog->LookupChunks(wanted, locations);
		for (size_t i = 0; i < wanted.size(); i++) {
			auto &chunk = chunks[wanted_index[i]];
			chunk.hash = wanted[i];
			chunk.location = locations[i];
			chunk.present = true;
		}
	} else {
		extents = stored.extents;
		extent_starts.clear();
		uint64_t pos = 0;
		for (auto &e : extents) {
			extent_starts.push_back(pos);
			pos += e.length;
		}
		if (pos != length) {
			Fail(ErrorKind::IO, "corrupt_metadata",
			     "The stored byte ranges of " + address.ToPath() + " add up to " + std::to_string(pos) +
			         " bytes, not " + std::to_string(length) + ". Run differential_verify().");
		}
		published_extents = extents.size();
	}
	return true;
}

void VersionedFile::CreateEmpty() {
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = true;
	dirty = true;
	length = 0;
	length_dirty = true;
	chunks.clear();
	pages.clear();
	dirty_chunks.clear();
	extents.clear();
	extent_starts.clear();
	published_extents = 0;
}

void VersionedFile::MarkRemoved() {
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = false;
	dirty = false;
	length = 0;
	chunks.clear();
	pages.clear();
	dirty_chunks.clear();
	extents.clear();
	extent_starts.clear();
	published_extents = 0;
}

bool VersionedFile::Exists() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return exists;
}

uint64_t VersionedFile::Length() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return length;
}

void VersionedFile::CollectUnpublishedSegments(std::set<uint64_t> &out) {
	std::shared_lock<std::shared_mutex> guard(lock);
	for (auto index : dirty_chunks) {
		if (index < chunks.size() && chunks[index].present) {
			out.insert(chunks[index].location.segment_id);
		}
	}
	for (auto e = published_extents; e < extents.size(); e++) {
		out.insert(extents[e].segment_id);
	}
}

bool VersionedFile::HasUnpublishedChanges() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return dirty;
}

void VersionedFile::ReadChunk(const Chunk &chunk, uint64_t index, uint8_t *out) {
	try {
		storage->segments.Read(chunk.location, out);
	} catch (DifferentialError &error) {
		if (error.code != "missing_segment") {
			throw;
		}
		// Cleanup may have moved the chunk to another segment: its hash says where it is now.
		std::vector<ChunkLocation> moved;
		storage->catalog->LookupChunks({chunk.hash}, moved);
		storage->segments.Read(moved[0], out);
	}
}

uint64_t VersionedFile::Read(void *buffer, uint64_t size, uint64_t offset) {
	std::shared_lock<std::shared_mutex> guard(lock);
	if (offset >= length || size == 0) {
		return 0;
	}
	size = std::min(size, length - offset);
	if (!chunked()) {
		return ReadRangedLocked(buffer, size, offset);
	}
	auto out = static_cast<uint8_t *>(buffer);
	std::vector<uint8_t> scratch;
	for (uint64_t i = ChunkIndexOf(offset); i <= ChunkIndexOf(offset + size - 1); i++) {
		auto start = ChunkStart(i);
		auto begin = std::max(offset, start);
		auto end = std::min(offset + size, start + ChunkCapacity(i));
		auto dst = out + (begin - offset);
		auto &chunk = chunks[i];
		if (!chunk.present) {
			std::memset(dst, 0, end - begin);
		} else if (begin == start && end - begin == chunk.location.length) {
			ReadChunk(chunk, i, dst);
		} else {
			scratch.resize(chunk.location.length);
			ReadChunk(chunk, i, scratch.data());
			auto from = begin - start;
			auto available = from < scratch.size() ? std::min<uint64_t>(end - begin, scratch.size() - from) : 0;
			std::memcpy(dst, scratch.data() + from, available);
			std::memset(dst + available, 0, end - begin - available);
		}
	}
	return size;
}

void VersionedFile::WriteChunkLocked(uint64_t index, const uint8_t *content, uint64_t size) {
	auto hash = Sha256(content, size);
	auto &chunk = chunks[index];
	chunk.location = storage->StoreChunk(content, static_cast<uint32_t>(size), hash);
	chunk.hash = hash;
	chunk.present = true;
	dirty_chunks.insert(index);
}

void VersionedFile::Write(const void *buffer, uint64_t size, uint64_t offset) {
	if (size == 0) {
		return;
	}
	auto in = static_cast<const uint8_t *>(buffer);
	std::unique_lock<std::shared_mutex> guard(lock);
	exists = true;
	dirty = true;
	if (!chunked()) {
		// The WAL is appended to; any other write is turned into truncate + append.
		std::vector<uint8_t> tail;
		if (offset + size < length) {
			tail.resize(length - offset - size);
			ReadRangedLocked(tail.data(), tail.size(), offset + size);
		}
		if (offset < length) {
			TruncateRangedLocked(offset);
		}
		std::vector<uint8_t> zeros(offset > length ? offset - length : 0);
		for (auto part : {std::make_pair(static_cast<const uint8_t *>(zeros.data()), (uint64_t)zeros.size()),
		                  std::make_pair(in, size),
		                  std::make_pair(static_cast<const uint8_t *>(tail.data()), (uint64_t)tail.size())}) {
			for (uint64_t done = 0; done < part.second; done += MAX_RANGE_RECORD) {
				auto n = std::min(MAX_RANGE_RECORD, part.second - done);
				auto loc = storage->segments.Append(part.first + done, static_cast<uint32_t>(n), Hash256 {});
				extents.push_back(loc);
				extent_starts.push_back(length);
				length += n;
			}
		}
		return;
	}
	auto new_length = std::max(length, offset + size);
	chunks.resize(ChunkCount(new_length));
	std::vector<uint8_t> scratch;
	for (uint64_t i = ChunkIndexOf(offset); i <= ChunkIndexOf(offset + size - 1); i++) {
		auto start = ChunkStart(i);
		auto content = std::min(ChunkCapacity(i), new_length - start);
		auto begin = std::max(offset, start);
		auto end = std::min(offset + size, start + ChunkCapacity(i));
		if (begin == start && end == start + content) {
			WriteChunkLocked(i, in + (start - offset), content);
			continue;
		}
		// A partial write (a header, or a short tail): read, patch, store the whole chunk again.
		scratch.assign(content, 0);
		auto &chunk = chunks[i];
		if (chunk.present) {
			std::vector<uint8_t> old(chunk.location.length);
			ReadChunk(chunk, i, old.data());
			std::memcpy(scratch.data(), old.data(), std::min<uint64_t>(old.size(), content));
		}
		std::memcpy(scratch.data() + (begin - start), in + (begin - offset), end - begin);
		WriteChunkLocked(i, scratch.data(), content);
	}
	if (new_length != length) {
		length_dirty = true;
	}
	length = new_length;
}

uint64_t VersionedFile::ReadRangedLocked(void *buffer, uint64_t size, uint64_t offset) {
	auto out = static_cast<uint8_t *>(buffer);
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

void VersionedFile::TruncateRangedLocked(uint64_t new_length) {
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
	if (!partial.empty()) {
		extents.push_back(storage->segments.Append(partial.data(), static_cast<uint32_t>(partial.size()), Hash256 {}));
		extent_starts.push_back(length);
		length += partial.size();
	}
}

void VersionedFile::Truncate(uint64_t new_length) {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (new_length >= length) {
		guard.unlock();
		if (new_length > length) {
			// Growing by truncate: DuckDB never does it, but a file system must; store zeros.
			std::vector<uint8_t> zeros(new_length - Length());
			Write(zeros.data(), zeros.size(), Length());
		}
		return;
	}
	dirty = true;
	if (!chunked()) {
		TruncateRangedLocked(new_length);
		return;
	}
	auto count = ChunkCount(new_length);
	chunks.resize(count);
	dirty_chunks.erase(dirty_chunks.lower_bound(count), dirty_chunks.end());
	if (count > 0) {
		auto last = count - 1;
		auto content = new_length - ChunkStart(last);
		auto &chunk = chunks[last];
		if (chunk.present && chunk.location.length > content) {
			std::vector<uint8_t> data(chunk.location.length);
			ReadChunk(chunk, last, data.data());
			WriteChunkLocked(last, data.data(), content);
		}
	}
	length = new_length;
	length_dirty = true;
}

bool VersionedFile::Trim(uint64_t offset, uint64_t size) {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (!chunked() || size == 0) {
		return false;
	}
	bool changed = false;
	for (auto i = ChunkIndexOf(offset); i < chunks.size() && ChunkStart(i) < offset + size; i++) {
		auto whole = ChunkStart(i) >= offset && ChunkStart(i) + ChunkCapacity(i) <= offset + size;
		if (whole && chunks[i].present) {
			chunks[i] = Chunk();
			dirty_chunks.insert(i);
			changed = true;
		}
	}
	dirty = dirty || changed;
	return changed;
}

void VersionedFile::SyncChunkedLocked() {
	auto page_count = (chunks.size() + SLOTS_PER_INDEX_PAGE - 1) / SLOTS_PER_INDEX_PAGE;
	std::set<uint64_t> touched;
	for (auto index : dirty_chunks) {
		touched.insert(index / SLOTS_PER_INDEX_PAGE);
	}
	if (length_dirty && page_count > 0) {
		touched.insert(page_count - 1);
	}
	for (auto p = pages.size(); p < page_count; p++) {
		touched.insert(p);
	}
	pages.resize(page_count);
	std::vector<NewIndexPage> new_pages;
	for (auto p : touched) {
		if (p >= page_count) {
			continue;
		}
		std::vector<Hash256> slots;
		for (auto i = p * SLOTS_PER_INDEX_PAGE; i < std::min<uint64_t>(chunks.size(), (p + 1) * SLOTS_PER_INDEX_PAGE);
		     i++) {
			slots.push_back(chunks[i].present ? chunks[i].hash : Hash256 {});
		}
		NewIndexPage page;
		page.slots = EncodeIndexPage(slots);
		page.hash = Sha256(page.slots.data(), page.slots.size());
		pages[p] = page.hash;
		new_pages.push_back(std::move(page));
	}
	std::vector<NewChunk> new_chunks;
	for (auto index : dirty_chunks) {
		if (chunks[index].present) {
			new_chunks.push_back({chunks[index].hash, chunks[index].location});
		}
	}
	storage->catalog->PublishChunked(address, length, pages, new_pages, new_chunks, pin_id);
	dirty_chunks.clear();
	length_dirty = false;
}

void VersionedFile::SyncRangedLocked() {
	std::vector<ChunkLocation> fresh(extents.begin() + static_cast<std::ptrdiff_t>(published_extents), extents.end());
	storage->catalog->PublishRanged(address, length, published_extents, fresh);
	published_extents = extents.size();
}

void VersionedFile::Sync() {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (!dirty || !exists) {
		return;
	}
	if (!writable || address.IsSnapshot()) {
		Fail(ErrorKind::INVALID_INPUT, "read_only", "Cannot write " + address.ToPath() + ": it is opened read-only.");
	}
	CrashPoint("sync.before_segment_fsync");
	storage->segments.Sync();
	CrashPoint("sync.after_segment_fsync");
	if (chunked()) {
		SyncChunkedLocked();
	} else {
		SyncRangedLocked();
	}
	CrashPoint("sync.after_publish");
	dirty = false;
}

} // namespace differential

namespace differential {

FileAddress VersionedFile::Address() {
	std::shared_lock<std::shared_mutex> guard(lock);
	return address;
}

void VersionedFile::Rename(const FileAddress &to) {
	std::unique_lock<std::shared_mutex> guard(lock);
	address = to;
}

} // namespace differential
