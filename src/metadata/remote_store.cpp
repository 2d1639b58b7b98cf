// S3 export bookkeeping in the metadata. What a store holds is keyed by its canonical URL, not by the
// database, so every database of the repository that exports there (a clone and its source) shares it.
#include "metadata/remote_store.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

std::optional<DataPathRecord> RemoteStore::DataPath(const std::string &database) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare("SELECT data_path, coalesce(export_from_snapshot, 1) FROM databases WHERE "
	                               "database_id = ? AND data_path IS NOT NULL");
	stmt.Bind(1, database_id);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	return DataPathRecord {stmt.Text(0), stmt.Int(1)};
}

bool RemoteStore::SetDataPath(const std::string &database, const std::string &store_url) {
	auto txn = core.Write();
	auto database_id = RequireDatabaseId(txn, database);
	auto stmt = txn.db.Prepare("SELECT data_path, next_snapshot_id FROM databases WHERE database_id = ?");
	stmt.Bind(1, database_id);
	stmt.Step();
	auto current = stmt.OptionalText(0);
	auto next_snapshot = stmt.Int(1);
	if (current && *current == store_url) {
		return false;
	}
	if (current) {
		Fail(ErrorCode::DATA_PATH_MISMATCH,
		     "Database " + QuoteName(database) + " exports to " + *current + ", not " + store_url +
		         " (nothing was changed). A database has one DATA_PATH: attach it without DATA_PATH or with " +
		         *current + ", or clone it under a new name to publish a copy elsewhere.");
	}
	txn.db.Prepare("UPDATE databases SET data_path = ?, export_from_snapshot = ? WHERE database_id = ?")
	    .Bind(1, store_url)
	    .Bind(2, next_snapshot)
	    .Bind(3, database_id)
	    .Run();
	txn.Commit();
	return true;
}

std::vector<PendingExport> RemoteStore::PendingExports(const std::string &database, std::optional<int64_t> up_to) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare(
	    "SELECT s.snapshot_id, s.branch_name FROM snapshots s JOIN databases d USING (database_id) WHERE "
	    "s.database_id = ? AND d.data_path IS NOT NULL AND s.snapshot_id >= coalesce(d.export_from_snapshot, 1) AND "
	    "s.snapshot_id <= ? AND NOT EXISTS (SELECT 1 FROM snapshot_exports e WHERE e.database_id = s.database_id AND "
	    "e.snapshot_id = s.snapshot_id) AND NOT EXISTS (SELECT 1 FROM kept_snapshots k WHERE k.database_id = "
	    "s.database_id AND k.snapshot_id = s.snapshot_id) ORDER BY s.snapshot_id");
	stmt.Bind(1, database_id).Bind(2, up_to.value_or(INT64_MAX));
	std::vector<PendingExport> out;
	while (stmt.Step()) {
		out.push_back({stmt.Int(0), stmt.Text(1)});
	}
	return out;
}

std::vector<int64_t> RemoteStore::ExpiredExports(const std::string &database, const std::string &store_url) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare(
	    "SELECT e.snapshot_id FROM snapshot_exports e JOIN expired_snapshots x ON x.database_id = e.database_id AND "
	    "x.snapshot_id = e.snapshot_id WHERE e.database_id = ? AND e.store_url = ? ORDER BY e.snapshot_id");
	stmt.Bind(1, database_id).Bind(2, store_url);
	std::vector<int64_t> out;
	while (stmt.Step()) {
		out.push_back(stmt.Int(0));
	}
	return out;
}

std::optional<Hash256> RemoteStore::ExportedDescriptor(const std::string &database, int64_t snapshot_id) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare("SELECT descriptor FROM snapshot_exports WHERE database_id = ? AND snapshot_id = ?");
	stmt.Bind(1, database_id).Bind(2, snapshot_id);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	return HashFromBlob(stmt.Blob(0));
}

