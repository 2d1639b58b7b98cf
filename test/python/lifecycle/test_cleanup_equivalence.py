"""Cleanup by reference counts deletes exactly what the full mark and sweep deletes: on seeded random histories
(writes, snapshots, branches, drops, expiry, restore, clone, pinned old snapshots), before every cleanup this test
computes the old mark from metadata.sqlite itself (live roots: branch files, snapshots, pins; their pages; those
pages' chunks), and after it the remaining roots, pages and chunks must be exactly the marked ones, every version
must read back as before, and differential_verify (which recomputes every count) must be clean."""
import os
import random
import sqlite3

import pytest

from differential_testing import scalar


def hashes(blob):
    return [bytes(blob[i:i + 32]) for i in range(0, len(blob) - len(blob) % 32, 32)]


def reference_mark(repository):
    """The mark of the former full mark and sweep: what is live, and every row there is."""
    db = sqlite3.connect(repository / "metadata.sqlite")
    # Writers' pins are in the metadata, readers' in pins.sqlite (docs/DURABILITY.md §10).
    db.execute(f"ATTACH '{repository / 'pins.sqlite'}' AS readers")
    try:
        pins = db.execute("SELECT DISTINCT pid FROM pins UNION SELECT pid FROM readers.pins").fetchall()
        assert all(pid == os.getpid() for (pid,) in pins), pins  # no pin of a dead process to release
        live_roots = {r for (r,) in db.execute("SELECT root_id FROM branch_files WHERE root_id IS NOT NULL UNION "
                                               "SELECT root_id FROM snapshots UNION SELECT root_id FROM pins UNION "
                                               "SELECT root_id FROM readers.pins")}
        roots = dict(db.execute("SELECT root_id, pages FROM roots").fetchall())
        pages = dict(db.execute("SELECT hash, slots FROM index_pages").fetchall())
        chunks = {h for (h,) in db.execute("SELECT hash FROM chunks")}
    finally:
        db.close()
    live_pages = {p for r in live_roots for p in hashes(roots[r])}
    assert live_pages <= {bytes(p) for p in pages}, "a live root names a missing page"
    live_chunks = {c for p, slots in pages.items() if bytes(p) in live_pages for c in hashes(slots)} - {bytes(32)}
    return {"roots": live_roots, "pages": live_pages, "chunks": live_chunks & {bytes(c) for c in chunks},
            "all": (set(roots), {bytes(p) for p in pages}, {bytes(c) for c in chunks})}


def remaining(repository):
    db = sqlite3.connect(repository / "metadata.sqlite")
    try:
        return ({r for (r,) in db.execute("SELECT root_id FROM roots")},
                {bytes(h) for (h,) in db.execute("SELECT hash FROM index_pages")},
                {bytes(h) for (h,) in db.execute("SELECT hash FROM chunks")})
    finally:
        db.close()


