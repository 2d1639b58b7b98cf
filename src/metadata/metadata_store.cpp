// Metadata store: every publication is one SQLite transaction, the durable commit point of a sync.
#include "metadata/metadata_store.hpp"

#include "common/crash_points.hpp"
#include "common/errors.hpp"
#include "common/names.hpp"
#include "common/process_identity.hpp"

#include <chrono>
#include <cstring>
#include <random>
#include <unistd.h>

namespace differential {

int64_t NowMicros() {
	return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
	    .count();
}

std::string NewUuid() {
	std::random_device rd;
	std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(NowMicros()));
	uint64_t a = gen(), b = gen();
	a = (a & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
	b = (b & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
	char out[40];
	snprintf(out, sizeof(out), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
	         static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
	         static_cast<unsigned>(b >> 48), static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFULL));
	return out;
}

// Each entry moves the schema one version up; never edit a released step, add one.
static const char *MIGRATIONS[] = {
    // 1: the first released schema.
    R"(
CREATE TABLE databases(
    database_id INTEGER PRIMARY KEY,
    database_name TEXT NOT NULL UNIQUE,
    database_uuid TEXT NOT NULL,
    created_at_us INTEGER NOT NULL,
    next_snapshot_id INTEGER NOT NULL DEFAULT 1);
CREATE TABLE branches(
    branch_id INTEGER PRIMARY KEY,
    database_id INTEGER NOT NULL REFERENCES databases(database_id),
    branch_name TEXT NOT NULL,
    created_at_us INTEGER NOT NULL,
    base_snapshot_id INTEGER,
    head_snapshot_id INTEGER,
    UNIQUE(database_id, branch_name));
CREATE TABLE segments(
    segment_id INTEGER PRIMARY KEY,
    created_at_us INTEGER NOT NULL,
    created_by_pid INTEGER NOT NULL);
CREATE TABLE chunks(
    hash BLOB PRIMARY KEY,
    segment_id INTEGER NOT NULL,
    payload_offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    crc32c INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE index_pages(
    hash BLOB PRIMARY KEY,
    slots BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE roots(
    root_id INTEGER PRIMARY KEY,
    file_length INTEGER NOT NULL,
    pages BLOB NOT NULL);
CREATE TABLE branch_files(
    branch_id INTEGER NOT NULL REFERENCES branches(branch_id),
    file_name TEXT NOT NULL,
    root_id INTEGER REFERENCES roots(root_id),
    length INTEGER NOT NULL,
    PRIMARY KEY(branch_id, file_name));
CREATE TABLE file_extents(
    branch_id INTEGER NOT NULL,
    file_name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    segment_id INTEGER NOT NULL,
    payload_offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    crc32c INTEGER NOT NULL,
    PRIMARY KEY(branch_id, file_name, seq));
CREATE TABLE snapshots(
    database_id INTEGER NOT NULL REFERENCES databases(database_id),
    snapshot_id INTEGER NOT NULL,
    snapshot_name TEXT,
    author TEXT,
    commit_message TEXT,
    created_at_us INTEGER NOT NULL,
    branch_name TEXT NOT NULL,
    root_id INTEGER NOT NULL REFERENCES roots(root_id),
    PRIMARY KEY(database_id, snapshot_id),
    UNIQUE(database_id, snapshot_name));
CREATE TABLE snapshot_parents(
    database_id INTEGER NOT NULL,
    snapshot_id INTEGER NOT NULL,
    ordinal INTEGER NOT NULL,
    parent_snapshot_id INTEGER NOT NULL,
    PRIMARY KEY(database_id, snapshot_id, ordinal));
)",
    // 2: history lifecycle: reader pins, expiry records, clone lineage, segment owners' start times.
    R"(
CREATE TABLE pins(
    pin_id INTEGER PRIMARY KEY,
    root_id INTEGER NOT NULL,
    pid INTEGER NOT NULL,
    process_start INTEGER NOT NULL,
    created_at_us INTEGER NOT NULL);
CREATE TABLE expired_snapshots(
    database_id INTEGER NOT NULL,
    snapshot_id INTEGER NOT NULL,
    snapshot_name TEXT,
    expired_at_us INTEGER NOT NULL,
    PRIMARY KEY(database_id, snapshot_id));
ALTER TABLE databases ADD COLUMN cloned_from TEXT;
ALTER TABLE segments ADD COLUMN created_by_start INTEGER NOT NULL DEFAULT 0;
-- A removed segment keeps its row (a tombstone): segment ids must never be reused, since a
-- process may still hold a descriptor of the removed file under that id.
ALTER TABLE segments ADD COLUMN removed_at_us INTEGER;
CREATE TABLE merge_requests(
    database_id INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    arguments TEXT NOT NULL,
    state TEXT NOT NULL,
    merge_action TEXT,
    branch_name TEXT,
    snapshot_id INTEGER,
    base_snapshot_id INTEGER,
    ours_snapshot_id INTEGER,
    theirs_snapshot_id INTEGER,
    proposer TEXT,
    approver TEXT,
    attempts INTEGER NOT NULL DEFAULT 1,
    last_error_code TEXT,
    last_error TEXT,
    created_at_us INTEGER NOT NULL,
    completed_at_us INTEGER,
    PRIMARY KEY(database_id, request_id));
CREATE INDEX chunks_by_segment ON chunks(segment_id);
CREATE INDEX extents_by_segment ON file_extents(segment_id);
)",
    // 3: merge requests become operations: an id to abort by, the session settings a retry reuses, and
    // the resolution decisions frozen by the first attempt that compared.
    R"(
ALTER TABLE merge_requests ADD COLUMN operation_id TEXT;
ALTER TABLE merge_requests ADD COLUMN time_zone TEXT;
ALTER TABLE merge_requests ADD COLUMN calendar TEXT;
ALTER TABLE merge_requests ADD COLUMN aborted_by TEXT;
UPDATE merge_requests SET operation_id = lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-' ||
    hex(randomblob(2)) || '-' || hex(randomblob(2)) || '-' || hex(randomblob(6))) WHERE operation_id IS NULL;
CREATE UNIQUE INDEX merge_requests_by_operation ON merge_requests(operation_id);
ALTER TABLE snapshots ADD COLUMN commit_extra_info TEXT;
CREATE TABLE merge_resolutions(
    database_id INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    table_name TEXT NOT NULL,
    decisions BLOB NOT NULL,
    PRIMARY KEY(database_id, request_id, table_name));
)",
};

