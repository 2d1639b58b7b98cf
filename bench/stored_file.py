"""The bytes differential stores for a database's main file, written out as a plain DuckDB file.

Native DuckDB then reads the very same bytes as differential (block for block, in the same layout), so a
side-by-side ratio measures differential's storage and nothing of how the two files were written: two
writes of one database (dbgen's, COPY FROM DATABASE's) lay out their blocks differently. Reads the
repository as docs/FORMAT.md describes it, read-only."""
import pathlib
import sqlite3

SLOT = 32
SLOTS_PER_PAGE = 4096
FIRST_CHUNK = 12288
CHUNK = 262144


def write_stored_file(repository, database, branch, path):
    repository = pathlib.Path(repository)
    db = sqlite3.connect(f"file:{repository / 'metadata.sqlite'}?mode=ro", uri=True)
    row = db.execute(
        "SELECT f.root_id FROM branch_files f JOIN branches b USING (branch_id) JOIN databases d USING (database_id) "
        "WHERE d.database_name = ? AND b.branch_name = ? AND f.file_name = 'database.duckdb'",
        (database, branch)).fetchone()
    if row is None or row[0] is None:
        raise SystemExit(f"{database}/{branch} has no published database file in {repository}")
    length, pages = db.execute("SELECT file_length, pages FROM roots WHERE root_id = ?", (row[0],)).fetchone()
    segments = {}
    tmp = pathlib.Path(path).with_suffix(".tmp")
    with open(tmp, "wb") as out:
        out.truncate(length)
        for p in range(len(pages) // SLOT):
            slots = db.execute("SELECT slots FROM index_pages WHERE hash = ?",
                               (pages[p * SLOT:(p + 1) * SLOT],)).fetchone()[0]
            for s in range(len(slots) // SLOT):
                chunk_hash = slots[s * SLOT:(s + 1) * SLOT]
                if chunk_hash == bytes(SLOT):
                    continue
                index = p * SLOTS_PER_PAGE + s
                segment, offset, size = db.execute(
                    "SELECT segment_id, payload_offset, length FROM chunks WHERE hash = ?", (chunk_hash,)).fetchone()
                if segment == 0:
                    raise SystemExit("a chunk is evicted to an export; fetch it first (differential_fetch_evicted)")
                if segment not in segments:
                    segments[segment] = open(repository / "segments" / f"{segment:016x}.seg", "rb")
                segments[segment].seek(offset)
                out.seek(0 if index == 0 else FIRST_CHUNK + (index - 1) * CHUNK)
                out.write(segments[segment].read(size))
    for f in segments.values():
        f.close()
    db.close()
    tmp.rename(path)
