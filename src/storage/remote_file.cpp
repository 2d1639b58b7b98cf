// Verified on-demand reads of a remote image, and the process registry of remote image paths.
#include "storage/remote_file.hpp"

#include "common/errors.hpp"
#include "storage/chunk_geometry.hpp"
#include "storage/diff_path.hpp"
#include "storage/remote_fetch.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>

namespace differential {

static constexpr const char *REMOTE_PATH_PREFIX = "diff://remote/";

RemoteImageFile::RemoteImageFile(std::shared_ptr<ObjectStore> store_p, std::string pack_prefix_p, RemoteImage image_p,
                                 std::string locator_p, std::shared_ptr<ContentCache> cache_p,
                                 std::shared_ptr<const ImageOverlay> overlay_p)
    : store(std::move(store_p)), pack_prefix(std::move(pack_prefix_p)), image(std::move(image_p)),
      overlay(std::move(overlay_p)), locator(std::move(locator_p)), cache(std::move(cache_p)) {
	for (uint64_t index = 0; index < image.chunks.size(); index++) {
		if (!image.chunks[index].IsHole()) {
			pack_chunks[image.chunks[index].pack].push_back(index);
		}
	}
	for (auto &entry : pack_chunks) {
		std::sort(entry.second.begin(), entry.second.end(),
		          [&](uint64_t a, uint64_t b) { return image.chunks[a].offset < image.chunks[b].offset; });
	}
}

bool RemoteImageFile::Unclaimed(const Hash256 &chunk, const HashSet &claimed) {
	return !cache->Contains(chunk) && (!in_flight.count(chunk) || claimed.count(chunk));
}

std::vector<uint64_t> RemoteImageFile::TakeAlong(const Hash256 &pack, uint64_t &begin, uint64_t &end,
                                                 HashSet &claimed) {
	std::vector<uint64_t> extra;
	auto &indexes = pack_chunks[pack];
	// Aligned, so that reads around one place of the pack share a window whichever of them comes first.
	auto window_begin = begin - begin % TAKE_ALONG_BYTES;
	auto window_end = std::max(window_begin + TAKE_ALONG_BYTES, end);
	auto by_offset = [&](uint64_t index, uint64_t offset) {
		return image.chunks[index].offset < offset;
	};
	std::lock_guard<std::mutex> guard(flight_lock);
	auto take = [&](uint64_t index) {
		in_flight.insert(image.chunks[index].chunk);
		claimed.insert(image.chunks[index].chunk);
		extra.push_back(index);
	};
	for (auto at = std::lower_bound(indexes.begin(), indexes.end(), end, by_offset); at != indexes.end(); ++at) {
		auto &chunk = image.chunks[*at];
		if (chunk.offset != end || chunk.offset + chunk.length > window_end || !Unclaimed(chunk.chunk, claimed)) {
			break;
		}
		take(*at);
		end += chunk.length;
	}
	for (auto at = std::lower_bound(indexes.begin(), indexes.end(), begin, by_offset); at != indexes.begin();) {
		auto &chunk = image.chunks[*--at];
		if (chunk.offset + chunk.length != begin || chunk.offset < window_begin || !Unclaimed(chunk.chunk, claimed)) {
			break;
		}
		take(*at);
		begin = chunk.offset;
	}
	return extra;
}

void RemoteImageFile::CopyPiece(const Piece &piece, const std::string &bytes) {
	ContentCache::CopyRange(bytes.data(), bytes.size(), piece.skip, piece.take, piece.out);
}

bool RemoteImageFile::ReadCached(const Piece &piece) {
	return cache->ReadRange(image.chunks[piece.index].chunk, piece.skip, piece.take, piece.out);
}

uint64_t RemoteImageFile::ReadWal(void *buffer, uint64_t size, uint64_t offset) const {
	if (!overlay || offset >= overlay->wal.size()) {
		return 0;
	}
	size = std::min<uint64_t>(size, overlay->wal.size() - offset);
	std::memcpy(buffer, overlay->wal.data() + offset, size);
	return size;
}

uint64_t RemoteImageFile::Read(void *buffer, uint64_t size, uint64_t offset) {
	auto length = Length();
	if (offset >= length) {
		return 0;
	}
	size = std::min(size, length - offset);
	auto out = static_cast<uint8_t *>(buffer);
	std::vector<Piece> missing;
	for (uint64_t index = ChunkIndexOf(offset);; index++) {
		auto chunk_begin = ChunkStart(index);
		auto begin = std::max(offset, chunk_begin);
		auto end = std::min(offset + size, chunk_begin + ChunkCapacity(index));
		if (begin >= end) {
			break;
		}
		Piece piece {index, out + (begin - offset), begin - chunk_begin, end - begin};
		// A shipped state's chunks win over the export's; past the export's chunks the file reads as zeros.
		auto shipped = overlay ? overlay->chunks.find(index) : std::map<uint64_t, std::string>::const_iterator();
		if (overlay && shipped != overlay->chunks.end()) {
			CopyPiece(piece, shipped->second);
			continue;
		}
		if (index >= image.chunks.size()) {
			std::memset(piece.out, 0, piece.take);
			continue;
		}
		auto &chunk = image.chunks[index];
		if (chunk.IsHole()) {
			std::memset(piece.out, 0, piece.take);
		} else if (!ReadCached(piece)) {
			missing.push_back(piece);
		}
	}
	FetchMissing(missing);
	return size;
}

void RemoteImageFile::Release(const HashSet &claimed) {
	{
		std::lock_guard<std::mutex> guard(flight_lock);
		for (auto &hash : claimed) {
			in_flight.erase(hash);
		}
	}
	flight_done.notify_all();
}

//! Releases a thread's claims however its fetches end (a refusal included), so no waiter waits forever.
class ClaimRelease {
public:
	explicit ClaimRelease(std::function<void()> release) : release(std::move(release)) {
	}
	~ClaimRelease() {
		release();
	}

private:
	std::function<void()> release;
};

void RemoteImageFile::FetchMissing(std::vector<Piece> &missing) {
	HashSet claimed;
	std::vector<Piece> mine, waiting;
	{
		std::lock_guard<std::mutex> guard(flight_lock);
		for (auto &piece : missing) {
			auto &hash = image.chunks[piece.index].chunk;
			// Another thread may have fetched it since this read looked: then it is only read back.
			if (!Unclaimed(hash, claimed)) {
				waiting.push_back(piece);
			} else {
				in_flight.insert(hash);
				claimed.insert(hash);
				mine.push_back(piece);
			}
		}
	}
	{
		ClaimRelease release([&]() { Release(claimed); });
		FetchRuns(mine, claimed);
	}
	std::vector<Piece> again;
	for (auto &piece : waiting) {
		auto &hash = image.chunks[piece.index].chunk;
		{
			std::unique_lock<std::mutex> guard(flight_lock);
			flight_done.wait(guard, [&]() { return !in_flight.count(hash); });
		}
		if (!ReadCached(piece)) {
			// The other fetch failed (or the chunk was evicted since): fetch it here, and meet its refusal.
			again.push_back(piece);
		}
	}
	if (!again.empty()) {
		FetchMissing(again);
	}
}

void RemoteImageFile::FetchRuns(std::vector<Piece> &missing, HashSet &claimed) {
	// Sorted by place in the packs, so chunks stored back to back come out of one ranged GET.
	std::sort(missing.begin(), missing.end(), [&](const Piece &a, const Piece &b) {
		auto &x = image.chunks[a.index];
		auto &y = image.chunks[b.index];
		return x.pack != y.pack ? x.pack < y.pack : x.offset < y.offset;
	});
	for (size_t first = 0; first < missing.size();) {
		auto &head = image.chunks[missing[first].index];
		uint64_t begin = head.offset, end = head.offset + head.length;
		size_t last = first + 1;
		for (; last < missing.size(); last++) {
			auto &next = image.chunks[missing[last].index];
			if (next.pack != head.pack || next.offset > end) {
				break;
			}
			end = std::max<uint64_t>(end, next.offset + next.length);
		}
		std::vector<Piece> run(missing.begin() + first, missing.begin() + last);
		FetchRun(head.pack, begin, end, run, claimed);
		first = last;
	}
}

void RemoteImageFile::FetchRun(const Hash256 &pack, uint64_t begin, uint64_t end, const std::vector<Piece> &pieces,
                               HashSet &claimed) {
	auto key = pack_prefix + HashToHex(pack);
	auto extra = TakeAlong(pack, begin, end, claimed);
	auto result = LoggedGet(*store, key, ByteRange {begin, end - begin});
	if (result.outcome.status == ObjectStatus::NOT_FOUND) {
		Fail(ErrorCode::MISSING_OBJECT,
		     "The pack " + key + " that " + locator + " reads from is missing at " + store->Describe() +
		         ": the export is incomplete or its objects were deleted. Attach a newer branch head or descriptor.");
	}
	if (!result.outcome.Ok()) {
		FailRemote(result.outcome, *store, "reading the pack " + key + " of " + locator);
	}
	for (auto &piece : pieces) {
		auto &chunk = image.chunks[piece.index];
		auto at = chunk.offset - begin;
		// A pack shorter than its index says fails the hash check like a damaged one.
		auto bytes = at < result.data.size() ? result.data.substr(at, chunk.length) : std::string();
		if (bytes.size() != chunk.length || Sha256(bytes.data(), bytes.size()) != chunk.chunk) {
			Fail(ErrorCode::CORRUPT_CHUNK,
			     "Chunk " + std::to_string(piece.index) + " of " + locator + " (bytes " + std::to_string(chunk.offset) +
			         "+" + std::to_string(chunk.length) + " of " + key + " at " + store->Describe() +
			         ") does not match its SHA-256 " + HashToHex(chunk.chunk) +
			         "; nothing of it was returned. The object was damaged in the store: re-export the snapshot.");
		}
		cache->Insert(chunk.chunk, bytes);
		CopyPiece(piece, bytes);
	}
	for (auto index : extra) {
		// Taken along, not asked for: one that does not match is left out (and refused if it is ever read).
		auto &chunk = image.chunks[index];
		auto at = chunk.offset - begin;
		auto bytes = at < result.data.size() ? result.data.substr(at, chunk.length) : std::string();
		if (bytes.size() == chunk.length && Sha256(bytes.data(), bytes.size()) == chunk.chunk) {
			cache->Insert(chunk.chunk, bytes);
		}
	}
}

struct RemoteImageRegistry {
	std::mutex lock;
	uint64_t next_id = 1;
	std::map<uint64_t, std::weak_ptr<RemoteImageFile>> images;
};

static RemoteImageRegistry &Registry() {
	static auto *registry = new RemoteImageRegistry();
	return *registry;
}

std::string RegisterRemoteImage(const std::shared_ptr<RemoteImageFile> &file) {
	auto &registry = Registry();
	std::lock_guard<std::mutex> guard(registry.lock);
	// Forget images that are gone, so the map holds only live attachments.
	for (auto it = registry.images.begin(); it != registry.images.end();) {
		it = it->second.expired() ? registry.images.erase(it) : std::next(it);
	}
	auto id = registry.next_id++;
	registry.images[id] = file;
	return REMOTE_PATH_PREFIX + std::to_string(id) + "/" + MAIN_FILE_NAME;
}

bool IsRemoteImagePath(const std::string &path) {
	return path.rfind(REMOTE_PATH_PREFIX, 0) == 0;
}

bool IsRemoteWalPath(const std::string &path) {
	auto suffix = std::string("/") + MAIN_FILE_NAME + ".wal";
	return IsRemoteImagePath(path) && path.size() > suffix.size() &&
	       path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::shared_ptr<RemoteImageFile> FindRemoteImage(const std::string &path, bool &is_database_file) {
	auto rest = path.substr(std::string(REMOTE_PATH_PREFIX).size());
	auto slash = rest.find('/');
	auto id_text = rest.substr(0, slash);
	auto file_name = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
	bool digits = !id_text.empty() && id_text.size() < 19 && id_text[0] != '0' &&
	              std::all_of(id_text.begin(), id_text.end(), [](char c) { return c >= '0' && c <= '9'; });
	if (!digits || file_name.rfind(MAIN_FILE_NAME, 0) != 0 || file_name.find('/') != std::string::npos) {
		Fail(ErrorCode::INVALID_PATH, "The path " + path +
		                                  " is not a remote database path. Attach exports with ATTACH "
		                                  "'differential:s3://<bucket>/<prefix>/heads/<database>/<branch>'.");
	}
	is_database_file = file_name == MAIN_FILE_NAME;
	auto &registry = Registry();
	std::lock_guard<std::mutex> guard(registry.lock);
	auto it = registry.images.find(std::stoull(id_text));
	return it == registry.images.end() ? nullptr : it->second.lock();
}

} // namespace differential
