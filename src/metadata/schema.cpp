// The metadata schema: each migration moves it one version up, in one transaction with the
// version record, so a repository is always at exactly one known schema.
#include "metadata/schema.hpp"

#include "common/errors.hpp"
#include "metadata/metadata_core.hpp"
#include "metadata/sqlite.hpp"

namespace differential {

//! The three triggers that keep segments.live_bytes and live_records (schema 10) following `table`'s rows. With
//! `has_inline_rows`, rows of segment 0 (inline, schema 5: no segment has that id) skip the update on insertion and
//! deletion, which would find no segment anyway.
static std::string UsageTriggers(const std::string &table, const std::string &prefix, bool has_inline_rows = false) {
	auto add = "UPDATE segments SET live_bytes = live_bytes + NEW.length, live_records = live_records + 1 WHERE "
	           "segment_id = NEW.segment_id;";
	auto remove = "UPDATE segments SET live_bytes = live_bytes - OLD.length, live_records = live_records - 1 WHERE "
	              "segment_id = OLD.segment_id;";
	std::string added_when = has_inline_rows ? " WHEN NEW.segment_id != 0" : "";
	std::string removed_when = has_inline_rows ? " WHEN OLD.segment_id != 0" : "";
	return "CREATE TRIGGER " + prefix + "_usage_added AFTER INSERT ON " + table + added_when + " BEGIN " + add +
	       " END;\n" + "CREATE TRIGGER " + prefix + "_usage_removed AFTER DELETE ON " + table + removed_when +
	       " BEGIN " + remove + " END;\n" + "CREATE TRIGGER " + prefix +
	       "_usage_moved AFTER UPDATE OF segment_id, length ON " + table +
	       " WHEN OLD.segment_id IS NOT NEW.segment_id OR OLD.length IS NOT NEW.length BEGIN " + remove + " " + add +
	       " END;\n";
}

// Each entry moves the schema one version up; never edit a released step, add one.
static const std::string MIGRATIONS[] = {
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
    // 4: S3 exports: a database's DATA_PATH, what each object store holds (chunks and their packs, other
    // objects), which snapshots were exported, the branch heads this repository last published, and how far
    // it has read each store's deletion journal.
    R"(
ALTER TABLE databases ADD COLUMN data_path TEXT;
ALTER TABLE databases ADD COLUMN export_from_snapshot INTEGER;
CREATE TABLE remote_chunks(
    store_url TEXT NOT NULL,
    chunk_hash BLOB NOT NULL,
    pack_hash BLOB NOT NULL,
    pack_offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    PRIMARY KEY(store_url, chunk_hash)) WITHOUT ROWID;
CREATE TABLE remote_objects(
    store_url TEXT NOT NULL,
    object_key TEXT NOT NULL,
    PRIMARY KEY(store_url, object_key)) WITHOUT ROWID;
CREATE TABLE snapshot_exports(
    database_id INTEGER NOT NULL,
    snapshot_id INTEGER NOT NULL,
    store_url TEXT NOT NULL,
    descriptor BLOB NOT NULL,
    exported_at_us INTEGER NOT NULL,
    PRIMARY KEY(database_id, snapshot_id));
CREATE TABLE remote_heads(
    store_url TEXT NOT NULL,
    database_name TEXT NOT NULL,
    branch_name TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL,
    descriptor BLOB NOT NULL,
    etag TEXT NOT NULL,
    published_at_us INTEGER NOT NULL,
    PRIMARY KEY(store_url, database_name, branch_name));
CREATE TABLE remote_stores(
    store_url TEXT PRIMARY KEY,
    deletions_seen TEXT NOT NULL);
)",
    // 5: a small WAL append is published inline, its bytes in its extent row (segment_id 0), so that a small
    // commit costs one durable write (SQLite's commit) instead of a segment flush and a commit. Older
    // builds must refuse such a repository: they would read segment 0.
    R"(
ALTER TABLE file_extents ADD COLUMN inline_data BLOB;
)",
    // 6: WAL shipping: a database's SHIP_WAL mode, interval and writer id (kept for later attachments), how
    // far each branch has shipped (chain, last epoch, its hash, the chain's base), and the chain a
    // published head names, so a snapshot export moving the head keeps it.
    R"(
