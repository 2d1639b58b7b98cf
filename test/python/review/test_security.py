"""Hostile callers: a branch-only token never changes main, tokens are only stored hashed, refusals change nothing."""
import logging
import pathlib

import pytest

from conftest import refused, unchanged

MAIN_WRITES = [
    "INSERT INTO items VALUES (999, 'x', 1, 'y')",
    "UPDATE items SET price = 0",
    "DELETE FROM customers",
    "DROP TABLE items",
    "CREATE TABLE evil (id INTEGER)",
    "SELECT 1; DELETE FROM items",
    "BEGIN; DELETE FROM items; COMMIT",
]

TRICKS = [
    "ATTACH 'differential:shop' AS again (BRANCH 'main')",
    "ATTACH '{outside}/x.duckdb' AS x",
    "COPY items TO '{outside}/items.csv'",
    "EXPORT DATABASE '{outside}/export'",
    "INSTALL httpfs",
    "LOAD httpfs",
    "LOAD '{elsewhere}/evil.duckdb_extension'",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "SET differential_repository = '{outside}'",
    "RESET differential_repository",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM differential_merge_branch('shop', 'main', 'work', 'main')",
    "SELECT * FROM differential_drop_branch('shop', 'work')",
    "SELECT * FROM differential_expire_snapshots('shop', older_than => INTERVAL 0 SECONDS)",
    "SELECT * FROM differential_restore('shop', 1)",
    "USE memory; DETACH {main}; ATTACH 'differential:shop' AS {main}",
]


@pytest.fixture
def agent_world(world):
    assert world.create("agent", "work").status_code == 201
    assert world.sql("agent", "UPDATE items SET price = 1 WHERE id = 1", branch="work").json()["changed"]
    return world


@pytest.mark.parametrize("statement", MAIN_WRITES)
def test_branch_only_token_cannot_write_main_over_rest(agent_world, statement):
    with unchanged(agent_world):
        refused(agent_world.sql("agent", statement), 403, "write_requires_branch")


@pytest.mark.parametrize("statement", ["DELETE FROM shop_main.items", "UPDATE shop_main.items SET price = 0",
                                       "USE shop_main; DELETE FROM items", "CREATE TABLE shop_main.evil (i INT)"])
def test_branch_session_reaches_main_read_only(agent_world, statement):
    with unchanged(agent_world):
        refused(agent_world.sql("agent", statement, branch="work"), 403, "write_requires_branch")
    assert agent_world.rows("SELECT count(*) FROM shop_main.items", branch="work") == [[20]]


@pytest.mark.parametrize("trick", TRICKS)
@pytest.mark.parametrize("branch", [None, "work"])
def test_tricks_that_reach_outside_are_refused(agent_world, tmp_path, trick, branch):
    from differential_testing import EXTENSION
    outside, elsewhere = tmp_path / "outside", tmp_path / "elsewhere"
    outside.mkdir()
    elsewhere.mkdir()
    # A loadable file of another name: refused to load for being new, not for being unreadable.
    (elsewhere / "evil.duckdb_extension").write_bytes(EXTENSION.read_bytes())
    statement = trick.format(outside=outside, elsewhere=elsewhere, main="shop_main" if branch else "shop")
    with unchanged(agent_world):
        response = agent_world.sql("agent", statement, branch=branch)
        assert response.status_code == 403, response.text
        assert response.json()["code"] in ("external_access_denied", "write_requires_branch", "statement_not_allowed",
                                           "function_not_allowed"), response.text
    assert list(outside.iterdir()) == []


def test_proposer_cannot_merge_even_as_admin(world):
    world.create("alice", "mine")
    world.sql("alice", "UPDATE items SET price = 5 WHERE id = 2", branch="mine")
    pid = world.propose("alice", "mine").json()["merge"]["id"]
    with unchanged(world):
        refused(world.merge("alice", "mine", pid), 403, "self_merge_forbidden")


def test_dead_and_forged_tokens_are_refused_before_any_branch_logic(world):
    from differential_server import tokens
    principal = tokens.ensure_principal(world.service.state, "temp", "admin")
    token_id, expiring = tokens.mint(world.service.state, principal, "temp", ttl_hours=1, now=world.now)
    revoked_id, revoked = tokens.mint(world.service.state, principal, "temp")
    child = world.call("rob", "POST", "/api/auth/tokens", json={"name": "child"})
    assert child.status_code == 201
    assert world.call("rob", "DELETE", f"/api/auth/tokens/{revoked_id}").status_code == 200
    good = world.tokens["rob"]
    forged = [good[:-1] + ("A" if good[-1] != "A" else "B"), good.replace(good[4:20], "0" * 16), "dft_x", good + "x",
              "Bearer", ""]
    world.now += 2 * 3600
    with unchanged(world):
        for text in forged + [expiring, revoked]:
            response = world.client.post("/api/branch/shop/branches", json={"name": "x"},
                                         headers={"Authorization": f"Bearer {text}"})
            refused(response, 401, "unauthenticated")
            assert text not in response.text or len(text) < 8
        refused(world.client.post("/api/branch/shop/branches", json={"name": "x"}), 401, "unauthenticated")


def test_child_tokens_inherit_branch_only_and_scope(world):
    response = world.call("agent", "POST", "/api/auth/tokens", json={"name": "sub", "databases": ["shop"]})
    assert response.status_code == 201, response.text
    world.tokens["sub"] = response.json()["token"]
    me = world.call("sub", "GET", "/api/auth/whoami").json()
    assert me["branch_only"] is True and me["databases"] == ["shop"] and me["role"] == "member"
    refused(world.call("agent", "POST", "/api/auth/tokens", json={"name": "wide", "databases": ["other"]}),
            403, "token_scope")
    with unchanged(world):
        refused(world.sql("sub", "DELETE FROM items"), 403, "write_requires_branch")


def test_tokens_are_hashed_on_disk_and_absent_from_logs_and_errors(world, caplog):
    caplog.set_level(logging.DEBUG)
    world.create("mia", "logged")
    world.sql("mia", "UPDATE items SET price = 1 WHERE id = 1", branch="logged")
    refused(world.merge("mia", "logged", 1), 403, "admin_required")
    bad = world.tokens["mia"][:-2] + "zz"
    body = world.client.get("/api/auth/whoami", headers={"Authorization": f"Bearer {bad}"}).text
    files = [p for p in pathlib.Path(world.repository).rglob("*") if p.is_file()]
    assert any(p.name == "review-server.sqlite" for p in files)
    for name, token in world.tokens.items():
        secret = token.split("_", 2)[2]
        for path in files:
            assert secret.encode() not in path.read_bytes(), f"{name}'s token in {path}"
        assert secret not in caplog.text
        assert secret not in body
    assert bad.split("_", 2)[2] not in body
    audit = world.call("rob", "GET", "/api/auth/audit").json()
    assert any(a["action"] == "auth.refused" for a in audit)
    assert any(a["action"] == "branch.merge" and a["code"] == "admin_required" for a in audit)


def test_a_runaway_statement_is_interrupted_and_changes_nothing(tmp_path):
    from conftest import World
    w = World(tmp_path / "repo", sql_timeout_sec=1)
    try:
        w.create("agent", "slow")
        with unchanged(w):
            body = refused(w.sql("agent", "SELECT count(*) FROM range(1000000000000) a, range(1000) b", branch="slow"),
                           408, "sql_timeout")
        assert "interrupted" in body["message"]
        assert w.sql("agent", "SELECT 42", branch="slow").json()["rows"] == [[42]]  # the branch is usable again
    finally:
        w.close()
