// Chunked files change chunk by chunk: a partial write reads, patches and stores the whole chunk
// again, so every published root maps each chunk to one complete, hashed record.
#include "storage/chunked_file.hpp"

#include "common/errors.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/index_page.hpp"

#include <algorithm>
#include <cstring>

namespace differential {

ChunkedFile::ChunkedFile(FileAddress address, std::shared_ptr<RepositoryStorage> storage, bool writable)
    : VersionedFile(std::move(address), std::move(storage), writable) {
}

ChunkedFile::~ChunkedFile() {
	if (pin.Held()) {
		try {
			storage->catalog->Unpin(pin);
		} catch (...) {
			// A pin left behind is released by cleanup once this process is gone.
		}
	}
}

void ChunkedFile::KeepLoadedLocked(StoredFile &stored) {
	pin = stored.pin;
	companions = std::move(stored.companions);
}

std::vector<CompanionFile> ChunkedFile::TakeCompanions() {
	std::unique_lock<std::shared_mutex> guard(lock);
	return std::move(companions);
}

void ChunkedFile::ApplyLocked(StoredFile &stored) {
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
}

void ChunkedFile::ClearLocked() {
	chunks.clear();
	pages.clear();
	dirty_chunks.clear();
	length_dirty = true;
}

void ChunkedFile::CollectUnpublishedLocked(std::set<uint64_t> &out) {
	for (auto index : dirty_chunks) {
		if (index < chunks.size() && chunks[index].present) {
			out.insert(chunks[index].location.segment_id);
		}
	}
}

void ChunkedFile::ReadChunk(const Chunk &chunk, uint8_t *out) {
	try {
		storage->ReadChunk(chunk.hash, chunk.location, out);
	} catch (DifferentialError &error) {
		if (error.code != ErrorCode::MISSING_SEGMENT) {
			throw;
		}
		// Cleanup may have moved the chunk to another segment, or removed it after an eviction: its hash
		// says where it is now (segment 0: in the store it was exported to).
		std::vector<ChunkLocation> moved;
		storage->catalog->LookupChunks({chunk.hash}, moved);
		storage->ReadChunk(chunk.hash, moved[0], out);
	}
}

void ChunkedFile::ReadPartOfChunk(uint64_t index, uint64_t begin, uint64_t end, uint8_t *out,
                                  std::vector<uint8_t> &scratch) {
	auto start = ChunkStart(index);
	auto &chunk = chunks[index];
	if (!chunk.present) {
		std::memset(out, 0, end - begin);
		return;
	}
	if (begin == start && end - begin == chunk.location.length) {
		ReadChunk(chunk, out);
		return;
	}
	// A stored chunk may be shorter than the range (the file's last chunk before it grew): zeros follow.
	scratch.resize(chunk.location.length);
	ReadChunk(chunk, scratch.data());
	auto from = begin - start;
	auto available = from < scratch.size() ? std::min<uint64_t>(end - begin, scratch.size() - from) : 0;
	std::memcpy(out, scratch.data() + from, available);
	std::memset(out + available, 0, end - begin - available);
}

uint64_t ChunkedFile::ReadLocked(uint8_t *out, uint64_t size, uint64_t offset) {
	std::vector<uint8_t> scratch;
	for (uint64_t i = ChunkIndexOf(offset); i <= ChunkIndexOf(offset + size - 1); i++) {
		auto begin = std::max(offset, ChunkStart(i));
		auto end = std::min(offset + size, ChunkStart(i) + ChunkCapacity(i));
		ReadPartOfChunk(i, begin, end, out + (begin - offset), scratch);
	}
	return size;
}

std::vector<Hash256> ChunkedFile::CurrentChunkHashes() {
	std::shared_lock<std::shared_mutex> guard(lock);
	std::vector<Hash256> out(chunks.size());
	for (size_t i = 0; i < chunks.size(); i++) {
		if (chunks[i].present) {
			out[i] = chunks[i].hash;
		}
	}
	return out;
}

void ChunkedFile::StoreChunkLocked(uint64_t index, const uint8_t *content, uint64_t size) {
	auto hash = Sha256(content, size);
	auto &chunk = chunks[index];
	chunk.location = storage->StoreChunk(content, static_cast<uint32_t>(size), hash);
	chunk.hash = hash;
	chunk.present = true;
	dirty_chunks.insert(index);
}

void ChunkedFile::WriteLocked(const uint8_t *in, uint64_t size, uint64_t offset) {
	auto new_length = std::max(length, offset + size);
	chunks.resize(ChunkCount(new_length));
	std::vector<uint8_t> scratch, old;
	for (uint64_t i = ChunkIndexOf(offset); i <= ChunkIndexOf(offset + size - 1); i++) {
		auto start = ChunkStart(i);
		auto content = std::min(ChunkCapacity(i), new_length - start);
		auto begin = std::max(offset, start);
		auto end = std::min(offset + size, start + ChunkCapacity(i));
		if (begin == start && end == start + content) {
			StoreChunkLocked(i, in + (start - offset), content);
			continue;
		}
		// A partial write (a header, or a short tail): read, patch, store the whole chunk again.
		scratch.assign(content, 0);
		auto &chunk = chunks[i];
		if (chunk.present) {
			old.resize(chunk.location.length);
			ReadChunk(chunk, old.data());
			std::memcpy(scratch.data(), old.data(), std::min<uint64_t>(old.size(), content));
		}
		std::memcpy(scratch.data() + (begin - start), in + (begin - offset), end - begin);
		StoreChunkLocked(i, scratch.data(), content);
	}
	if (new_length != length) {
		length_dirty = true;
	}
	length = new_length;
}

void ChunkedFile::ShrinkLocked(uint64_t new_length) {
	auto count = ChunkCount(new_length);
	chunks.resize(count);
	dirty_chunks.erase(dirty_chunks.lower_bound(count), dirty_chunks.end());
	if (count > 0) {
		auto last = count - 1;
		auto content = new_length - ChunkStart(last);
		auto &chunk = chunks[last];
		if (chunk.present && chunk.location.length > content) {
			std::vector<uint8_t> data(chunk.location.length);
			ReadChunk(chunk, data.data());
			StoreChunkLocked(last, data.data(), content);
		}
	}
	length = new_length;
	length_dirty = true;
}

bool ChunkedFile::Trim(uint64_t offset, uint64_t size) {
	std::unique_lock<std::shared_mutex> guard(lock);
	if (size == 0) {
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

std::vector<NewIndexPage> ChunkedFile::RewriteTouchedPages() {
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
	return new_pages;
}

void ChunkedFile::PublishLocked() {
	auto new_pages = RewriteTouchedPages();
	std::vector<NewChunk> new_chunks;
	for (auto index : dirty_chunks) {
		if (chunks[index].present) {
			new_chunks.push_back({chunks[index].hash, chunks[index].location});
		}
	}
	storage->catalog->PublishChunked(address, published, length, pages, new_pages, new_chunks, pin);
	dirty_chunks.clear();
	length_dirty = false;
}

} // namespace differential
