"""Writer for the crash test: commits forever, acknowledging each commit and snapshot on stdout."""
import sys

from differential_testing import connect

repository, start = sys.argv[1], int(sys.argv[2])
con = connect(repository)
con.execute("ATTACH 'differential:crashdb' AS c")
con.execute("CREATE TABLE IF NOT EXISTS c.ledger (i BIGINT, payload VARCHAR)")
con.execute("CREATE TABLE IF NOT EXISTS c.mirror (i BIGINT)")
con.execute("CREATE TABLE IF NOT EXISTS c.bulk (i BIGINT, v BIGINT)")
con.execute("CREATE TABLE IF NOT EXISTS c.medium (i BIGINT, v VARCHAR)")
i = start
while True:
    con.execute("BEGIN")
    con.execute("INSERT INTO c.ledger VALUES (?, repeat('x', 200))", [i])
    con.execute("INSERT INTO c.mirror VALUES (?)", [i])
    if i % 10 == 5:
        # Over 64 KiB of WAL, too small to be written to the database file: the commit's WAL bytes go to segment
        # records (the other commits' travel inline in their publication).
        con.execute("INSERT INTO c.medium SELECT ?, repeat('m', 100) FROM range(1000)", [i])
    if i % 40 == 39:
        # Large enough to write blocks straight to the database file, as big commits do.
        con.execute("INSERT INTO c.bulk SELECT ?, range FROM range(150000)", [i])
    con.execute("COMMIT")
    print(f"commit {i}", flush=True)
    if i % 25 == 24:
        snapshot = con.execute("SELECT snapshot_id FROM differential_create_snapshot('c')").fetchone()[0]
        print(f"snapshot {snapshot} {i}", flush=True)
    if i % 60 == 59:
        con.execute("CHECKPOINT c")
    i += 1