void RemoteStore::RecordExport(const std::string &database, int64_t snapshot_id, const std::string &store_url,
                               const Hash256 &descriptor) {
	auto txn = core.Write();
	WriteSnapshotExport(txn, RequireDatabaseId(txn, database), snapshot_id, store_url, descriptor);
	txn.Commit();
}

void WriteSnapshotExport(MetadataSession &session, int64_t database_id, int64_t snapshot_id,
                         const std::string &store_url, const Hash256 &descriptor) {
	session.db
	    .Prepare("INSERT OR REPLACE INTO snapshot_exports(database_id, snapshot_id, store_url, descriptor, "
	             "exported_at_us) VALUES (?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, snapshot_id)
	    .Bind(3, store_url)
	    .BindBlob(4, descriptor.data(), descriptor.size())
	    .Bind(5, NowMicros())
	    .Run();
}

std::vector<BranchExport> RemoteStore::BranchHeadExports(const std::string &database, const std::string &store_url) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare(
	    "SELECT b.branch_name, e.snapshot_id, e.descriptor FROM branches b JOIN snapshot_exports e ON "
	    "e.database_id = b.database_id AND e.snapshot_id = b.head_snapshot_id WHERE b.database_id = ? AND "
	    "e.store_url = ? ORDER BY b.branch_name");
	stmt.Bind(1, database_id).Bind(2, store_url);
	std::vector<BranchExport> out;
	while (stmt.Step()) {
		out.push_back({stmt.Text(0), stmt.Int(1), HashFromBlob(stmt.Blob(2))});
	}
	return out;
}

std::unordered_map<Hash256, PackedChunk, Hash256Hasher> RemoteStore::KnownChunks(const std::string &store_url,
                                                                                 const std::vector<Hash256> &chunks) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(
	    "SELECT pack_hash, pack_offset, length FROM remote_chunks WHERE store_url = ? AND chunk_hash = ?");
	std::unordered_map<Hash256, PackedChunk, Hash256Hasher> out;
	for (auto &chunk : chunks) {
		stmt.Reset();
		stmt.Bind(1, store_url).BindBlob(2, chunk.data(), chunk.size());
		if (stmt.Step()) {
			PackedChunk packed;
			packed.chunk = chunk;
			packed.pack = HashFromBlob(stmt.Blob(0));
			packed.offset = static_cast<uint64_t>(stmt.Int(1));
			packed.length = static_cast<uint32_t>(stmt.Int(2));
			out[chunk] = packed;
		}
	}
	return out;
}

std::vector<StoredRemoteChunk> RemoteStore::ChunkCopies(const Hash256 &chunk) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(
	    "SELECT store_url, pack_hash, pack_offset, length FROM remote_chunks WHERE chunk_hash = ? ORDER BY store_url");
	stmt.BindBlob(1, chunk.data(), chunk.size());
	std::vector<StoredRemoteChunk> out;
	while (stmt.Step()) {
		StoredRemoteChunk copy;
		copy.store_url = stmt.Text(0);
		copy.packed.chunk = chunk;
		copy.packed.pack = HashFromBlob(stmt.Blob(1));
		copy.packed.offset = static_cast<uint64_t>(stmt.Int(2));
		copy.packed.length = static_cast<uint32_t>(stmt.Int(3));
		out.push_back(std::move(copy));
	}
	return out;
}

std::vector<Hash256> RemoteStore::LocalChunksIn(const std::string &store_url) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT c.hash FROM chunks c JOIN remote_chunks r ON r.chunk_hash = c.hash "
	                               "WHERE r.store_url = ? AND c.segment_id <> 0");
	stmt.Bind(1, store_url);
	std::vector<Hash256> out;
	while (stmt.Step()) {
		out.push_back(HashFromBlob(stmt.Blob(0)));
	}
	return out;
}

//! Adds the chunks whose lengths an UPDATE ... RETURNING length gave. Stepped to the end, so no statement is in
//! progress at the commit.
static void CountChunks(SqliteStatement &stmt, EvictionCounts &counts) {
	while (stmt.Step()) {
		counts.chunks++;
		counts.bytes += static_cast<uint64_t>(stmt.Int(0));
	}
}