static_assert(sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]) == METADATA_SCHEMA_VERSION,
              "each schema version is one migration step");

MetadataStore::MetadataStore(const std::string &root_p) : root(root_p), db(root_p + "/metadata.sqlite") {
	db.Execute("PRAGMA journal_mode=WAL");
	db.Execute("PRAGMA synchronous=FULL");
	Migrate();
}

void MetadataStore::Migrate() {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	db.Execute("CREATE TABLE IF NOT EXISTS repository_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
	int64_t version = 0;
	{
		auto stmt = db.Prepare("SELECT value FROM repository_meta WHERE key = 'schema_version'");
		if (stmt.Step()) {
			version = std::stoll(stmt.Text(0));
		}
	}
	{
		auto stmt = db.Prepare("SELECT value FROM repository_meta WHERE key = 'store_format'");
		if (stmt.Step() && std::stoll(stmt.Text(0)) != STORE_FORMAT_VERSION) {
			Fail(ErrorKind::INVALID_INPUT, "unsupported_format",
			     "The repository " + root + " uses store format " + stmt.Text(0) + ", this build reads format " +
			         std::to_string(STORE_FORMAT_VERSION) + ". Use a matching build of the extension.");
		}
	}
	const int64_t known = sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]);
	if (version > known) {
		Fail(ErrorKind::INVALID_INPUT, "unsupported_format",
		     "The repository " + root + " has metadata schema " + std::to_string(version) +
		         ", newer than this build understands (" + std::to_string(known) +
		         "). Upgrade the extension to open it.");
	}
	for (int64_t v = version; v < known; v++) {
		db.Execute(MIGRATIONS[v]);
	}
	if (version < known) {
		db.Prepare("INSERT OR REPLACE INTO repository_meta VALUES ('schema_version', ?)")
		    .Bind(1, std::to_string(known))
		    .Run();
		db.Prepare("INSERT OR IGNORE INTO repository_meta VALUES ('store_format', ?)")
		    .Bind(1, std::to_string(STORE_FORMAT_VERSION))
		    .Run();
		db.Prepare("INSERT OR IGNORE INTO repository_meta VALUES ('repository_uuid', ?)").Bind(1, NewUuid()).Run();
	}
	txn.Commit();
}

std::optional<int64_t> MetadataStore::BranchId(const std::string &database, const std::string &branch) {
	auto stmt = db.Prepare("SELECT b.branch_id FROM branches b JOIN databases d USING (database_id) "
	                       "WHERE d.database_name = ? AND b.branch_name = ?");
	stmt.Bind(1, database).Bind(2, branch);
	if (stmt.Step()) {
		return stmt.Int(0);
	}
	return std::nullopt;
}

int64_t MetadataStore::RequireBranchId(const FileAddress &file) {
	auto id = BranchId(file.database, file.branch);
	if (!id) {
		Fail(ErrorKind::NOT_FOUND, "branch_not_found",
		     "Branch " + QuoteName(file.branch) + " of database " + QuoteName(file.database) +
		         " does not exist (it may have been dropped). List branches with differential_branches('" +
		         file.database + "').");
	}
	return *id;
}

int64_t MetadataStore::RequireDatabaseId(const std::string &database) {
	auto stmt = db.Prepare("SELECT database_id FROM databases WHERE database_name = ?");
	stmt.Bind(1, database);
	if (!stmt.Step()) {
		Fail(ErrorKind::NOT_FOUND, "database_not_found",
		     "Database " + QuoteName(database) +
		         " does not exist in this repository. List databases with differential_databases(), or create it "
		         "with ATTACH 'differential:" +
		         database + "'.");
	}
	return stmt.Int(0);
}

