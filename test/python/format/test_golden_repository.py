"""The golden repository of store format 1 (test/data/golden-format-1) opens and reads back."""
import shutil

from differential_testing import REPO_ROOT, connect, scalar

GOLDEN = REPO_ROOT / "test" / "data" / "golden-format-1"


def test_golden_format_1_opens(tmp_path):
    repository = tmp_path / "golden"
    shutil.copytree(GOLDEN, repository)
    con = connect(repository)
    con.execute("ATTACH 'differential:golden' AS golden (READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM golden.numbers") == 13333 + 1
    assert scalar(con, "SELECT label FROM golden.numbers WHERE n = -1") == "uncheckpointed tail"
    assert scalar(con, "SELECT sum(n) FROM golden.numbers AT (VERSION => 1)") == sum(range(20000))
    assert scalar(con, "SELECT count(*) FROM golden.evens AT (VERSION => 2)") == len(
        [n for n in range(20000) if n % 3 and n % 2 == 0]
    )
    assert con.execute("SELECT snapshot_id, snapshot_name, author FROM golden.snapshots()").fetchall() == [
        (1, "first", "format-1"),
        (2, "second", None),
    ]
    con.execute("ATTACH 'differential:golden' AS side (BRANCH 'side', READ_ONLY)")
    assert scalar(con, "SELECT count(*) FROM side.numbers WHERE label = 'side'") == 10
    assert scalar(con, "SELECT count(*) FROM side.numbers") == 20000
    problems = con.execute("SELECT sum(problems) FROM differential_verify()").fetchone()[0]
    assert problems == 0
    # A new build can still write to it.
    con.execute("DETACH golden")
    con.execute("ATTACH 'differential:golden' AS golden")
    con.execute("INSERT INTO golden.numbers VALUES (-2, 4, 'new')")
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('golden')") == 3