CREATE TABLE wal_shipping(
    database_uuid TEXT PRIMARY KEY,
    mode TEXT NOT NULL,
    interval_s INTEGER NOT NULL,
    writer TEXT NOT NULL);
CREATE TABLE wal_ship_state(
    database_uuid TEXT NOT NULL,
    branch_name TEXT NOT NULL,
    chain INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    link BLOB NOT NULL,
    base BLOB NOT NULL,
    fenced INTEGER NOT NULL,
    updated_at_us INTEGER NOT NULL,
    PRIMARY KEY(database_uuid, branch_name));
ALTER TABLE remote_heads ADD COLUMN chain INTEGER;
ALTER TABLE remote_heads ADD COLUMN chain_base BLOB;
)",
    // 7: S3 merges publish in durable steps: a prepared result's reserved snapshot number and time, the
    // private branch holding its file, the head it starts from (etag, snapshot, descriptor, chain; no etag
    // for a new branch), its provenance, and its descriptor once exported (docs/DURABILITY.md §13.9).
    R"(
CREATE TABLE merge_publications(
    database_id INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    snapshot_id INTEGER NOT NULL,
    created_at_us INTEGER NOT NULL,
    prepared_branch TEXT NOT NULL,
    store_url TEXT NOT NULL,
    create_destination INTEGER NOT NULL,
    start_etag TEXT,
    start_snapshot_id INTEGER,
    start_descriptor BLOB,
    chain INTEGER,
    chain_base BLOB,
    extra_info TEXT,
    descriptor BLOB,
    PRIMARY KEY(database_id, request_id));
)",
    // 8: cleanup follows the garbage: reference counts on index pages (roots listing them) and chunks (pages
    // listing them), counted lazily by cleanup (a new row starts uncounted, so no writer has to know), roots a
    // change released recorded by triggers as candidates, and the indexes that make each of these a seek.
    R"(
ALTER TABLE roots ADD COLUMN counted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE index_pages ADD COLUMN refs INTEGER NOT NULL DEFAULT 0;
ALTER TABLE index_pages ADD COLUMN counted INTEGER NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN refs INTEGER NOT NULL DEFAULT 0;
CREATE INDEX roots_uncounted ON roots(root_id) WHERE counted = 0;
CREATE INDEX index_pages_uncounted ON index_pages(hash) WHERE counted = 0;
CREATE INDEX index_pages_unreferenced ON index_pages(hash) WHERE refs = 0;
CREATE INDEX chunks_unreferenced ON chunks(hash) WHERE refs = 0;
-- Cleanup's per-segment live bytes and records from the index alone (no lookup of each chunk row).
DROP INDEX chunks_by_segment;
CREATE INDEX chunks_by_segment ON chunks(segment_id, length);
CREATE INDEX snapshots_by_root ON snapshots(root_id);
CREATE INDEX branch_files_by_root ON branch_files(root_id) WHERE root_id IS NOT NULL;
CREATE INDEX pins_by_root ON pins(root_id);
CREATE INDEX snapshots_by_time ON snapshots(database_id, created_at_us, snapshot_id);
CREATE INDEX snapshots_by_branch ON snapshots(database_id, branch_name, snapshot_id);
CREATE TABLE root_candidates(root_id INTEGER PRIMARY KEY);
-- NOT EXISTS, not INSERT OR IGNORE: an outer statement's conflict clause (a publication's upsert) overrides
-- a trigger's, so a duplicate would fail the publication.
CREATE TRIGGER branch_files_root_moved AFTER UPDATE OF root_id ON branch_files
    WHEN OLD.root_id IS NOT NULL AND OLD.root_id IS NOT NEW.root_id
    BEGIN INSERT INTO root_candidates(root_id) SELECT OLD.root_id
    WHERE NOT EXISTS (SELECT 1 FROM root_candidates WHERE root_id = OLD.root_id); END;
