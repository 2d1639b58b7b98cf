"""Merge requests: a request's identity tells different resolution mappings apart, a frozen setting the
session cannot take stops the retry clearly, and a refusal raised while the merge reads its inputs
keeps its code on the request and in the preflight."""
import sqlite3

from differential_testing import connect, refused, scalar


def shop(con, rows=200):
    """Database shop: snapshot 1 with `rows` items; branch side (2) and main (3) each change a few."""
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, price INTEGER, name VARCHAR)")
    con.execute(f"INSERT INTO shop.items SELECT range, range, 'item ' || range FROM range({rows})")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("CALL differential_create_branch('shop', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:shop' AS side (BRANCH 'side')")
    con.execute("UPDATE side.items SET price = price + 1 WHERE id < 5")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("UPDATE shop.items SET name = upper(name) WHERE id BETWEEN 10 AND 14")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH shop")
    con.execute("DETACH side")


def test_resolution_mappings_that_once_shared_an_identity_are_different_requests(con):
    shop(con)
    # A branch at main's head: merging it into a new branch has nothing to combine, so the mapping is
    # only part of the request's identity, never read.
    con.execute("CALL differential_create_branch('shop', 'twin', snapshot => 3)")
    merge = ("SELECT merge_action FROM differential_merge_branch('shop', 'main', 'twin', 'copy', request_id => 'r', "
             "resolution_tables => {})")
    one_table = "MAP {'main.a': 'memory.main.d1;b=memory.main.d2'}"
    two_tables = "MAP {'main.a': 'memory.main.d1', 'main.b': 'memory.main.d2'}"
    assert con.execute(merge.format(two_tables)).fetchone()[0] == "created_branch"
    # Joined without escaping, both mappings read "a=memory.main.d1;b=memory.main.d2;": the second call
    # replayed the first request's result instead of refusing.
    refused(con, merge.format(one_table), "merge_request_mismatch")
    # The same mapping again is the same request: its result replays.
    assert con.execute(merge.format(two_tables)).fetchone()[0] == "created_branch"
    assert con.execute("SELECT request_id, state, attempts FROM differential_merge_requests('shop')").fetchall() == [
        ("r", "complete", 1)]


def test_a_frozen_setting_the_session_cannot_take_stops_the_retry(con, repository):
    shop(con)
    con.execute("ATTACH 'differential:shop' AS shop")
    refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'tz')",
            "active_attachment_or_transaction")
    con.execute("DETACH shop")
    # A time zone no DuckDB knows, as a damaged or foreign metadata file could hold for the request.
    with sqlite3.connect(repository / "metadata.sqlite") as metadata:
        assert metadata.execute("UPDATE merge_requests SET time_zone = 'Nowhere/Atlantis' WHERE request_id = 'tz'").rowcount == 1
    message = refused(con, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'tz')",
                      "merge_setting_unavailable")
    assert "TimeZone 'Nowhere/Atlantis'" in message and "nothing was merged" in message, message
    assert con.execute("SELECT state, last_error_code, attempts FROM differential_merge_requests('shop')").fetchall() == [
        ("pending", "merge_setting_unavailable", 2)]
    assert con.execute("SELECT head_snapshot_id FROM differential_branches('shop') WHERE branch_name = 'main'").fetchone() == (3,)


def test_a_refusal_raised_while_reading_the_inputs_keeps_its_code(con, repository):
    shop(con, rows=300000)
    # Damage the largest segment throughout (one byte in every 4 KiB): it holds the table, which every
    # input shares, so whatever the merge reads of it first fails its checksum.
    segment = max((repository / "segments").iterdir(), key=lambda p: p.stat().st_size)
    data = bytearray(segment.read_bytes())
    for at in range(2048, len(data), 4096):
        data[at] ^= 0xFF
    segment.write_bytes(bytes(data))
    # A new instance, so no block of the damaged data is still held in memory.
    fresh = connect(repository)
    try:
        issues = scalar(fresh, "SELECT issues FROM differential_merge_branch_preflight('shop', 'main', 'side', 'main')")
        # The code heads the line once; the detail follows without the "[differential:...]" prefix.
        assert issues.startswith("corrupt_chunk: ") and "[differential:" not in issues, issues
        refused(fresh, "SELECT * FROM differential_merge_branch('shop', 'main', 'side', 'main', request_id => 'bad')",
                "corrupt_chunk")
        assert fresh.execute("SELECT state, last_error_code FROM differential_merge_requests('shop')").fetchall() == [
            ("pending", "corrupt_chunk")]
    finally:
        fresh.close()


def test_each_merge_phase_logs_its_duration(con):
    shop(con)
    con.execute("SET enable_logging = true")
    assert con.execute("SELECT merge_action FROM differential_merge_branch('shop', 'main', 'side', 'main', "
                       "request_id => 'logged')").fetchone() == ("merged",)
    events = con.execute("SELECT event, detail FROM duckdb_logs_parsed('differential') "
                         "WHERE event LIKE 'merge\\_%' ESCAPE '\\'").fetchall()
    phases = ["selection", "planning", "comparison", "application", "validation", "publication"]
    assert sorted(event for event, _ in events) == sorted("merge_" + phase for phase in phases), events
    assert {detail for _, detail in events} == {"database shop, request logged"}, events