int64_t MetadataStore::RequireBranchId(const std::string &database, const std::string &branch) {
	FileAddress main;
	main.database = database;
	main.branch = branch;
	main.file_name = MAIN_FILE_NAME;
	return RequireBranchId(main);
}

int64_t MetadataStore::RequireSnapshotRoot(int64_t database_id, const std::string &database, int64_t snapshot_id,
                                           StoredFile &root) {
	auto snap = db.Prepare("SELECT root_id FROM snapshots WHERE database_id = ? AND snapshot_id = ?");
	snap.Bind(1, database_id).Bind(2, snapshot_id);
	if (!snap.Step()) {
		Fail(ErrorKind::NOT_FOUND, "snapshot_not_found",
		     "Database " + QuoteName(database) + " has no snapshot " + std::to_string(snapshot_id) +
		         ". List its snapshots with differential_snapshots('" + database + "').");
	}
	auto root_id = snap.Int(0);
	LoadRoot(root_id, root);
	return root_id;
}

void MetadataStore::SetBranchRoot(int64_t branch_id, int64_t root_id, uint64_t length) {
	// The branch's whole state becomes the root: no WAL companion of an older state may remain.
	db.Prepare("DELETE FROM file_extents WHERE branch_id = ?").Bind(1, branch_id).Run();
	db.Prepare("DELETE FROM branch_files WHERE branch_id = ?").Bind(1, branch_id).Run();
	db.Prepare("INSERT INTO branch_files VALUES (?, ?, ?, ?)")
	    .Bind(1, branch_id)
	    .Bind(2, MAIN_FILE_NAME)
	    .Bind(3, root_id)
	    .Bind(4, static_cast<int64_t>(length))
	    .Run();
}

static std::vector<Hash256> SplitHashes(const std::vector<uint8_t> &blob) {
	std::vector<Hash256> out(blob.size() / 32);
	for (size_t i = 0; i < out.size(); i++) {
		std::memcpy(out[i].data(), blob.data() + i * 32, 32);
	}
	return out;
}

bool MetadataStore::LoadRoot(int64_t root_id, StoredFile &out) {
	auto stmt = db.Prepare("SELECT file_length, pages FROM roots WHERE root_id = ?");
	stmt.Bind(1, root_id);
	if (!stmt.Step()) {
		Fail(ErrorKind::IO, "corrupt_metadata",
		     "Root " + std::to_string(root_id) + " is referenced but missing. Run differential_verify().");
	}
	out.length = static_cast<uint64_t>(stmt.Int(0));
	out.pages = SplitHashes(stmt.Blob(1));
	return true;
}

bool MetadataStore::LoadFile(const FileAddress &file, StoredFile &out, bool pin) {
	std::lock_guard<std::mutex> guard(lock);
	out = StoredFile();
	if (!pin) {
		return LoadFileLocked(file, out);
	}
	// Read the root and pin it in one transaction, so cleanup never sees it unpinned and unreferenced.
	SqliteTransaction txn(db);
	if (!LoadFileLocked(file, out)) {
		return false;
	}
	if (out.root_id < 0) {
		return true;
	}
	if (!file.IsSnapshot() && file.IsMainFile()) {
		auto names = db.Prepare("SELECT f.file_name FROM branch_files f JOIN branches b USING (branch_id) JOIN "
		                        "databases d USING (database_id) WHERE d.database_name = ? AND b.branch_name = ? AND "
		                        "f.root_id IS NULL");
		names.Bind(1, file.database).Bind(2, file.branch);
		while (names.Step()) {
			FileAddress companion = file;
			companion.file_name = names.Text(0);
			StoredFile stored;
			LoadFileLocked(companion, stored);
			out.companions.push_back({companion.file_name, stored.length, stored.extents});
		}
	}
	db.Prepare("INSERT INTO pins(root_id, pid, process_start, created_at_us) VALUES (?, ?, ?, ?)")
	    .Bind(1, out.root_id)
	    .Bind(2, static_cast<int64_t>(getpid()))
	    .Bind(3, static_cast<int64_t>(CurrentProcessStartTime()))
	    .Bind(4, NowMicros())
	    .Run();
	out.pin_id = db.LastInsertRowId();
	txn.Commit();
	return true;
}

void MetadataStore::Unpin(int64_t pin_id) {
	std::lock_guard<std::mutex> guard(lock);
	db.Prepare("DELETE FROM pins WHERE pin_id = ?").Bind(1, pin_id).Run();
}