//! The page lists a query over `roots` returns in its first column.
static std::vector<std::vector<Hash256>> PageLists(SqliteStatement &stmt) {
	std::vector<std::vector<Hash256>> out;
	while (stmt.Step()) {
		out.push_back(SplitHashes(stmt.Blob(0)));
	}
	return out;
}

std::vector<std::vector<Hash256>> RemoteStore::RootsOutside(const std::string &store_url) {
	auto session = core.Read();
	auto stmt = session.db.Prepare(
	    "WITH outside AS (SELECT database_id FROM databases WHERE data_path IS NULL OR data_path <> ?1) "
	    "SELECT r.pages FROM branch_files f JOIN branches b USING (branch_id) JOIN roots r USING (root_id) "
	    "WHERE b.database_id IN outside "
	    "UNION ALL SELECT r.pages FROM snapshots s JOIN roots r USING (root_id) WHERE s.database_id IN outside");
	stmt.Bind(1, store_url);
	return PageLists(stmt);
}

std::vector<std::vector<Hash256>> RemoteStore::RootsOf(const std::string &database) {
	auto session = core.Read();
	auto database_id = RequireDatabaseId(session, database);
	auto stmt = session.db.Prepare(
	    "SELECT r.pages FROM branch_files f JOIN branches b USING (branch_id) JOIN roots r USING (root_id) "
	    "WHERE b.database_id = ?1 "
	    "UNION ALL SELECT r.pages FROM snapshots s JOIN roots r USING (root_id) WHERE s.database_id = ?1");
	stmt.Bind(1, database_id);
	return PageLists(stmt);
}

std::vector<std::pair<Hash256, uint32_t>> RemoteStore::EvictedAmong(const std::vector<Hash256> &chunks) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT length FROM chunks WHERE hash = ? AND segment_id = 0");
	std::vector<std::pair<Hash256, uint32_t>> out;
	for (auto &chunk : chunks) {
		stmt.Reset();
		stmt.BindBlob(1, chunk.data(), chunk.size());
		if (stmt.Step()) {
			out.emplace_back(chunk, static_cast<uint32_t>(stmt.Int(0)));
		}
	}
	return out;
}

EvictionCounts RemoteStore::RestoreChunks(const std::vector<std::pair<Hash256, ChunkLocation>> &chunks) {
	auto txn = core.Write();
	auto stmt = txn.db.Prepare("UPDATE chunks SET segment_id = ?, payload_offset = ?, crc32c = ? WHERE hash = ? "
	                           "AND segment_id = 0 RETURNING length");
	EvictionCounts counts;
	for (auto &chunk : chunks) {
		stmt.Reset();
		stmt.Bind(1, static_cast<int64_t>(chunk.second.segment_id))
		    .Bind(2, static_cast<int64_t>(chunk.second.offset))
		    .Bind(3, static_cast<int64_t>(chunk.second.crc32c))
		    .BindBlob(4, chunk.first.data(), chunk.first.size());
		CountChunks(stmt, counts);
	}
	stmt.Reset();
	txn.Commit();
	return counts;
}

EvictionCounts RemoteStore::EvictChunks(const std::string &store_url, const std::vector<Hash256> &chunks) {
	auto txn = core.Write();
	auto stmt = txn.db.Prepare("UPDATE chunks SET segment_id = 0, payload_offset = 0 WHERE hash = ?1 AND "
	                           "segment_id <> 0 AND EXISTS (SELECT 1 FROM remote_chunks r WHERE r.store_url = ?2 "
	                           "AND r.chunk_hash = ?1) RETURNING length");
	EvictionCounts counts;
	for (auto &chunk : chunks) {
		stmt.Reset();
		stmt.BindBlob(1, chunk.data(), chunk.size()).Bind(2, store_url);
		CountChunks(stmt, counts);
	}
	stmt.Reset();
	txn.Commit();
	return counts;
}