class History:
    """A random history over a few databases; `check_cleanup` compares cleanup with the reference mark."""

    def __init__(self, con, repository, seed):
        self.con, self.repository, self.rng = con, repository, random.Random(seed)
        self.databases = {}
        self.pins = {}
        self.counter = 0

    def fresh_name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def with_snapshots(self):
        """A database with a kept snapshot (a clone has none until its first), or None."""
        choices = [d for d in sorted(self.databases) if self.kept(d)]
        return self.rng.choice(choices) if choices else None

    def kept(self, database):
        return [s for (s,) in self.con.execute("SELECT snapshot_id FROM differential_snapshots(?)", [database]).fetchall()]

    def branches(self, database):
        return self.con.execute("SELECT branch_name, head_snapshot_id FROM differential_branches(?)",
                                [database]).fetchall()

    def write(self, database=None, branch=None):
        database = database or self.rng.choice(sorted(self.databases))
        branch = branch or self.rng.choice([b for b, _ in self.branches(database)])
        self.con.execute(f"ATTACH 'differential:{database}' AS w (BRANCH '{branch}')")
        size = self.rng.choice([100, 5000, 60000])
        start = self.rng.randrange(1_000_000)
        self.con.execute("CREATE TABLE IF NOT EXISTS w.t (id BIGINT, v VARCHAR)")
        kind = self.rng.random()
        if kind < 0.2:
            self.con.execute(f"CREATE OR REPLACE TABLE w.t AS SELECT range + {start} AS id, 'r' || range AS v "
                             f"FROM range({size})")
        elif kind < 0.4:
            self.con.execute(f"DELETE FROM w.t WHERE id % 7 = {self.rng.randrange(7)}")
        elif kind < 0.6:
            self.con.execute(f"UPDATE w.t SET v = v || 'u' WHERE id % 5 = {self.rng.randrange(5)}")
        else:
            self.con.execute(f"INSERT INTO w.t SELECT range + {start}, hash(range)::VARCHAR FROM range({size})")
        if self.rng.random() < 0.75:
            self.con.execute("CALL differential_create_snapshot('w')")
        else:
            self.con.execute("CHECKPOINT w")
        self.con.execute("DETACH w")

    def new_database(self):
        name = self.fresh_name("db")
        self.databases[name] = True
        self.write(name, "main")
        self.con.execute(f"ATTACH 'differential:{name}' AS w")
        self.con.execute("CALL differential_create_snapshot('w')")
        self.con.execute("DETACH w")

    def create_branch(self):
        database = self.with_snapshots()
        if database is None:
            return
        snapshot = self.rng.choice(self.kept(database))
        self.con.execute("CALL differential_create_branch(?, ?, snapshot => ?)",
                         [database, self.fresh_name("b"), snapshot])

    def drop_branch(self):
        database = self.rng.choice(sorted(self.databases))
        others = [b for b, _ in self.branches(database) if b != "main"]
        if others:
            self.con.execute("CALL differential_drop_branch(?, ?)", [database, self.rng.choice(others)])

    def expire(self):
        database = self.rng.choice(sorted(self.databases))
        heads = {h for _, h in self.branches(database)}
        candidates = [s for s in self.kept(database) if s not in heads]
        if candidates:
            chosen = self.rng.sample(candidates, self.rng.randint(1, len(candidates)))
            self.con.execute("CALL differential_expire_snapshots(?, versions => ?)", [database, chosen])

    def unpin_database(self, database):
        for alias in [a for a, d in self.pins.items() if d == database]:
            self.con.execute(f"DETACH {alias}")
            del self.pins[alias]

    def restore(self):
        database = self.with_snapshots()
        if database is None:
            return
        self.unpin_database(database)
        branch = self.rng.choice([b for b, _ in self.branches(database)])
        self.con.execute("CALL differential_restore(?, ?, branch => ?)",
                         [database, self.rng.choice(self.kept(database)), branch])

    def clone(self):
        source = self.with_snapshots()
        if source is None:
            return
        target = self.fresh_name("db")
        self.con.execute("CALL differential_clone_database(?, ?, snapshot => ?)",
                         [source, target, self.rng.choice(self.kept(source))])
        self.databases[target] = True

    def drop_database(self):
        if len(self.databases) > 1:
            database = self.rng.choice(sorted(self.databases))
            self.unpin_database(database)
            self.con.execute("CALL differential_drop_database(?)", [database])
            del self.databases[database]

    def pin(self):
        database = self.with_snapshots()
        if database is None:
            return
        alias = self.fresh_name("pin")
        self.con.execute(f"ATTACH 'differential:{database}' AS {alias} (SNAPSHOT {self.rng.choice(self.kept(database))})")
        self.pins[alias] = database

    def unpin(self):
        if self.pins:
            alias = self.rng.choice(sorted(self.pins))
            self.con.execute(f"DETACH {alias}")
            del self.pins[alias]

    def contents(self):
        """Every kept version of every database, as (count, sum of ids)."""
        out = {}
        for database in sorted(self.databases):
            for snapshot in self.kept(database):
                self.con.execute(f"ATTACH 'differential:{database}' AS r (SNAPSHOT {snapshot})")
                out[database, snapshot] = self.con.execute("SELECT count(*), sum(id) FROM r.t").fetchone()
                self.con.execute("DETACH r")
            for branch, _ in self.branches(database):
                self.con.execute(f"ATTACH 'differential:{database}' AS r (BRANCH '{branch}', READ_ONLY)")
                out[database, branch] = self.con.execute("SELECT count(*), sum(id) FROM r.t").fetchone()
                self.con.execute("DETACH r")
        return out

    def forget_read_candidates(self):
        """Reading every version above made live roots cleanup candidates (a writer's pin released or moved); a
        candidate still referenced needs no record, so these are dropped: otherwise they would hide a writer that
        fails to record a root it releases later (an expiry, a drop), which this test must catch."""
        db = sqlite3.connect(self.repository / "metadata.sqlite")
        db.execute("DELETE FROM root_candidates WHERE root_id IN (SELECT root_id FROM snapshots UNION "
                   "SELECT root_id FROM branch_files WHERE root_id IS NOT NULL UNION SELECT root_id FROM pins)")
        db.commit()
        db.close()

    def check_cleanup(self):
        before = self.contents()
        mark = reference_mark(self.repository)
        all_roots, all_pages, all_chunks = mark["all"]
        row = self.con.execute("SELECT roots_deleted, index_pages_deleted, chunks_deleted "
                               "FROM differential_cleanup_old_files(cleanup_all => true)").fetchone()
        assert remaining(self.repository) == (mark["roots"], mark["pages"], mark["chunks"])
        assert row == (len(all_roots - mark["roots"]), len(all_pages - mark["pages"]),
                       len(all_chunks - mark["chunks"]))
        assert self.contents() == before
        self.forget_read_candidates()
        problems = self.con.execute("SELECT check_name, detail FROM differential_verify() WHERE problems > 0").fetchall()
        assert problems == []
        return row


