// File catalog: every publication is one grouped SQLite transaction, the durable commit point of
// a sync; loads read a root and pin it atomically with respect to cleanup.
#include "metadata/file_store.hpp"

#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/process_identity.hpp"
#include "metadata/lookups.hpp"
#include "metadata/sqlite.hpp"

#include <unistd.h>

namespace differential {

static ChunkLocation ReadLocation(SqliteStatement &stmt, int first_col) {
	ChunkLocation loc;
	loc.segment_id = static_cast<uint64_t>(stmt.Int(first_col));
	loc.offset = static_cast<uint64_t>(stmt.Int(first_col + 1));
	loc.length = static_cast<uint32_t>(stmt.Int(first_col + 2));
	loc.crc32c = static_cast<uint32_t>(stmt.Int(first_col + 3));
	return loc;
}

//! A publication's branch_files row. An update in place where the row exists (every sync but a file's first):
//! REPLACE would delete and reinsert it, writing its primary-key index page too, on every commit.
static constexpr const char *UPSERT_BRANCH_FILE =
    "INSERT INTO branch_files(branch_id, file_name, root_id, length) VALUES (?, ?, ?, ?) "
    "ON CONFLICT(branch_id, file_name) DO UPDATE SET root_id = excluded.root_id, length = excluded.length";

static int64_t RequireFileBranch(MetadataSession &session, const FileAddress &file) {
	return RequireBranchId(session, file.database, file.branch);
}

//! Writes a publication's branch_files row (a ranged file has no root) and returns the branch's id.
//! A handle that published before updates its row in place by the id it kept: one statement, no lookup. Finding no
//! row there (the file's first publication, or a removed file written again) it looks the branch up by name, and
//! refuses when the name now stands for another branch, which the writer's branch lock should have made impossible.
static int64_t PublishBranchFile(MetadataSession &session, const FileAddress &file, PublishedState &state,
                                 std::optional<int64_t> root_id, uint64_t length) {
	auto &db = session.db;
	if (state.branch_id >= 0) {
		auto update =
		    db.Prepare("UPDATE branch_files SET root_id = ?, length = ? WHERE branch_id = ? AND file_name = ?");
		update.Bind(1, root_id)
		    .Bind(2, static_cast<int64_t>(length))
		    .Bind(3, state.branch_id)
		    .Bind(4, file.file_name)
		    .Run();
		if (db.Changes() == 1) {
			return state.branch_id;
		}
	}
	auto branch_id = RequireFileBranch(session, file);
	if (state.branch_id >= 0 && branch_id != state.branch_id) {
		Fail(ErrorCode::BRANCH_NOT_FOUND, "Branch " + QuoteName(file.branch) + " of database " +
		                                      QuoteName(file.database) +
		                                      " was dropped and created again while this process had it open; "
		                                      "nothing was published. Detach it and attach it again.");
	}
	db.Prepare(UPSERT_BRANCH_FILE)
	    .Bind(1, branch_id)
	    .Bind(2, file.file_name)
	    .Bind(3, root_id)
	    .Bind(4, static_cast<int64_t>(length))
	    .Run();
	state.branch_id = branch_id;
	return branch_id;
}

static bool LoadSnapshotFile(MetadataSession &session, const FileAddress &file, StoredFile &out) {
	if (!file.IsMainFile()) {
		return false;
	}
	auto stmt = session.db.Prepare("SELECT s.root_id FROM snapshots s JOIN databases d USING (database_id) "
	                               "WHERE d.database_name = ? AND s.snapshot_id = ?");
	stmt.Bind(1, file.database).Bind(2, file.snapshot_id);
	if (!stmt.Step()) {
		return false;
	}
	out.root_id = stmt.Int(0);
	LoadRoot(session, out.root_id, out);
	return true;
}

static bool LoadBranchFile(MetadataSession &session, const FileAddress &file, StoredFile &out) {
	auto branch_id = FindBranchId(session, file.database, file.branch);
	if (!branch_id) {
		return false;
	}
	auto stmt = session.db.Prepare("SELECT root_id, length FROM branch_files WHERE branch_id = ? AND file_name = ?");
	stmt.Bind(1, *branch_id).Bind(2, file.file_name);
	if (!stmt.Step()) {
		return false;
	}
	if (!stmt.IsNull(0)) {
		out.root_id = stmt.Int(0);
		LoadRoot(session, out.root_id, out);
		return true;
	}
	// A ranged file is its extents in seq order, numbered from 0 without a gap; its length is their sum (schema 13).
	auto ext = session.db.Prepare("SELECT segment_id, payload_offset, length, crc32c, inline_data, seq FROM "
	                              "file_extents WHERE branch_id = ? AND file_name = ? ORDER BY seq");
	ext.Bind(1, *branch_id).Bind(2, file.file_name);
	out.length = 0;
	while (ext.Step()) {
		if (ext.Int(5) != static_cast<int64_t>(out.extents.size())) {
			Fail(ErrorCode::CORRUPT_METADATA, "The byte ranges of " + file.ToPath() + " skip from " +
			                                      std::to_string(out.extents.size()) + " to " +
			                                      std::to_string(ext.Int(5)) + ". Run differential_verify().");
		}
		out.extents.push_back(ExtentAt(ext, 0, file.ToPath()));
		out.length += out.extents.back().location.length;
	}
	return true;
}

static bool LoadAny(MetadataSession &session, const FileAddress &file, StoredFile &out) {
	return file.IsSnapshot() ? LoadSnapshotFile(session, file, out) : LoadBranchFile(session, file, out);
}

//! The WAL companions published with a branch's database file, read in the loader's transaction.
static void LoadCompanions(MetadataSession &session, const FileAddress &file, StoredFile &out) {
	auto names = session.db.Prepare(
	    "SELECT f.file_name FROM branch_files f JOIN branches b USING (branch_id) JOIN databases d USING "
	    "(database_id) WHERE d.database_name = ? AND b.branch_name = ? AND f.root_id IS NULL");
	names.Bind(1, file.database).Bind(2, file.branch);
	while (names.Step()) {
		FileAddress companion = file;
		companion.file_name = names.Text(0);
		StoredFile stored;
		LoadBranchFile(session, companion, stored);
		out.companions.push_back({companion.file_name, stored.length, stored.extents});
	}
}

//! What a pinned load reads: the file's root and, for a branch's database file, the WAL companions published with
//! it, all from one snapshot of the metadata (the caller's transaction).
static bool LoadForPin(MetadataSession &session, const FileAddress &file, StoredFile &out) {
	if (!LoadAny(session, file, out)) {
		return false;
	}
	if (out.root_id >= 0 && !file.IsSnapshot() && file.IsMainFile()) {
		LoadCompanions(session, file, out);
	}
	return true;
}

bool FileStore::LoadFile(const FileAddress &file, StoredFile &out, PinKind pin) {
	out = StoredFile();
	switch (pin) {
	case PinKind::NONE: {
		auto session = core.Read();
		return LoadAny(session, file, out);
	}
	case PinKind::WRITER:
		return LoadPinnedByWriter(file, out);
	case PinKind::READER:
		return LoadPinnedByReader(file, out);
	}
	return false;
}

bool FileStore::LoadPinnedByWriter(const FileAddress &file, StoredFile &out) {
	// Read the root and pin it in one metadata transaction, the one its publications move the pin in.
	auto txn = core.Write();
	if (!LoadForPin(txn, file, out)) {
		return false;
	}
	if (out.root_id < 0) {
		return true;
	}
	out.pin = {InsertPin(txn.db, out.root_id), PinKind::WRITER};
	txn.Commit();
	return true;
}

bool FileStore::LoadPinnedByReader(const FileAddress &file, StoredFile &out) {
	// Under the reader pins' lock, which cleanup holds from reading the pins to committing its sweep: the root
	// read here is either swept already (and not found) or pinned before cleanup looks. The metadata is only
	// read, in one snapshot, so no writer's transaction is waited for.
	auto locked = pins.Lock();
	bool found;
	{
		auto session = core.Read();
		SqliteReadTransaction snapshot(session.db);
		found = LoadForPin(session, file, out);
	}
	if (!found || out.root_id < 0) {
		return found;
	}
	out.pin = {pins.Insert(locked, out.root_id), PinKind::READER};
	locked.Commit();
	return true;
}

void FileStore::Unpin(const FilePin &pin) {
	if (pin.kind == PinKind::READER) {
		pins.Release(pin.id);
		return;
	}
	auto session = core.Read();
	session.db.Prepare("DELETE FROM pins WHERE pin_id = ?").Bind(1, pin.id).Run();
}

std::vector<uint8_t> FileStore::LoadIndexPage(const Hash256 &page) {
	auto session = core.Read();
	auto stmt = session.db.Prepare("SELECT slots FROM index_pages WHERE hash = ?");
	stmt.BindBlob(1, page.data(), page.size());
	if (!stmt.Step()) {
		Fail(ErrorCode::CORRUPT_METADATA,
		     "Index page " + HashToHex(page) + " is referenced but missing. Run differential_verify().");
	}
	return stmt.Blob(0);
}

void FileStore::LookupChunks(const std::vector<Hash256> &hashes, std::vector<ChunkLocation> &out) {
	auto session = core.Read();
	out.clear();
	out.reserve(hashes.size());
	auto stmt = session.db.Prepare("SELECT segment_id, payload_offset, length, crc32c FROM chunks WHERE hash = ?");
	for (auto &hash : hashes) {
		stmt.Reset();
		stmt.BindBlob(1, hash.data(), hash.size());
		if (!stmt.Step()) {
			Fail(ErrorCode::MISSING_CHUNK,
			     "Chunk " + HashToHex(hash) + " is referenced but not stored. Run differential_verify().");
		}
		out.push_back(ReadLocation(stmt, 0));
	}
}

static void InsertChunksAndPages(SqliteDatabase &db, const std::vector<NewIndexPage> &new_pages,
                                 const std::vector<NewChunk> &new_chunks) {
	auto chunk = db.Prepare(
	    "INSERT INTO chunks(hash, segment_id, payload_offset, length, crc32c) VALUES (?, ?, ?, ?, ?) "
	    // A chunk stored again after its eviction is local again (docs/FORMAT.md, evicted chunks).
	    "ON CONFLICT(hash) DO UPDATE SET segment_id = excluded.segment_id, payload_offset = excluded.payload_offset, "
	    "crc32c = excluded.crc32c "
	    "WHERE chunks.segment_id = 0 AND excluded.segment_id <> 0");
	for (auto &c : new_chunks) {
		chunk.Reset();
		chunk.BindBlob(1, c.hash.data(), c.hash.size())
		    .Bind(2, static_cast<int64_t>(c.location.segment_id))
		    .Bind(3, static_cast<int64_t>(c.location.offset))
		    .Bind(4, static_cast<int64_t>(c.location.length))
		    .Bind(5, static_cast<int64_t>(c.location.crc32c))
		    .Run();
	}
	auto page = db.Prepare("INSERT OR IGNORE INTO index_pages(hash, slots) VALUES (?, ?)");
	for (auto &p : new_pages) {
		page.Reset();
		page.BindBlob(1, p.hash.data(), p.hash.size()).BindBlob(2, p.slots.data(), p.slots.size()).Run();
	}
}

void FileStore::PublishChunked(const FileAddress &file, PublishedState &state, uint64_t length,
                               const std::vector<Hash256> &pages, const std::vector<NewIndexPage> &new_pages,
                               const std::vector<NewChunk> &new_chunks, const FilePin &publisher_pin) {
	core.RunGrouped([&](MetadataSession &session) {
		auto &db = session.db;
		InsertChunksAndPages(db, new_pages, new_chunks);
		auto blob = JoinHashes(pages.data(), pages.size());
		db.Prepare("INSERT INTO roots(file_length, pages) VALUES (?, ?)")
		    .Bind(1, static_cast<int64_t>(length))
		    .BindBlob(2, blob.data(), blob.size())
		    .Run();
		auto root_id = db.LastInsertRowId();
		PublishBranchFile(session, file, state, root_id, length);
		if (publisher_pin.kind == PinKind::WRITER) {
			db.Prepare("UPDATE pins SET root_id = ? WHERE pin_id = ?").Bind(1, root_id).Bind(2, publisher_pin.id).Run();
		}
	});
}

//! The branch of a ranged file's row, which holds no length (schema 13): a row already there is only looked at, so a
//! commit's transaction writes its extent and nothing else. A missing row is created, or its branch's loss reported.
static int64_t KeepRangedRow(MetadataSession &session, const FileAddress &file, PublishedState &state) {
	if (state.branch_id >= 0) {
		auto row = session.db.Prepare("SELECT 1 FROM branch_files WHERE branch_id = ? AND file_name = ?");
		if (row.Bind(1, state.branch_id).Bind(2, file.file_name).Step()) {
			return state.branch_id;
		}
	}
	return PublishBranchFile(session, file, state, std::nullopt, 0);
}

void FileStore::PublishRanged(const FileAddress &file, PublishedState &state, uint64_t kept_extents,
                              const std::vector<RangeExtent> &new_extents) {
	core.RunGrouped([&](MetadataSession &session) {
		auto &db = session.db;
		auto branch_id = KeepRangedRow(session, file, state);
		// Only a truncation leaves stored extents past the kept ones; an append, every commit's case, has none.
		if (state.stored_extents > kept_extents) {
			db.Prepare("DELETE FROM file_extents WHERE branch_id = ? AND file_name = ? AND seq >= ?")
			    .Bind(1, branch_id)
			    .Bind(2, file.file_name)
			    .Bind(3, static_cast<int64_t>(kept_extents))
			    .Run();
		}
		auto ext = db.Prepare("INSERT INTO file_extents(branch_id, file_name, seq, segment_id, payload_offset, length, "
		                      "crc32c, inline_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
		for (size_t i = 0; i < new_extents.size(); i++) {
			auto &extent = new_extents[i];
			auto &loc = extent.location;
			ext.Reset();
			ext.Bind(1, branch_id)
			    .Bind(2, file.file_name)
			    .Bind(3, static_cast<int64_t>(kept_extents + i))
			    .Bind(4, static_cast<int64_t>(loc.segment_id))
			    .Bind(5, static_cast<int64_t>(loc.offset))
			    .Bind(6, static_cast<int64_t>(loc.length))
			    .Bind(7, static_cast<int64_t>(loc.crc32c));
			if (extent.IsInline()) {
				ext.BindBlob(8, extent.inline_bytes->data(), extent.inline_bytes->size());
			} else {
				ext.BindNull(8);
			}
			ext.Run();
		}
	});
	// Set only once the transaction is in: a failed group leaves the catalog, and so the count, as they were.
	state.stored_extents = kept_extents + new_extents.size();
}

void FileStore::RemoveFile(const FileAddress &file) {
	auto txn = core.Write();
	auto branch_id = RequireFileBranch(txn, file);
	for (auto table : {"file_extents", "branch_files"}) {
		txn.db.Prepare(std::string("DELETE FROM ") + table + " WHERE branch_id = ? AND file_name = ?")
		    .Bind(1, branch_id)
		    .Bind(2, file.file_name)
		    .Run();
	}
	txn.Commit();
}

void FileStore::MoveFile(const FileAddress &from, const FileAddress &to) {
	auto txn = core.Write();
	auto branch_id = RequireFileBranch(txn, from);
	for (auto table : {"file_extents", "branch_files"}) {
		txn.db.Prepare(std::string("DELETE FROM ") + table + " WHERE branch_id = ? AND file_name = ?")
		    .Bind(1, branch_id)
		    .Bind(2, to.file_name)
		    .Run();
		txn.db.Prepare(std::string("UPDATE ") + table + " SET file_name = ? WHERE branch_id = ? AND file_name = ?")
		    .Bind(1, to.file_name)
		    .Bind(2, branch_id)
		    .Bind(3, from.file_name)
		    .Run();
	}
	txn.Commit();
}

uint64_t FileStore::AllocateSegment() {
	auto session = core.Read();
	session.db.Prepare("INSERT INTO segments(created_at_us, created_by_pid, created_by_start) VALUES (?, ?, ?)")
	    .Bind(1, NowMicros())
	    .Bind(2, static_cast<int64_t>(getpid()))
	    .Bind(3, static_cast<int64_t>(CurrentProcessStartTime()))
	    .Run();
	return static_cast<uint64_t>(session.db.LastInsertRowId());
}

} // namespace differential
