// What the metadata knows about S3 exports: each database's DATA_PATH, the chunks and objects each
// object store already holds, which snapshots were exported, and the heads this repository published.
#pragma once

#include "common/hash.hpp"
#include "metadata/metadata_core.hpp"
#include "storage/file_catalog.hpp"
#include "storage/remote_image.hpp"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace differential {

//! A database's export target: the canonical DATA_PATH URL and the first snapshot it exports.
struct DataPathRecord {
	std::string store_url;
	int64_t export_from_snapshot = 1;
};

//! The exported snapshot a branch's head in the store should point at.
struct BranchExport {
	std::string branch_name;
	int64_t snapshot_id = 0;
	Hash256 descriptor {};
};

//! A snapshot that is recorded locally but not exported yet, in the order exports must run.
struct PendingExport {
	int64_t snapshot_id = 0;
	std::string branch_name;
};

//! The head of a branch as this repository last published it to a store.
struct PublishedHead {
	int64_t snapshot_id = 0;
	Hash256 descriptor {};
	std::string etag;
	//! The WAL chain the head names (0: none) and its base descriptor (schema 6).
	uint64_t chain = 0;
	Hash256 chain_base {};
};

//! A chunk as one object store holds it (for reading an evicted chunk back).
struct StoredRemoteChunk {
	std::string store_url;
	PackedChunk packed;
};

//! What an eviction dropped locally.
struct EvictionCounts {
	uint64_t chunks = 0;
	uint64_t bytes = 0;
};

//! An export imported as a new local database (differential_recover_export): its chunk map in local index
//! pages, and where the store holds each chunk.
struct RecoveredExport {
	std::string database;
	std::string store_url;
	uint64_t length = 0;
	std::vector<Hash256> pages;
	std::vector<NewIndexPage> new_pages;
	std::vector<PackedChunk> chunks;
};

class SqliteDatabase;
//! Records an imported image's chunks (those not stored locally as evicted, with where the store holds
//! them) and its index pages, inside the caller's transaction.
void InsertRecoveredChunks(SqliteDatabase &db, const RecoveredExport &recovered);

class RemoteStore {
public:
	explicit RemoteStore(MetadataCore &core) : core(core) {
	}

	std::optional<DataPathRecord> DataPath(const std::string &database);
	//! Gives a database its DATA_PATH. Setting the one it has is a no-op; a database that has none
	//! adopts it (exports start with its next snapshot); a different one is refused with
	//! data_path_mismatch and nothing changes. Returns true when the data path was set now.
	bool SetDataPath(const std::string &database, const std::string &store_url);

	//! The snapshots of the database, oldest first, that are due for export and not exported yet
	//! (up to `up_to` when given). Expired snapshots are never due.
	std::vector<PendingExport> PendingExports(const std::string &database, std::optional<int64_t> up_to);
	//! The descriptor of an exported snapshot, if it was exported.
	std::optional<Hash256> ExportedDescriptor(const std::string &database, int64_t snapshot_id);
	//! Records that the snapshot's commit record is in the store: from now on it is recoverable from there.
	void RecordExport(const std::string &database, int64_t snapshot_id, const std::string &store_url,
	                  const Hash256 &descriptor);

	//! Snapshots of the database exported to `store_url` that were expired locally since: each is due an
	//! expiry record in the store (remote cleanup keeps what an unexpired commit record reaches), unless
	//! `remote_objects` says the store has it already.
	std::vector<int64_t> ExpiredExports(const std::string &database, const std::string &store_url);

	//! For each branch of the database whose head snapshot (`branches.head_snapshot_id`: its newest
	//! snapshot, or what a restore or fast-forward made it) was exported to `store_url`: that snapshot.
	std::vector<BranchExport> BranchHeadExports(const std::string &database, const std::string &store_url);

	//! Where the store already holds each of `chunks` (those it holds; the others are absent).
	std::unordered_map<Hash256, PackedChunk, Hash256Hasher> KnownChunks(const std::string &store_url,
	                                                                    const std::vector<Hash256> &chunks);
	//! Records the chunks of one uploaded pack, in one transaction.
	void RecordPack(const std::string &store_url, const std::vector<PackedChunk> &chunks);
	bool HasObject(const std::string &store_url, const std::string &key);
	//! Every store that holds the chunk, with where it lies there.
	std::vector<StoredRemoteChunk> ChunkCopies(const Hash256 &chunk);
	//! Chunks stored locally (not evicted) that `store_url` holds.
	std::vector<Hash256> LocalChunksIn(const std::string &store_url);
	//! The index-page lists of every branch file and snapshot of the databases whose DATA_PATH is not
	//! `store_url` (none or another): the chunks they reach must stay local.
	std::vector<std::vector<Hash256>> RootsOutside(const std::string &store_url);
	//! Marks the chunks evicted (segment 0, docs/FORMAT.md) in one transaction, where they are still local
	//! and `store_url` still holds them; cleanup then reclaims their segment space.
	EvictionCounts EvictChunks(const std::string &store_url, const std::vector<Hash256> &chunks);
	//! The index-page lists of every branch file and kept snapshot of `database`: what fetching its evicted
	//! chunks back must cover.
	std::vector<std::vector<Hash256>> RootsOf(const std::string &database);
	//! Of `chunks`, those recorded as evicted, with their stored length.
	std::vector<std::pair<Hash256, uint32_t>> EvictedAmong(const std::vector<Hash256> &chunks);
	//! Records chunks fetched back into local segments at their new locations, in one transaction, where they
	//! are still evicted (a concurrent fetch may have stored them first: its location stays).
	EvictionCounts RestoreChunks(const std::vector<std::pair<Hash256, ChunkLocation>> &chunks);
	//! Creates the database with a main branch whose file is the export's image, every chunk not stored
	//! locally recorded as evicted, and the store as its DATA_PATH (exports from snapshot 1), in one
	//! transaction; database_exists (nothing written) when the name is taken.
	void RecoverDatabase(const RecoveredExport &recovered);
	//! The key of the last deletion journal record of the store this repository has applied ("" for none).
	std::string DeletionsSeen(const std::string &store_url);
	//! Forgets objects remote cleanup deleted (packs: their chunks; other keys: the object) and records
	//! `last_record` as applied, in one transaction.
	void ForgetDeleted(const std::string &store_url, const std::vector<std::string> &keys,
	                   const std::string &last_record);
	void RecordObject(const std::string &store_url, const std::string &key);

	std::optional<PublishedHead> Head(const std::string &store_url, const std::string &database,
	                                  const std::string &branch);
	void RecordHead(const std::string &store_url, const std::string &database, const std::string &branch,
	                const PublishedHead &head);

private:
	MetadataCore &core;
};

//! The rows RecordExport and RecordHead write, inside a caller's transaction (an S3 merge records its
//! export and head with the snapshot they belong to).
void WriteSnapshotExport(MetadataSession &session, int64_t database_id, int64_t snapshot_id,
                         const std::string &store_url, const Hash256 &descriptor);
void WriteRemoteHead(MetadataSession &session, const std::string &store_url, const std::string &database,
                     const std::string &branch, const PublishedHead &head);

} // namespace differential