void RemoteStore::RecordPack(const std::string &store_url, const std::vector<PackedChunk> &chunks) {
	auto txn = core.Write();
	auto stmt = txn.db.Prepare("INSERT OR REPLACE INTO remote_chunks(store_url, chunk_hash, pack_hash, pack_offset, "
	                           "length) VALUES (?, ?, ?, ?, ?)");
	for (auto &chunk : chunks) {
		stmt.Reset();
		stmt.Bind(1, store_url)
		    .BindBlob(2, chunk.chunk.data(), chunk.chunk.size())
		    .BindBlob(3, chunk.pack.data(), chunk.pack.size())
		    .Bind(4, static_cast<int64_t>(chunk.offset))
		    .Bind(5, static_cast<int64_t>(chunk.length))
		    .Run();
	}
	txn.Commit();
}

bool RemoteStore::HasObject(const std::string &store_url, const std::string &key) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT 1 FROM remote_objects WHERE store_url = ? AND object_key = ?");
	stmt.Bind(1, store_url).Bind(2, key);
	return stmt.Step();
}

std::string RemoteStore::DeletionsSeen(const std::string &store_url) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT deletions_seen FROM remote_stores WHERE store_url = ?");
	stmt.Bind(1, store_url);
	return stmt.Step() ? stmt.Text(0) : std::string();
}

void RemoteStore::ForgetDeleted(const std::string &store_url, const std::vector<std::string> &keys,
                                const std::string &last_record) {
	static const std::string PACKS = "packs/";
	auto txn = core.Write();
	auto chunks = txn.db.Prepare("DELETE FROM remote_chunks WHERE store_url = ? AND pack_hash = ?");
	auto objects = txn.db.Prepare("DELETE FROM remote_objects WHERE store_url = ? AND object_key = ?");
	for (auto &key : keys) {
		Hash256 pack;
		if (key.rfind(PACKS, 0) == 0 && HashFromHex(key.substr(PACKS.size()), pack)) {
			chunks.Reset();
			chunks.Bind(1, store_url).BindBlob(2, pack.data(), pack.size()).Run();
		} else {
			objects.Reset();
			objects.Bind(1, store_url).Bind(2, key).Run();
		}
	}
	txn.db.Prepare("INSERT OR REPLACE INTO remote_stores(store_url, deletions_seen) VALUES (?, ?)")
	    .Bind(1, store_url)
	    .Bind(2, last_record)
	    .Run();
	txn.Commit();
}

void RemoteStore::RecordObject(const std::string &store_url, const std::string &key) {
	auto txn = core.Write();
	txn.db.Prepare("INSERT OR IGNORE INTO remote_objects(store_url, object_key) VALUES (?, ?)")
	    .Bind(1, store_url)
	    .Bind(2, key)
	    .Run();
	txn.Commit();
}

std::optional<PublishedHead> RemoteStore::Head(const std::string &store_url, const std::string &database,
                                               const std::string &branch) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT snapshot_id, descriptor, etag, chain, chain_base FROM remote_heads WHERE "
	                               "store_url = ? AND database_name = ? AND branch_name = ?");
	stmt.Bind(1, store_url).Bind(2, database).Bind(3, branch);
	if (!stmt.Step()) {
		return std::nullopt;
	}
	PublishedHead head {stmt.Int(0), HashFromBlob(stmt.Blob(1)), stmt.Text(2)};
	if (!stmt.IsNull(3)) {
		head.chain = uint64_t(stmt.Int(3));
		head.chain_base = HashFromBlob(stmt.Blob(4));
	}
	return head;
}

void RemoteStore::RecordHead(const std::string &store_url, const std::string &database, const std::string &branch,
                             const PublishedHead &head) {
	auto txn = core.Write();
	WriteRemoteHead(txn, store_url, database, branch, head);
	txn.Commit();
}

