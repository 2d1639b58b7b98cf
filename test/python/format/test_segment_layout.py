"""Segment format 2: every chunk payload starts on a 4 KiB boundary of its segment, behind a padding record where
needed, and cleanup's compaction keeps it there (docs/FORMAT.md §3)."""
import sqlite3
import struct

from differential_testing import scalar

SEGMENT_HEADER = 64
RECORD_HEADER = 48


def chunk_offsets(repository):
    db = sqlite3.connect(repository / "metadata.sqlite")
    try:
        return db.execute("SELECT segment_id, payload_offset, length FROM chunks ORDER BY 1, 2").fetchall()
    finally:
        db.close()


def records(path):
    """(magic, payload offset, length) of every record header, walking the file as Scan does."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data, 8)[0] == 2  # segment format version
    out, pos = [], SEGMENT_HEADER
    while pos + RECORD_HEADER <= len(data):
        magic, length = struct.unpack_from("<4sI", data, pos)
        out.append((magic, pos + RECORD_HEADER, length))
        if magic == b"DIFP":
            assert data[pos + RECORD_HEADER:pos + RECORD_HEADER + length] == bytes(length)
        pos += RECORD_HEADER + length
    assert pos == len(data)
    return out


def test_chunk_payloads_are_page_aligned_and_stay_so_after_compaction(con, repository):
    con.execute("ATTACH 'differential:aligned' AS aligned")
    con.execute("CREATE TABLE aligned.t AS SELECT range AS id, hash(range) AS h, 'v' || range AS s FROM range(400000)")
    con.execute("CALL differential_create_snapshot('aligned')")
    con.execute("UPDATE aligned.t SET h = h + 1 WHERE id % 3 = 0")
    con.execute("CALL differential_create_snapshot('aligned')")
    offsets = chunk_offsets(repository)
    assert len(offsets) > 20
    assert all(offset % 4096 == 0 for _, offset, _ in offsets), offsets
    for segment in sorted((repository / "segments").iterdir()):
        kinds = records(segment)
        assert {magic for magic, _, _ in kinds} <= {b"DIFR", b"DIFP"}
        assert any(magic == b"DIFP" for magic, _, _ in kinds)
        chunks = {(offset, length) for magic, offset, length in kinds if magic == b"DIFR"}
        seg_id = int(segment.stem, 16)
        assert {(o, n) for s, o, n in offsets if s == seg_id} <= chunks
    # Compaction copies the live chunks of a mostly dead segment into a new one: still aligned there.
    con.execute("CALL differential_expire_snapshots('aligned', versions => [1])")
    con.execute("DETACH aligned")
    compacted = scalar(con, "SELECT segments_compacted FROM differential_cleanup_old_files(cleanup_all => true)")
    after = chunk_offsets(repository)
    moved = set(after) - set(offsets)
    assert compacted >= 1 and moved, (compacted, moved)
    assert after and all(offset % 4096 == 0 for _, offset, _ in after), after
    con.execute("ATTACH 'differential:aligned' AS aligned (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM aligned.t WHERE id % 3 = 0 AND h = hash(id) + 1") == 133334
    assert scalar(con, "SELECT sum(problems) FROM differential_verify()") == 0