bool MetadataStore::LoadFileLocked(const FileAddress &file, StoredFile &out) {
	if (file.IsSnapshot()) {
		if (!file.IsMainFile()) {
			return false;
		}
		auto stmt = db.Prepare("SELECT s.root_id FROM snapshots s JOIN databases d USING (database_id) "
		                       "WHERE d.database_name = ? AND s.snapshot_id = ?");
		stmt.Bind(1, file.database).Bind(2, file.snapshot_id);
		if (!stmt.Step()) {
			return false;
		}
		out.root_id = stmt.Int(0);
		return LoadRoot(out.root_id, out);
	}
	auto branch_id = BranchId(file.database, file.branch);
	if (!branch_id) {
		return false;
	}
	auto stmt = db.Prepare("SELECT root_id, length FROM branch_files WHERE branch_id = ? AND file_name = ?");
	stmt.Bind(1, *branch_id).Bind(2, file.file_name);
	if (!stmt.Step()) {
		return false;
	}
	if (!stmt.IsNull(0)) {
		out.root_id = stmt.Int(0);
		return LoadRoot(out.root_id, out);
	}
	out.length = static_cast<uint64_t>(stmt.Int(1));
	auto ext = db.Prepare("SELECT segment_id, payload_offset, length, crc32c FROM file_extents "
	                      "WHERE branch_id = ? AND file_name = ? ORDER BY seq");
	ext.Bind(1, *branch_id).Bind(2, file.file_name);
	while (ext.Step()) {
		ChunkLocation loc;
		loc.segment_id = static_cast<uint64_t>(ext.Int(0));
		loc.offset = static_cast<uint64_t>(ext.Int(1));
		loc.length = static_cast<uint32_t>(ext.Int(2));
		loc.crc32c = static_cast<uint32_t>(ext.Int(3));
		out.extents.push_back(loc);
	}
	return true;
}

std::vector<uint8_t> MetadataStore::LoadIndexPage(const Hash256 &page) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT slots FROM index_pages WHERE hash = ?");
	stmt.BindBlob(1, page.data(), page.size());
	if (!stmt.Step()) {
		Fail(ErrorKind::IO, "corrupt_metadata",
		     "Index page " + HashToHex(page) + " is referenced but missing. Run differential_verify().");
	}
	return stmt.Blob(0);
}

void MetadataStore::LookupChunks(const std::vector<Hash256> &hashes, std::vector<ChunkLocation> &out) {
	std::lock_guard<std::mutex> guard(lock);
	out.clear();
	out.reserve(hashes.size());
	auto stmt = db.Prepare("SELECT segment_id, payload_offset, length, crc32c FROM chunks WHERE hash = ?");
	for (auto &hash : hashes) {
		stmt.Reset();
		stmt.BindBlob(1, hash.data(), hash.size());
		if (!stmt.Step()) {
			Fail(ErrorKind::IO, "missing_chunk",
			     "Chunk " + HashToHex(hash) + " is referenced but not stored. Run differential_verify().");
		}
		ChunkLocation loc;
		loc.segment_id = static_cast<uint64_t>(stmt.Int(0));
		loc.offset = static_cast<uint64_t>(stmt.Int(1));
		loc.length = static_cast<uint32_t>(stmt.Int(2));
		loc.crc32c = static_cast<uint32_t>(stmt.Int(3));
		out.push_back(loc);
	}
}

void MetadataStore::PublishChunked(const FileAddress &file, uint64_t length, const std::vector<Hash256> &pages,
                                   const std::vector<NewIndexPage> &new_pages, const std::vector<NewChunk> &new_chunks,
                                   int64_t pin_id) {
	RunGrouped([&]() {
		auto branch_id = RequireBranchId(file);
		auto chunk = db.Prepare("INSERT OR IGNORE INTO chunks VALUES (?, ?, ?, ?, ?)");
		for (auto &c : new_chunks) {
			chunk.Reset();
			chunk.BindBlob(1, c.hash.data(), c.hash.size())
			    .Bind(2, static_cast<int64_t>(c.location.segment_id))
			    .Bind(3, static_cast<int64_t>(c.location.offset))
			    .Bind(4, static_cast<int64_t>(c.location.length))
			    .Bind(5, static_cast<int64_t>(c.location.crc32c))
			    .Run();
		}
		auto page = db.Prepare("INSERT OR IGNORE INTO index_pages VALUES (?, ?)");
		for (auto &p : new_pages) {
			page.Reset();
			page.BindBlob(1, p.hash.data(), p.hash.size()).BindBlob(2, p.slots.data(), p.slots.size()).Run();
		}
		std::vector<uint8_t> blob(pages.size() * 32);
		for (size_t i = 0; i < pages.size(); i++) {
			std::memcpy(blob.data() + i * 32, pages[i].data(), 32);
		}
		db.Prepare("INSERT INTO roots(file_length, pages) VALUES (?, ?)")
		    .Bind(1, static_cast<int64_t>(length))
		    .BindBlob(2, blob.data(), blob.size())
		    .Run();
		auto root_id = db.LastInsertRowId();
		db.Prepare("INSERT OR REPLACE INTO branch_files VALUES (?, ?, ?, ?)")
		    .Bind(1, branch_id)
		    .Bind(2, file.file_name)
		    .Bind(3, root_id)
		    .Bind(4, static_cast<int64_t>(length))
		    .Run();
		if (pin_id >= 0) {
			db.Prepare("UPDATE pins SET root_id = ? WHERE pin_id = ?").Bind(1, root_id).Bind(2, pin_id).Run();
		}
	});
}

