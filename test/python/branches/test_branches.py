"""Branches: writable continuations of snapshots that never touch their source."""
from differential_testing import connect, refused, scalar


def test_default_branch_point_is_the_latest_snapshot_of_main(con):
    con.execute("ATTACH 'differential:inv' AS inv")
    con.execute("CREATE TABLE inv.items AS SELECT range AS id FROM range(10)")
    con.execute("CALL differential_create_snapshot('inv')")
    con.execute("INSERT INTO inv.items VALUES (10)")
    con.execute("CALL differential_create_snapshot('inv')")
    con.execute("INSERT INTO inv.items VALUES (11)")
    row = con.execute("SELECT * FROM differential_create_branch('inv', 'exp')").fetchone()
    assert row == ("inv", "exp", 2)
    con.execute("ATTACH 'differential:inv' AS exp (BRANCH 'exp')")
    assert scalar(con, "SELECT count(*) FROM exp.items") == 11
    con.execute("DELETE FROM exp.items WHERE id < 5")
    assert scalar(con, "SELECT count(*) FROM exp.items") == 6
    assert scalar(con, "SELECT count(*) FROM inv.items") == 12
    assert scalar(con, "SELECT snapshot_id FROM differential_create_snapshot('exp')") == 3
    assert scalar(con, "SELECT count(*) FROM inv.items AT (VERSION => 3)") == 6


def test_branch_writes_survive_reattach_and_other_processes(con, repository):
    con.execute("ATTACH 'differential:inv' AS inv")
    con.execute("CREATE TABLE inv.items AS SELECT range AS id FROM range(100)")
    con.execute("CALL differential_create_snapshot('inv')")
    con.execute("CALL differential_create_branch('inv', 'b1', snapshot => 1)")
    con.execute("ATTACH 'differential:inv' AS b1 (BRANCH 'b1')")
    con.execute("INSERT INTO b1.items SELECT range FROM range(100, 150)")
    con.execute("DETACH b1")
    con.execute("DETACH inv")
    other = connect(repository)
    other.execute("ATTACH 'differential:inv' AS b1 (BRANCH 'b1')")
    assert scalar(other, "SELECT count(*) FROM b1.items") == 150
    other.execute("ATTACH 'differential:inv' AS inv")
    assert scalar(other, "SELECT count(*) FROM inv.items") == 100


def test_branch_refusals_change_nothing(con):
    from differential_testing import repository_state

    con.execute("ATTACH 'differential:inv' AS inv")
    con.execute("CREATE TABLE inv.items AS SELECT 1 AS id")
    refused(con, "CALL differential_create_branch('inv', 'x')", "snapshot_not_found")
    con.execute("CALL differential_create_snapshot('inv')")
    con.execute("CALL differential_create_branch('inv', 'x')")
    before = repository_state(con)
    refused(con, "CALL differential_create_branch('inv', 'x')", "branch_exists")
    refused(con, "CALL differential_create_branch('inv', 'y', snapshot => 42)", "snapshot_not_found")
    refused(con, "CALL differential_create_branch('nope', 'y', snapshot => 1)", "database_not_found")
    refused(con, "ATTACH 'differential:inv' AS z (BRANCH 'zzz')", "branch_not_found")
    assert repository_state(con) == before