void WriteRemoteHead(MetadataSession &session, const std::string &store_url, const std::string &database,
                     const std::string &branch, const PublishedHead &head) {
	session.db
	    .Prepare("INSERT OR REPLACE INTO remote_heads(store_url, database_name, branch_name, snapshot_id, descriptor, "
	             "etag, published_at_us, chain, chain_base) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
	    .Bind(1, store_url)
	    .Bind(2, database)
	    .Bind(3, branch)
	    .Bind(4, head.snapshot_id)
	    .BindBlob(5, head.descriptor.data(), head.descriptor.size())
	    .Bind(6, head.etag)
	    .Bind(7, NowMicros())
	    .Bind(8, head.chain ? std::optional<int64_t>(int64_t(head.chain)) : std::nullopt)
	    .BindBlob(9, head.chain_base.data(), head.chain_base.size())
	    .Run();
}

} // namespace differential

namespace differential {

void InsertRecoveredChunks(SqliteDatabase &db, const RecoveredExport &recovered) {
	// Chunks this repository stores already stay local; the others start out evicted (FORMAT.md §5.5).
	// Their CRC32C is unknown without the bytes, and unused: evicted reads check the SHA-256.
	auto chunk = db.Prepare(
	    "INSERT OR IGNORE INTO chunks(hash, segment_id, payload_offset, length, crc32c) VALUES (?, 0, 0, ?, 0)");
	auto remote = db.Prepare("INSERT OR IGNORE INTO remote_chunks(store_url, chunk_hash, pack_hash, pack_offset, "
	                         "length) VALUES (?, ?, ?, ?, ?)");
	for (auto &c : recovered.chunks) {
		chunk.Reset();
		chunk.BindBlob(1, c.chunk.data(), c.chunk.size()).Bind(2, static_cast<int64_t>(c.length)).Run();
		remote.Reset();
		remote.Bind(1, recovered.store_url)
		    .BindBlob(2, c.chunk.data(), c.chunk.size())
		    .BindBlob(3, c.pack.data(), c.pack.size())
		    .Bind(4, static_cast<int64_t>(c.offset))
		    .Bind(5, static_cast<int64_t>(c.length))
		    .Run();
	}
	auto page = db.Prepare("INSERT OR IGNORE INTO index_pages(hash, slots) VALUES (?, ?)");
	for (auto &p : recovered.new_pages) {
		page.Reset();
		page.BindBlob(1, p.hash.data(), p.hash.size()).BindBlob(2, p.slots.data(), p.slots.size()).Run();
	}
}

void RemoteStore::RecoverDatabase(const RecoveredExport &recovered) {
	auto txn = core.Write();
	auto &db = txn.db;
	auto exists = db.Prepare("SELECT 1 FROM databases WHERE database_name = ?");
	exists.Bind(1, recovered.database);
	if (exists.Step()) {
		Fail(ErrorCode::DATABASE_EXISTS,
		     "Database " + QuoteName(recovered.database) +
		         " already exists. Recover into a new name, or drop it first with differential_drop_database('" +
		         recovered.database + "').");
	}
	auto now = NowMicros();
	db.Prepare("INSERT INTO databases(database_name, database_uuid, created_at_us, data_path, export_from_snapshot) "
	           "VALUES (?, ?, ?, ?, 1)")
	    .Bind(1, recovered.database)
	    .Bind(2, NewUuid())
	    .Bind(3, now)
	    .Bind(4, recovered.store_url)
	    .Run();
	auto database_id = db.LastInsertRowId();
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us) VALUES (?, 'main', ?)")
	    .Bind(1, database_id)
	    .Bind(2, now)
	    .Run();
	auto branch_id = db.LastInsertRowId();
	InsertRecoveredChunks(db, recovered);
	auto blob = JoinHashes(recovered.pages.data(), recovered.pages.size());
	db.Prepare("INSERT INTO roots(file_length, pages) VALUES (?, ?)")
	    .Bind(1, static_cast<int64_t>(recovered.length))
	    .BindBlob(2, blob.data(), blob.size())
	    .Run();
	SetBranchRoot(txn, branch_id, db.LastInsertRowId(), recovered.length);
	txn.Commit();
}

} // namespace differential