void MetadataStore::PublishRanged(const FileAddress &file, uint64_t length, uint64_t kept_extents,
                                  const std::vector<ChunkLocation> &new_extents) {
	RunGrouped([&]() {
		auto branch_id = RequireBranchId(file);
		db.Prepare("DELETE FROM file_extents WHERE branch_id = ? AND file_name = ? AND seq >= ?")
		    .Bind(1, branch_id)
		    .Bind(2, file.file_name)
		    .Bind(3, static_cast<int64_t>(kept_extents))
		    .Run();
		auto ext = db.Prepare("INSERT INTO file_extents VALUES (?, ?, ?, ?, ?, ?, ?)");
		for (size_t i = 0; i < new_extents.size(); i++) {
			auto &loc = new_extents[i];
			ext.Reset();
			ext.Bind(1, branch_id)
			    .Bind(2, file.file_name)
			    .Bind(3, static_cast<int64_t>(kept_extents + i))
			    .Bind(4, static_cast<int64_t>(loc.segment_id))
			    .Bind(5, static_cast<int64_t>(loc.offset))
			    .Bind(6, static_cast<int64_t>(loc.length))
			    .Bind(7, static_cast<int64_t>(loc.crc32c))
			    .Run();
		}
		db.Prepare("INSERT OR REPLACE INTO branch_files VALUES (?, ?, NULL, ?)")
		    .Bind(1, branch_id)
		    .Bind(2, file.file_name)
		    .Bind(3, static_cast<int64_t>(length))
		    .Run();
	});
}

void MetadataStore::RunGrouped(const std::function<void()> &apply) {
	GroupedPublication mine;
	mine.apply = &apply;
	std::unique_lock<std::mutex> queue_guard(group_lock);
	group_queue.push_back(&mine);
	while (!mine.done) {
		if (group_leader_active) {
			group_done.wait(queue_guard);
			continue;
		}
		// Become the leader: everything queued so far shares one transaction and one device flush.
		group_leader_active = true;
		std::vector<GroupedPublication *> batch;
		batch.swap(group_queue);
		queue_guard.unlock();
		std::exception_ptr batch_error;
		try {
			std::lock_guard<std::mutex> guard(lock);
			SqliteTransaction txn(db);
			for (auto publication : batch) {
				// A savepoint per publication: one that fails is undone alone and reported to its caller.
				db.Execute("SAVEPOINT publication");
				try {
					(*publication->apply)();
					db.Execute("RELEASE publication");
				} catch (...) {
					publication->error = std::current_exception();
					db.Execute("ROLLBACK TO publication");
					db.Execute("RELEASE publication");
				}
			}
			CrashPoint("publish.before_commit");
			txn.Commit();
		} catch (...) {
			batch_error = std::current_exception();
		}
		queue_guard.lock();
		for (auto publication : batch) {
			if (batch_error && !publication->error) {
				publication->error = batch_error;
			}
			publication->done = true;
		}
		group_leader_active = false;
		group_done.notify_all();
	}
	if (mine.error) {
		std::rethrow_exception(mine.error);
	}
}

void MetadataStore::RemoveFile(const FileAddress &file) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto branch_id = RequireBranchId(file);
	db.Prepare("DELETE FROM file_extents WHERE branch_id = ? AND file_name = ?")
	    .Bind(1, branch_id)
	    .Bind(2, file.file_name)
	    .Run();
	db.Prepare("DELETE FROM branch_files WHERE branch_id = ? AND file_name = ?")
	    .Bind(1, branch_id)
	    .Bind(2, file.file_name)
	    .Run();
	txn.Commit();
}

void MetadataStore::MoveFile(const FileAddress &from, const FileAddress &to) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto branch_id = RequireBranchId(from);
	for (auto table : {"file_extents", "branch_files"}) {
		db.Prepare(std::string("DELETE FROM ") + table + " WHERE branch_id = ? AND file_name = ?")
		    .Bind(1, branch_id)
		    .Bind(2, to.file_name)
		    .Run();
		db.Prepare(std::string("UPDATE ") + table + " SET file_name = ? WHERE branch_id = ? AND file_name = ?")
		    .Bind(1, to.file_name)
		    .Bind(2, branch_id)
		    .Bind(3, from.file_name)
		    .Run();
	}
	txn.Commit();
}

uint64_t MetadataStore::AllocateSegment() {
	std::lock_guard<std::mutex> guard(lock);
	db.Prepare("INSERT INTO segments(created_at_us, created_by_pid, created_by_start) VALUES (?, ?, ?)")
	    .Bind(1, NowMicros())
	    .Bind(2, static_cast<int64_t>(getpid()))
	    .Bind(3, static_cast<int64_t>(CurrentProcessStartTime()))
	    .Run();
	return static_cast<uint64_t>(db.LastInsertRowId());
}

static const char *DATABASE_COLUMNS =
    "SELECT d.database_id, d.database_name, d.database_uuid, d.created_at_us, "
    "(SELECT count(*) FROM branches b WHERE b.database_id = d.database_id), "
    "(SELECT count(*) FROM snapshots s WHERE s.database_id = d.database_id) FROM databases d ";

