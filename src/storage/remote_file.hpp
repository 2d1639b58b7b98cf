// A database file read from an S3 export (a RemoteImage): each chunk is fetched from its pack on first
// need, checked against its SHA-256 before anyone sees a byte, and kept in the remote caches. A process
// registry names each open image by a diff:// path, diff://remote/<id>/database.duckdb, so DuckDB's native
// storage opens it through the diff:// file system like any other database file.
#pragma once

#include "storage/content_cache.hpp"
#include "storage/object_store.hpp"
#include "storage/remote_image.hpp"

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace differential {

//! A shipped WAL state over an export (a follower of commits): chunks that replace or extend the export's,
//! the main file's length, and the WAL DuckDB replays when it opens the file (`database.duckdb.wal`).
struct ImageOverlay {
	std::map<uint64_t, std::string> chunks;
	uint64_t length = 0;
	std::string wal;
};

class RemoteImageFile {
public:
	//! A fetch of chunks of a pack also takes along the chunks stored around them in the pack, within the aligned
	//! window of this many bytes of the pack that holds the first of them: DuckDB reads one 256 KiB block at a
	//! time, and a scan's next blocks are those of the neighbouring row groups and columns, stored nearby in
	//! either direction, so this trades some transfer for far fewer requests (bench/S3_RESULTS.md measures it).
	static constexpr uint64_t TAKE_ALONG_BYTES = 4ULL << 20;

	//! `locator` names the export for people (`s3://bucket/prefix/heads/db/main`); never credentials.
	//! Pack `p` is the object `pack_prefix + hex(p)` (remote/export_format.hpp lays the keys out).
	RemoteImageFile(std::shared_ptr<ObjectStore> store, std::string pack_prefix, RemoteImage image, std::string locator,
	                std::shared_ptr<ContentCache> cache, std::shared_ptr<const ImageOverlay> overlay = nullptr);

	uint64_t Length() const {
		return overlay ? overlay->length : image.length;
	}
	//! Whether the image has a WAL (only a shipped state does), and reads of it.
	bool HasWal() const {
		return overlay && !overlay->wal.empty();
	}
	uint64_t WalLength() const {
		return overlay ? overlay->wal.size() : 0;
	}
	uint64_t ReadWal(void *buffer, uint64_t size, uint64_t offset) const;
	const std::string &Locator() const {
		return locator;
	}
	//! Returns the bytes read, short only at the end of the file. Bytes are verified before they are
	//! copied out: a chunk that does not match its hash is refused with corrupt_chunk, a missing pack
	//! with missing_object, a failed request with the remote request errors (remote_fetch.hpp).
	uint64_t Read(void *buffer, uint64_t size, uint64_t offset);

private:
	//! Where part of one chunk goes: bytes [skip, skip + take) of chunk `index` to `out`.
	struct Piece {
		uint64_t index;
		uint8_t *out;
		uint64_t skip;
		uint64_t take;
	};
	//! Copies a piece out of the chunk's stored bytes; past their end (inside the file) reads as zeros.
	static void CopyPiece(const Piece &piece, const std::string &bytes);
	//! The piece from the cache, copied straight to its place; false when the cache does not hold its chunk.
	bool ReadCached(const Piece &piece);
	using HashSet = std::unordered_set<Hash256, Hash256Hasher>;
	//! Fetches the pieces' chunks, one ranged GET per run of chunks that lie back to back in one pack. A
	//! chunk another thread is fetching already is waited for instead (single flight), then read from the
	//! caches, or fetched here if that fetch failed.
	void FetchMissing(std::vector<Piece> &missing);
	void FetchRuns(std::vector<Piece> &mine, HashSet &claimed);
	void FetchRun(const Hash256 &pack, uint64_t begin, uint64_t end, const std::vector<Piece> &pieces,
	              HashSet &claimed);
	//! The chunks before `begin` and after `end` in the pack, back to back with the run, neither cached nor in
	//! flight, within the TAKE_ALONG_BYTES window around `begin`; claims them and moves `begin` and `end` to
	//! cover them.
	std::vector<uint64_t> TakeAlong(const Hash256 &pack, uint64_t &begin, uint64_t &end, HashSet &claimed);
	//! Whether this thread may fetch a chunk: no cache holds it and no other fetch has claimed it. Under flight_lock.
	bool Unclaimed(const Hash256 &chunk, const HashSet &claimed);
	//! Ends this thread's claims and wakes the threads waiting for them.
	void Release(const HashSet &claimed);

	std::shared_ptr<ObjectStore> store;
	const std::string pack_prefix;
	const RemoteImage image;
	const std::shared_ptr<const ImageOverlay> overlay;
	const std::string locator;
	std::shared_ptr<ContentCache> cache;
	//! Each pack's chunk indexes in pack order, for taking chunks along.
	std::unordered_map<Hash256, std::vector<uint64_t>, Hash256Hasher> pack_chunks;
	//! Chunks some thread is fetching now.
	std::mutex flight_lock;
	std::condition_variable flight_done;
	HashSet in_flight;
};

//! Registers `file` under a new diff:// path; the registry keeps no ownership, so the path stops
//! resolving once the last owner (the attachment's catalog, the open handles) lets go.
std::string RegisterRemoteImage(const std::shared_ptr<RemoteImageFile> &file);
bool IsRemoteImagePath(const std::string &path);
//! True for the WAL companion of a remote image path (`diff://remote/<id>/database.duckdb.wal`).
bool IsRemoteWalPath(const std::string &path);
//! The image a path names, or null when it is gone. `is_database_file` is false for its companions
//! (`database.duckdb.wal`, ...), which a remote image has only for a shipped state's WAL. Throws invalid_path for a
//! malformed path.
std::shared_ptr<RemoteImageFile> FindRemoteImage(const std::string &path, bool &is_database_file);

} // namespace differential