CREATE TRIGGER branch_files_root_deleted AFTER DELETE ON branch_files WHEN OLD.root_id IS NOT NULL
    BEGIN INSERT INTO root_candidates(root_id) SELECT OLD.root_id
    WHERE NOT EXISTS (SELECT 1 FROM root_candidates WHERE root_id = OLD.root_id); END;
CREATE TRIGGER snapshots_root_moved AFTER UPDATE OF root_id ON snapshots WHEN OLD.root_id IS NOT NEW.root_id
    BEGIN INSERT INTO root_candidates(root_id) SELECT OLD.root_id
    WHERE NOT EXISTS (SELECT 1 FROM root_candidates WHERE root_id = OLD.root_id); END;
CREATE TRIGGER snapshots_root_deleted AFTER DELETE ON snapshots
    BEGIN INSERT INTO root_candidates(root_id) SELECT OLD.root_id
    WHERE NOT EXISTS (SELECT 1 FROM root_candidates WHERE root_id = OLD.root_id); END;
CREATE TRIGGER pins_root_moved AFTER UPDATE OF root_id ON pins WHEN OLD.root_id IS NOT NEW.root_id
    BEGIN INSERT INTO root_candidates(root_id) SELECT OLD.root_id
    WHERE NOT EXISTS (SELECT 1 FROM root_candidates WHERE root_id = OLD.root_id); END;
CREATE TRIGGER pins_root_deleted AFTER DELETE ON pins
    BEGIN INSERT INTO root_candidates(root_id) SELECT OLD.root_id
    WHERE NOT EXISTS (SELECT 1 FROM root_candidates WHERE root_id = OLD.root_id); END;
)",
    // 9: reader pins are kept in pins.sqlite, outside the metadata's write lock (docs/DURABILITY.md §10); the
    // `pins` table keeps writers' pins. Recorded so a build that would not look there refuses the repository.
    R"(
INSERT OR REPLACE INTO repository_meta(key, value) VALUES ('reader_pins', 'pins.sqlite');
)",
    // 10: each segment's live bytes and records, kept by triggers, so cleanup reads one row per segment instead of
    // summing every live chunk's index entry: its time follows the garbage, not the history. The counters only
    // steer which segments cleanup looks at; deleting a segment still recounts its rows first.
    R"(
ALTER TABLE segments ADD COLUMN live_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE segments ADD COLUMN live_records INTEGER NOT NULL DEFAULT 0;
UPDATE segments SET
    live_bytes = coalesce((SELECT sum(length) FROM chunks c WHERE c.segment_id = segments.segment_id), 0) +
                 coalesce((SELECT sum(length) FROM file_extents e WHERE e.segment_id = segments.segment_id), 0),
    live_records = (SELECT count(*) FROM chunks c WHERE c.segment_id = segments.segment_id) +
                   (SELECT count(*) FROM file_extents e WHERE e.segment_id = segments.segment_id);
)" + UsageTriggers("chunks", "chunks") +
        UsageTriggers("file_extents", "extents"),
    // 11: a dropped database leaves nothing a new one of the same name could inherit. Database ids are never
    // reused (AUTOINCREMENT, seeded above every id any row still names), and the shared-writer state that lived
    // in repository_meta under keys composed of the database's name moves into tables keyed by database_id.
    R"(
CREATE TABLE databases_v11(
    database_id INTEGER PRIMARY KEY AUTOINCREMENT,
    database_name TEXT NOT NULL UNIQUE,
    database_uuid TEXT NOT NULL,
    created_at_us INTEGER NOT NULL,
    next_snapshot_id INTEGER NOT NULL DEFAULT 1,
    cloned_from TEXT,
    data_path TEXT,
    export_from_snapshot INTEGER);
INSERT INTO databases_v11(database_id, database_name, database_uuid, created_at_us, next_snapshot_id, cloned_from,
    data_path, export_from_snapshot)
    SELECT database_id, database_name, database_uuid, created_at_us, next_snapshot_id, cloned_from, data_path,
    export_from_snapshot FROM databases;