static DatabaseRecord ReadDatabaseRow(SqliteStatement &stmt) {
	DatabaseRecord r;
	r.database_id = stmt.Int(0);
	r.name = stmt.Text(1);
	r.uuid = stmt.Text(2);
	r.created_at_us = stmt.Int(3);
	r.branch_count = stmt.Int(4);
	r.snapshot_count = stmt.Int(5);
	return r;
}

std::optional<DatabaseRecord> MetadataStore::FindDatabase(const std::string &name) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(std::string(DATABASE_COLUMNS) + "WHERE d.database_name = ?");
	stmt.Bind(1, name);
	if (stmt.Step()) {
		return ReadDatabaseRow(stmt);
	}
	return std::nullopt;
}

std::vector<DatabaseRecord> MetadataStore::ListDatabases() {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(std::string(DATABASE_COLUMNS) + "ORDER BY d.database_name");
	std::vector<DatabaseRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadDatabaseRow(stmt));
	}
	return out;
}

bool MetadataStore::EnsureDatabase(const std::string &name) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto find = db.Prepare("SELECT 1 FROM databases WHERE database_name = ?");
	find.Bind(1, name);
	if (find.Step()) {
		return false;
	}
	auto now = NowMicros();
	db.Prepare("INSERT INTO databases(database_name, database_uuid, created_at_us) VALUES (?, ?, ?)")
	    .Bind(1, name)
	    .Bind(2, NewUuid())
	    .Bind(3, now)
	    .Run();
	auto database_id = db.LastInsertRowId();
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us) VALUES (?, 'main', ?)")
	    .Bind(1, database_id)
	    .Bind(2, now)
	    .Run();
	txn.Commit();
	return true;
}

static const char *BRANCH_COLUMNS =
    "SELECT b.branch_id, b.database_id, b.branch_name, b.created_at_us, b.base_snapshot_id, b.head_snapshot_id "
    "FROM branches b JOIN databases d USING (database_id) ";

static BranchRecord ReadBranchRow(SqliteStatement &stmt) {
	BranchRecord r;
	r.branch_id = stmt.Int(0);
	r.database_id = stmt.Int(1);
	r.name = stmt.Text(2);
	r.created_at_us = stmt.Int(3);
	r.base_snapshot_id = stmt.IsNull(4) ? -1 : stmt.Int(4);
	r.head_snapshot_id = stmt.IsNull(5) ? -1 : stmt.Int(5);
	return r;
}

std::optional<BranchRecord> MetadataStore::FindBranch(const std::string &database, const std::string &branch) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(std::string(BRANCH_COLUMNS) + "WHERE d.database_name = ? AND b.branch_name = ?");
	stmt.Bind(1, database).Bind(2, branch);
	if (stmt.Step()) {
		return ReadBranchRow(stmt);
	}
	return std::nullopt;
}

std::vector<BranchRecord> MetadataStore::ListBranches(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	RequireDatabaseId(database);
	auto stmt = db.Prepare(std::string(BRANCH_COLUMNS) + "WHERE d.database_name = ? ORDER BY b.branch_id");
	stmt.Bind(1, database);
	std::vector<BranchRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadBranchRow(stmt));
	}
	return out;
}

BranchRecord MetadataStore::CreateBranch(const std::string &database, const std::string &branch, int64_t snapshot_id) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	if (BranchId(database, branch)) {
		Fail(ErrorKind::CONFLICT, "branch_exists",
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " already exists. Choose another name, or attach it with (BRANCH '" + branch + "').");
	}
	StoredFile root;
	auto root_id = RequireSnapshotRoot(database_id, database, snapshot_id, root);
	auto now = NowMicros();
	db.Prepare("INSERT INTO branches(database_id, branch_name, created_at_us, base_snapshot_id, head_snapshot_id) "
	           "VALUES (?, ?, ?, ?, ?)")
	    .Bind(1, database_id)
	    .Bind(2, branch)
	    .Bind(3, now)
	    .Bind(4, snapshot_id)
	    .Bind(5, snapshot_id)
	    .Run();
	auto branch_id = db.LastInsertRowId();
	SetBranchRoot(branch_id, root_id, root.length);
	txn.Commit();
	BranchRecord r;
	r.branch_id = branch_id;
	r.database_id = database_id;
	r.name = branch;
	r.created_at_us = now;
	r.base_snapshot_id = snapshot_id;
	r.head_snapshot_id = snapshot_id;
	return r;
}

