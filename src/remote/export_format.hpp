// The objects an S3 export is made of (store format 2) and their keys under a DATA_PATH prefix:
// packs, export index pages, descriptors, branch heads, commit and expiry records. docs/FORMAT.md §S3.
#pragma once

#include "common/hash.hpp"
#include "remote/text_object.hpp"
#include "storage/remote_image.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace differential {

//! The store format whose databases export to S3 (format 1 is local only).
static constexpr uint32_t EXPORT_FORMAT_VERSION = TEXT_OBJECT_FORMAT;
//! A pack holds up to 32 chunks and up to 8 MiB (32 full chunks of 256 KiB).
static constexpr uint32_t MAX_CHUNKS_PER_PACK = 32;
static constexpr uint64_t MAX_PACK_BYTES = 8ULL << 20;
//! Export index pages hold as many chunks as local index pages (4096).
static constexpr uint32_t EXPORT_INDEX_SLOTS = 4096;

// Object keys, relative to the DATA_PATH prefix. Content-addressed objects are named by the SHA-256 of
// their bytes; heads are the only objects ever replaced. No key is a prefix-directory of another
// (`heads/<db>/<branch>` never has children), as stores that map keys to files require.
std::string PackKey(const Hash256 &pack);
std::string ExportIndexKey(const Hash256 &page);
std::string DescriptorKey(const Hash256 &descriptor);
std::string HeadKey(const std::string &database, const std::string &branch);
std::string CommitRecordKey(const std::string &database, int64_t snapshot_id);
std::string ExpiryRecordKey(const std::string &database, int64_t snapshot_id);
//! The listing prefixes of each kind (`packs/`, ...), for cleanup.
extern const char *const PACKS_PREFIX;
extern const char *const INDEXES_PREFIX;
extern const char *const DESCRIPTORS_PREFIX;
extern const char *const HEADS_PREFIX;
extern const char *const COMMITS_PREFIX;
extern const char *const EXPIRIES_PREFIX;

//! An export index page: up to 4096 PackedChunk entries (holes included), binary, little endian:
//! magic "DIFXIDX2", u32 slot count, u32 reserved 0, then per slot chunk[32] pack[32] offset u64 length u32.
std::vector<uint8_t> EncodeExportIndexPage(const std::vector<PackedChunk> &slots);
//! False with `why` for anything but a well-formed page.
bool DecodeExportIndexPage(const std::string &blob, std::vector<PackedChunk> &out, std::string &why);

//! What one exported snapshot is: the locator users hand around (`descriptors/<sha256>`).
struct ExportDescriptor {
	std::string database;
	int64_t snapshot_id = 0;
	std::optional<std::string> snapshot_name;
	int64_t created_unix_ms = 0;
	//! The database file's length and its export index pages, in chunk order.
	uint64_t length = 0;
	std::vector<Hash256> index_pages;
};
std::string EncodeDescriptor(const ExportDescriptor &descriptor);
bool DecodeDescriptor(const std::string &text, ExportDescriptor &out, std::string &why);

//! The mutable pointer of a branch to its newest export; moved only by conditional PUT.
struct BranchHead {
	std::string database;
	std::string branch;
	int64_t snapshot_id = 0;
	Hash256 descriptor {};
	//! The descriptor the head pointed at before (zero for a new head): a reader can walk the branch back.
	Hash256 previous {};
	//! WAL shipping (docs/FORMAT.md §10.6): the chain a reader starts at and its base descriptor; 0 and
	//! zero when the database does not ship. A hint: the truth is the chain of chains (seals).
	uint64_t chain = 0;
	Hash256 chain_base {};
};
std::string EncodeHead(const BranchHead &head);
bool DecodeHead(const std::string &text, BranchHead &out, std::string &why);

//! Create-only record that a snapshot was exported (commits/) or expired (expiries/): what remote
//! cleanup reads to know which descriptors unexpired snapshots still need.
struct RemoteSnapshotRecord {
	std::string database;
	int64_t snapshot_id = 0;
	Hash256 descriptor {}; //! zero in expiry records
	//! Commit records of shared writers: the snapshot this one was taken on top of (0: none, or not
	//! recorded), so the published history can be walked back from a head through commit records.
	int64_t parent = 0;
};
std::string EncodeSnapshotRecord(const RemoteSnapshotRecord &record, bool expiry);
bool DecodeSnapshotRecord(const std::string &text, bool expiry, RemoteSnapshotRecord &out, std::string &why);

//! What a remote ATTACH names: a branch head (`.../heads/<db>/<branch>`) or a descriptor
//! (`.../descriptors/<sha256>`), and the store URL in front of it (the DATA_PATH it was exported to).
struct RemoteLocator {
	enum class Kind { HEAD, DESCRIPTOR };
	Kind kind = Kind::HEAD;
	std::string store_url; //! e.g. `s3://bucket/prefix/`, ending in '/'
	std::string database;  //! HEAD only
	std::string branch;    //! HEAD only
	Hash256 descriptor {}; //! DESCRIPTOR only
	std::string Key() const;
};
//! False with `why` when `url` does not end in `heads/<db>/<branch>` or `descriptors/<64 hex>`.
bool ParseRemoteLocator(const std::string &url, RemoteLocator &out, std::string &why);

} // namespace differential