DROP TABLE databases;
ALTER TABLE databases_v11 RENAME TO databases;
DELETE FROM sqlite_sequence WHERE name = 'databases';
INSERT INTO sqlite_sequence(name, seq) SELECT 'databases', max(id) FROM (
    SELECT coalesce(max(database_id), 0) AS id FROM databases
    UNION ALL SELECT max(database_id) FROM snapshot_parents UNION ALL SELECT max(database_id) FROM merge_requests
    UNION ALL SELECT max(database_id) FROM merge_publications UNION ALL SELECT max(database_id) FROM expired_snapshots);
CREATE TABLE shared_writers(
    database_id INTEGER PRIMARY KEY,
    conflict_to_branch INTEGER NOT NULL);
CREATE TABLE shared_branches(
    database_id INTEGER NOT NULL,
    branch_name TEXT NOT NULL,
    conflict_snapshot_id INTEGER,
    settled_snapshot_id INTEGER,
    PRIMARY KEY(database_id, branch_name));
CREATE TABLE kept_snapshots(
    database_id INTEGER NOT NULL,
    snapshot_id INTEGER NOT NULL,
    branch_name TEXT NOT NULL,
    PRIMARY KEY(database_id, snapshot_id));
CREATE TABLE store_snapshot_ids(
    database_id INTEGER NOT NULL,
    snapshot_id INTEGER NOT NULL,
    store_snapshot_id INTEGER NOT NULL,
    PRIMARY KEY(database_id, snapshot_id));
INSERT INTO shared_writers(database_id, conflict_to_branch)
    SELECT d.database_id, m.value = 'shared branch' FROM repository_meta m JOIN databases d
    ON m.key = 'shared_writers/' || d.database_name;
INSERT INTO shared_branches(database_id, branch_name, conflict_snapshot_id)
    SELECT d.database_id, substr(m.key, length('conflict/' || d.database_name || '/') + 1), CAST(m.value AS INTEGER)
    FROM repository_meta m JOIN databases d ON substr(m.key, 1, length('conflict/' || d.database_name || '/')) =
    'conflict/' || d.database_name || '/';
INSERT INTO shared_branches(database_id, branch_name, settled_snapshot_id)
    SELECT d.database_id, substr(m.key, length('settled/' || d.database_name || '/') + 1), CAST(m.value AS INTEGER)
    FROM repository_meta m JOIN databases d ON substr(m.key, 1, length('settled/' || d.database_name || '/')) =
    'settled/' || d.database_name || '/' WHERE true
    ON CONFLICT(database_id, branch_name) DO UPDATE SET settled_snapshot_id = excluded.settled_snapshot_id;
INSERT INTO kept_snapshots(database_id, snapshot_id, branch_name)
    SELECT d.database_id, CAST(substr(m.key, length('kept/' || d.database_name || '/') + 1) AS INTEGER), m.value
    FROM repository_meta m JOIN databases d ON substr(m.key, 1, length('kept/' || d.database_name || '/')) =
    'kept/' || d.database_name || '/';
INSERT INTO store_snapshot_ids(database_id, snapshot_id, store_snapshot_id)
    SELECT d.database_id, CAST(substr(m.key, length('store_id/' || d.database_name || '/') + 1) AS INTEGER),
    CAST(m.value AS INTEGER)
    FROM repository_meta m JOIN databases d ON substr(m.key, 1, length('store_id/' || d.database_name || '/')) =
    'store_id/' || d.database_name || '/';
DELETE FROM repository_meta WHERE substr(key, 1, 15) = 'shared_writers/' OR substr(key, 1, 9) = 'conflict/' OR
    substr(key, 1, 8) = 'settled/' OR substr(key, 1, 5) = 'kept/' OR substr(key, 1, 9) = 'store_id/';
)",
    // 12: inline extents (segment 0, schema 5) leave the segment index. Every small commit inserts one, and the
    // index serves only lookups of stored segments (cleanup, verify), which say `segment_id != 0` so SQLite may
    // use it: one B-tree page fewer in each small commit's SQLite transaction.
    R"(