SnapshotRecord MetadataStore::CreateSnapshot(const std::string &database, const std::string &branch,
                                             const SnapshotRequest &req) {
	std::lock_guard<std::mutex> guard(lock);
	SqliteTransaction txn(db);
	auto database_id = RequireDatabaseId(database);
	auto branch_id = RequireBranchId(database, branch);
	if (req.name) {
		auto dup = db.Prepare("SELECT snapshot_id FROM snapshots WHERE database_id = ? AND snapshot_name = ?");
		dup.Bind(1, database_id).Bind(2, *req.name);
		if (dup.Step()) {
			Fail(ErrorKind::CONFLICT, "snapshot_name_exists",
			     "Database " + QuoteName(database) + " already has a snapshot named " + QuoteName(*req.name) +
			         " (snapshot " + std::to_string(dup.Int(0)) + "). Choose another name.");
		}
	}
	auto wal = db.Prepare("SELECT file_name, length FROM branch_files WHERE branch_id = ? AND file_name != ? AND "
	                      "length > 0");
	wal.Bind(1, branch_id).Bind(2, MAIN_FILE_NAME);
	if (wal.Step()) {
		Fail(ErrorKind::CONFLICT, "snapshot_not_checkpointed",
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) + " still has " +
		         std::to_string(wal.Int(1)) + " bytes of WAL (" + wal.Text(0) +
		         "). Run CHECKPOINT on the attached database, then take the snapshot again.");
	}
	auto file = db.Prepare("SELECT root_id FROM branch_files WHERE branch_id = ? AND file_name = ?");
	file.Bind(1, branch_id).Bind(2, MAIN_FILE_NAME);
	if (!file.Step() || file.IsNull(0)) {
		Fail(ErrorKind::CONFLICT, "snapshot_not_checkpointed",
		     "Branch " + QuoteName(branch) + " of database " + QuoteName(database) +
		         " has no stored database file yet. Attach it once so that it is created, then take the snapshot.");
	}
	auto root_id = file.Int(0);
	int64_t snapshot_id;
	{
		auto next = db.Prepare("SELECT next_snapshot_id FROM databases WHERE database_id = ?");
		next.Bind(1, database_id);
		next.Step();
		snapshot_id = next.Int(0);
	}
	int64_t parent = -1;
	{
		auto head = db.Prepare("SELECT head_snapshot_id FROM branches WHERE branch_id = ?");
		head.Bind(1, branch_id);
		if (head.Step() && !head.IsNull(0)) {
			parent = head.Int(0);
		}
	}
	auto now = NowMicros();
	auto insert = db.Prepare("INSERT INTO snapshots VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)");
	insert.Bind(1, database_id).Bind(2, snapshot_id);
	req.name ? insert.Bind(3, *req.name) : insert.BindNull(3);
	req.author ? insert.Bind(4, *req.author) : insert.BindNull(4);
	req.message ? insert.Bind(5, *req.message) : insert.BindNull(5);
	insert.Bind(6, now).Bind(7, branch).Bind(8, root_id).Run();
	if (parent >= 0) {
		db.Prepare("INSERT INTO snapshot_parents VALUES (?, ?, 0, ?)")
		    .Bind(1, database_id)
		    .Bind(2, snapshot_id)
		    .Bind(3, parent)
		    .Run();
	}
	db.Prepare("UPDATE databases SET next_snapshot_id = ? WHERE database_id = ?")
	    .Bind(1, snapshot_id + 1)
	    .Bind(2, database_id)
	    .Run();
	db.Prepare("UPDATE branches SET head_snapshot_id = ? WHERE branch_id = ?")
	    .Bind(1, snapshot_id)
	    .Bind(2, branch_id)
	    .Run();
	CrashPoint("snapshot.before_commit");
	txn.Commit();
	SnapshotRecord r;
	r.snapshot_id = snapshot_id;
	r.has_name = req.name.has_value();
	r.name = req.name.value_or("");
	r.has_author = req.author.has_value();
	r.author = req.author.value_or("");
	r.has_message = req.message.has_value();
	r.message = req.message.value_or("");
	r.created_at_us = now;
	r.branch_name = branch;
	r.root_id = root_id;
	if (parent >= 0) {
		r.parents.push_back(parent);
	}
	return r;
}

static const char *SNAPSHOT_COLUMNS =
    "SELECT s.snapshot_id, s.snapshot_name, s.author, s.commit_message, s.created_at_us, s.branch_name, s.root_id, "
    "(SELECT group_concat(parent_snapshot_id) FROM snapshot_parents p WHERE p.database_id = s.database_id AND "
    "p.snapshot_id = s.snapshot_id), s.commit_extra_info FROM snapshots s JOIN databases d USING (database_id) ";

SnapshotRecord MetadataStore::ReadSnapshotRow(SqliteStatement &stmt) {
	SnapshotRecord r;
	r.snapshot_id = stmt.Int(0);
	r.has_name = !stmt.IsNull(1);
	r.name = stmt.Text(1);
	r.has_author = !stmt.IsNull(2);
	r.author = stmt.Text(2);
	r.has_message = !stmt.IsNull(3);
	r.message = stmt.Text(3);
	r.created_at_us = stmt.Int(4);
	r.branch_name = stmt.Text(5);
	r.root_id = stmt.Int(6);
	auto parents = stmt.Text(7);
	size_t pos = 0;
	while (pos < parents.size()) {
		auto comma = parents.find(',', pos);
		r.parents.push_back(std::stoll(parents.substr(pos, comma - pos)));
		pos = comma == std::string::npos ? parents.size() : comma + 1;
	}
	r.extra_info = stmt.Text(8);
	return r;
}

