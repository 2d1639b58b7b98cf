"""What a token's scope and role let it learn and do: counts of other databases, the audit, main, new databases."""
import json

import anyio

from conftest import live_server, refused, seed, unchanged
from differential_server.api import create_app


def branch_with_changes(world, name="counted"):
    assert world.create("mia", name).status_code == 201
    assert world.sql("mia", "UPDATE items SET price = 5 WHERE id < 4", branch=name).json()["changed"]
    assert world.propose("mia", name).status_code == 200


def test_a_token_scoped_elsewhere_learns_no_counts(world):
    """Every route that carries change counts refuses a token scoped to another database, before any branch logic."""
    branch_with_changes(world)
    paths = ["/api/branch/shop/branches/counted/changes", "/api/branch/shop/branches/counted",
             "/api/branch/shop/branches?all=true", "/api/branch/shop/branches/counted/diff/items"]
    with unchanged(world):
        for path in paths:
            body = refused(world.call("outsider", "GET", path), 403, "token_scope")
            assert "inserted" not in json.dumps(body) and "updated" not in json.dumps(body)
        refused(world.propose("outsider", "counted"), 403, "token_scope")
    assert world.call("outsider", "GET", "/api/branch/databases").json() == ["other"]
    # The same token reads counts of its own database.
    world.create("outsider", "mine", db="other")
    world.sql("outsider", "DELETE FROM items WHERE id = 1", branch="mine", db="other")
    changes = world.call("outsider", "GET", "/api/branch/other/branches/mine/changes").json()
    assert [(t["table"], t["deleted"]) for t in changes["tables"]] == [("items", 1)]


def test_a_token_scoped_elsewhere_learns_no_counts_over_mcp(world):
    from test_mcp import agent_client, tool

    branch_with_changes(world)

    async def ask(url):
        async with agent_client(url, world.tokens["outsider"]) as client:
            return await tool(client, "branch_changes", database="shop", branch="counted")
    with live_server(create_app(world.service, sweep=False)) as url:
        status, body = anyio.run(ask, url)
    assert (status, body["code"]) == ("error", "token_scope") and "updated" not in json.dumps(body)


def test_a_scoped_admin_reads_only_its_databases_audit(world):
    world.mint("otheradmin", "admin", databases=["other"])
    branch_with_changes(world)
    world.create("otheradmin", "theirs", db="other")
    world.client.get("/api/auth/whoami", headers={"Authorization": "Bearer dft_nope"})  # a server-wide record
    records = world.call("otheradmin", "GET", "/api/auth/audit").json()
    assert records and {r["database"] for r in records} == {"other"}
    everything = world.call("rob", "GET", "/api/auth/audit").json()
    assert {"shop", "other", None} <= {r["database"] for r in everything}


def test_non_branch_only_tokens_write_main_as_the_spec_has_it(world):
    """The spec's gate is --branch-only: other tokens write main like any SQL client, snapshotted as themselves."""
    response = world.sql("max", "UPDATE items SET price = 7 WHERE id = 1")
    assert response.status_code == 200 and response.json()["changed"], response.text
    snapshot = response.json()["snapshot_id"]
    author = world.service.engine.cursor().execute(
        "SELECT author, branch_name FROM differential_snapshots('shop') WHERE snapshot_id = ?", [snapshot]).fetchone()
    assert author == ("max", "main")
    with unchanged(world):
        refused(world.sql("agent", "UPDATE items SET price = 8 WHERE id = 1"), 403, "write_requires_branch")
        refused(world.sql("adminagent", "UPDATE items SET price = 8 WHERE id = 1"), 403, "write_requires_branch")
        refused(world.sql("outsider", "UPDATE items SET price = 8 WHERE id = 1"), 403, "token_scope")
    assert world.rows("SELECT price FROM items WHERE id = 1") == [[7]]


def test_a_database_created_after_start_is_served(world):
    refused(world.call("alice", "GET", "/api/branch/late/branches"), 404, "database_not_found")
    seed(world.repository, ("late",))   # another DuckDB on the repository, while the server runs
    assert "late" in world.call("alice", "GET", "/api/branch/databases").json()
    assert world.create("mia", "fresh", db="late").status_code == 201
    assert world.sql("mia", "UPDATE items SET price = 1 WHERE id = 2", branch="fresh", db="late").json()["changed"]
    pid = world.propose("mia", "fresh", db="late").json()["merge"]["id"]
    merged = world.call("rob", "POST", "/api/branch/late/branches/fresh/merge", json={"proposal_id": pid})
    assert merged.status_code == 200, merged.text
    assert world.rows("SELECT price FROM items WHERE id = 2", db="late") == [[1]]


def test_a_database_created_after_start_is_found_without_listing(world):
    seed(world.repository, ("later",))
    assert world.create("mia", "direct", db="later").status_code == 201