DROP INDEX extents_by_segment;
CREATE INDEX extents_by_segment ON file_extents(segment_id) WHERE segment_id != 0;
)",
    // 13: a ranged file's length is the sum of its extents, and its branch_files row holds 0. A commit appends an
    // inline extent and leaves the row alone: one statement and one B-tree page fewer in its SQLite transaction.
    R"(
UPDATE branch_files SET length = 0 WHERE root_id IS NULL;
)",
    // 14: file_extents is clustered on its key (WITHOUT ROWID), so a commit's inline extent is one B-tree entry
    // instead of a table row and a key index entry: one page fewer in a small commit's SQLite transaction. Inline
    // extents (segment 0) skip the usage triggers' lookup of a segment that cannot exist.
    R"(
CREATE TABLE file_extents_v14(
    branch_id INTEGER NOT NULL,
    file_name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    segment_id INTEGER NOT NULL,
    payload_offset INTEGER NOT NULL,
    length INTEGER NOT NULL,
    crc32c INTEGER NOT NULL,
    inline_data BLOB,
    PRIMARY KEY(branch_id, file_name, seq)) WITHOUT ROWID;
INSERT INTO file_extents_v14 SELECT branch_id, file_name, seq, segment_id, payload_offset, length, crc32c, inline_data
    FROM file_extents;
DROP TABLE file_extents;
ALTER TABLE file_extents_v14 RENAME TO file_extents;
CREATE INDEX extents_by_segment ON file_extents(segment_id) WHERE segment_id != 0;
)" + UsageTriggers("file_extents", "extents", true),
};

static_assert(sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]) == METADATA_SCHEMA_VERSION,
              "each schema version is one migration step");

//! The stored schema version (0: none yet); repository_meta must exist. Refuses another store format.
static int64_t StoredSchemaVersion(SqliteDatabase &db, const std::string &root) {
	int64_t version = 0;
	{
		auto stmt = db.Prepare("SELECT value FROM repository_meta WHERE key = 'schema_version'");
		if (stmt.Step()) {
			version = std::stoll(stmt.Text(0));
		}
	}
	auto stmt = db.Prepare("SELECT value FROM repository_meta WHERE key = 'store_format'");
	if (stmt.Step() && std::stoll(stmt.Text(0)) != STORE_FORMAT_VERSION) {
		Fail(ErrorCode::UNSUPPORTED_FORMAT, "The repository " + root + " uses store format " + stmt.Text(0) +
		                                        ", this build reads format " + std::to_string(STORE_FORMAT_VERSION) +
		                                        ". Use a matching build of the extension.");
	}
	return version;
}

//! True when the metadata is at this build's schema already, found without taking the write lock: a process
//! opening a current repository (every open but the first after an upgrade) then never waits for a writer, nor
//! holds up one.
static bool AlreadyCurrent(SqliteDatabase &db, const std::string &root) {
	SqliteReadTransaction snapshot(db);
	{
		auto exists =
		    db.Prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'repository_meta'");
		if (!exists.Step() || exists.Int(0) == 0) {
			return false;
		}
	}
	return StoredSchemaVersion(db, root) == METADATA_SCHEMA_VERSION;
}

void MigrateSchema(SqliteDatabase &db, const std::string &root) {
	if (AlreadyCurrent(db, root)) {
		return;
	}
	SqliteTransaction txn(db);
	db.Execute("CREATE TABLE IF NOT EXISTS repository_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)");
	auto version = StoredSchemaVersion(db, root);
	const int64_t known = sizeof(MIGRATIONS) / sizeof(MIGRATIONS[0]);
	if (version > known) {
		Fail(ErrorCode::UNSUPPORTED_FORMAT, "The repository " + root + " has metadata schema " +
		                                        std::to_string(version) + ", newer than this build understands (" +
		                                        std::to_string(known) + "). Upgrade the extension to open it.");
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

} // namespace differential
