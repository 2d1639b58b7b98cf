"""The server's state file: numbered migrations applied once, in order, and a newer file refused."""
import sqlite3

import pytest

from differential_server.state import MIGRATIONS, State


def test_migrations_upgrade_an_older_file_and_keep_its_rows(tmp_path):
    path = tmp_path / "review-server.sqlite"
    con = sqlite3.connect(path)
    con.executescript(MIGRATIONS[0])
    con.execute("PRAGMA user_version = 1")
    con.execute("INSERT INTO principals (name, role, created_at) VALUES ('ann', 'admin', 0)")
    con.commit()
    con.close()
    state = State(path)
    assert state.one("PRAGMA user_version")[0] == len(MIGRATIONS) == 4
    assert [tuple(r) for r in state.read("SELECT name, role FROM principals")] == [("ann", "admin")]
    columns = [r[1] for r in state.read("PRAGMA table_info(proposals)")]
    assert "request_id" in columns and "nested" in columns and "base" in columns
    assert State(path).migrate() == len(MIGRATIONS)  # idempotent


def test_a_newer_state_file_is_refused(tmp_path):
    path = tmp_path / "review-server.sqlite"
    State(path)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    con.close()
    with pytest.raises(RuntimeError, match="newer than this server"):
        State(path)