std::vector<SnapshotRecord> MetadataStore::ListSnapshots(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	RequireDatabaseId(database);
	auto stmt = db.Prepare(std::string(SNAPSHOT_COLUMNS) + "WHERE d.database_name = ? ORDER BY s.snapshot_id");
	stmt.Bind(1, database);
	std::vector<SnapshotRecord> out;
	while (stmt.Step()) {
		out.push_back(ReadSnapshotRow(stmt));
	}
	return out;
}

std::optional<SnapshotRecord> MetadataStore::FindSnapshot(const std::string &database, int64_t snapshot_id) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(std::string(SNAPSHOT_COLUMNS) + "WHERE d.database_name = ? AND s.snapshot_id = ?");
	stmt.Bind(1, database).Bind(2, snapshot_id);
	if (stmt.Step()) {
		return ReadSnapshotRow(stmt);
	}
	return std::nullopt;
}

std::optional<SnapshotRecord> MetadataStore::FindSnapshotAsOf(const std::string &database, int64_t timestamp_us) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(std::string(SNAPSHOT_COLUMNS) +
	                       "WHERE d.database_name = ? AND s.created_at_us <= ? ORDER BY s.created_at_us DESC, "
	                       "s.snapshot_id DESC LIMIT 1");
	stmt.Bind(1, database).Bind(2, timestamp_us);
	if (stmt.Step()) {
		return ReadSnapshotRow(stmt);
	}
	return std::nullopt;
}

std::optional<SnapshotRecord> MetadataStore::LatestSnapshot(const std::string &database) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(std::string(SNAPSHOT_COLUMNS) +
	                       "WHERE d.database_name = ? AND s.branch_name = 'main' ORDER BY s.snapshot_id DESC LIMIT 1");
	stmt.Bind(1, database);
	if (stmt.Step()) {
		return ReadSnapshotRow(stmt);
	}
	return std::nullopt;
}

std::vector<MetadataStore::ChunkRow> MetadataStore::AllChunks() {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT hash, segment_id, payload_offset, length, crc32c FROM chunks");
	std::vector<ChunkRow> out;
	while (stmt.Step()) {
		ChunkRow r;
		auto blob = stmt.Blob(0);
		std::memcpy(r.hash.data(), blob.data(), std::min<size_t>(32, blob.size()));
		r.location.segment_id = static_cast<uint64_t>(stmt.Int(1));
		r.location.offset = static_cast<uint64_t>(stmt.Int(2));
		r.location.length = static_cast<uint32_t>(stmt.Int(3));
		r.location.crc32c = static_cast<uint32_t>(stmt.Int(4));
		out.push_back(r);
	}
	return out;
}

std::vector<MetadataStore::RootRow> MetadataStore::LiveRoots() {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare(
	    "SELECT d.database_name || ' branch ' || b.branch_name, r.file_length, r.pages FROM branch_files f "
	    "JOIN branches b USING (branch_id) JOIN databases d USING (database_id) JOIN roots r USING (root_id) "
	    "UNION ALL SELECT d.database_name || ' snapshot ' || s.snapshot_id, r.file_length, r.pages FROM snapshots s "
	    "JOIN databases d USING (database_id) JOIN roots r USING (root_id)");
	std::vector<RootRow> out;
	while (stmt.Step()) {
		out.push_back({stmt.Text(0), static_cast<uint64_t>(stmt.Int(1)), SplitHashes(stmt.Blob(2))});
	}
	return out;
}

std::vector<std::pair<std::string, ChunkLocation>> MetadataStore::AllExtents() {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT d.database_name || ' branch ' || b.branch_name || ' ' || e.file_name, "
	                       "e.segment_id, e.payload_offset, e.length, e.crc32c FROM file_extents e "
	                       "JOIN branches b USING (branch_id) JOIN databases d USING (database_id)");
	std::vector<std::pair<std::string, ChunkLocation>> out;
	while (stmt.Step()) {
		ChunkLocation loc;
		loc.segment_id = static_cast<uint64_t>(stmt.Int(1));
		loc.offset = static_cast<uint64_t>(stmt.Int(2));
		loc.length = static_cast<uint32_t>(stmt.Int(3));
		loc.crc32c = static_cast<uint32_t>(stmt.Int(4));
		out.emplace_back(stmt.Text(0), loc);
	}
	return out;
}

bool MetadataStore::HasIndexPage(const Hash256 &page) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT 1 FROM index_pages WHERE hash = ?");
	stmt.BindBlob(1, page.data(), page.size());
	return stmt.Step();
}

bool MetadataStore::HasChunk(const Hash256 &hash) {
	std::lock_guard<std::mutex> guard(lock);
	auto stmt = db.Prepare("SELECT 1 FROM chunks WHERE hash = ?");
	stmt.BindBlob(1, hash.data(), hash.size());
	return stmt.Step();
}

} // namespace differential