OPERATIONS = ["write", "write", "write", "create_branch", "drop_branch", "expire", "restore", "clone",
              "drop_database", "pin", "unpin", "check_cleanup"]


@pytest.mark.parametrize("seed", range(12))
def test_cleanup_deletes_exactly_what_the_full_mark_deletes(con, repository, seed):
    history = History(con, repository, seed)
    history.new_database()
    history.new_database()
    deleted = [0, 0, 0]
    for _ in range(32):
        result = getattr(history, history.rng.choice(OPERATIONS))()
        if result:
            deleted = [a + b for a, b in zip(deleted, result)]
    history.unpin()
    result = history.check_cleanup()
    deleted = [a + b for a, b in zip(deleted, result)]
    # The histories produce garbage of every kind, so the comparison is not vacuous.
    assert all(n > 0 for n in deleted), deleted


def test_verify_reports_wrong_reference_counts(con, repository):
    """The full mark in differential_verify catches a count too high (a leak) and one too low (a live row cleanup
    would delete)."""
    history = History(con, repository, 99)
    history.new_database()
    history.write()
    history.check_cleanup()
    db = sqlite3.connect(repository / "metadata.sqlite")
    (page,) = db.execute("SELECT hash FROM index_pages WHERE refs > 0 LIMIT 1").fetchone()
    (chunk,) = db.execute("SELECT hash FROM chunks WHERE refs > 0 LIMIT 1").fetchone()
    for table, key, change in (("index_pages", page, "refs - 1"), ("chunks", chunk, "refs + 1")):
        db.execute(f"UPDATE {table} SET refs = {change} WHERE hash = ?", [key])
        db.commit()
        assert scalar(con, "SELECT problems FROM differential_verify() WHERE check_name = 'references'") == 1
        detail = scalar(con, "SELECT detail FROM differential_verify() WHERE check_name = 'references'")
        assert key.hex() in detail.lower()
        db.execute(f"UPDATE {table} SET refs = {change.replace('-', '@').replace('+', '-').replace('@', '+')} "
                   "WHERE hash = ?", [key])
        db.commit()
    # A root that nothing references and no cleanup would look at is a leak too.
    db.execute("INSERT INTO roots(file_length, pages, counted) VALUES (0, x'', 1)")
    db.commit()
    db.close()
    assert scalar(con, "SELECT problems FROM differential_verify() WHERE check_name = 'references'") == 1
