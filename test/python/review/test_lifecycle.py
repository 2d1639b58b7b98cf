"""The spec's lifecycle table, row by row: by the role it names, and refused to one role it does not."""
import pytest

from conftest import refused, unchanged


def branch_with_change(world, owner="mia", name="fix"):
    assert world.create(owner, name).status_code == 201
    response = world.sql(owner, "UPDATE items SET price = 999 WHERE id = 3", branch=name)
    assert response.status_code == 200 and response.json()["changed"], response.text
    return name


def test_create_by_anyone_with_access_at_mains_head(world):
    head = world.service.engine.main_head("shop")
    response = world.create("mia", "feature-x", ttl_hours=24)
    assert response.status_code == 201, response.text
    body = response.json()
    assert (body["name"], body["owner"], body["state"]) == ("feature-x", "mia", "live")
    assert body["fork_snapshot"] >= head
    assert body["expires_at"] == pytest.approx(world.now + 24 * 3600)
    assert world.rows("SELECT count(*) FROM items", branch="feature-x") == [[20]]


def test_create_refused_outside_the_tokens_database_scope(world):
    with unchanged(world):
        refused(world.create("outsider", "sneaky"), 403, "token_scope")
        refused(world.create(None, "anonymous"), 401, "unauthenticated")


def test_create_snapshots_main_first_when_it_has_unsnapshotted_changes(tmp_path):
    """Main written before the server started (so never snapshotted): the first fork snapshots it first."""
    from conftest import World, seed
    from differential_testing import connect
    repository = tmp_path / "repo"
    seed(repository)
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("INSERT INTO shop.items VALUES (100, 'offline', 1, 'sku-100')")
    con.execute("DETACH shop")
    con.close()
    w = World(repository, seeded=True)
    try:
        before = w.service.engine.main_head("shop")
        assert w.create("mia", "after-write").status_code == 201
        assert w.service.engine.main_head("shop") == before + 1
        assert w.rows("SELECT name FROM items WHERE id = 100", branch="after-write") == [["offline"]]
        assert w.create("mia", "second").status_code == 201
        assert w.service.engine.main_head("shop") == before + 1  # clean now: no second snapshot
    finally:
        w.close()


def test_writes_on_main_are_snapshotted_as_the_writer(world):
    before = world.service.engine.main_head("shop")
    response = world.sql("mia", "INSERT INTO items VALUES (100, 'new', 1, 'sku-100')")
    assert response.json()["changed"] and response.json()["snapshot_id"] == before + 1
    author = world.service.engine.cursor().execute(
        "SELECT author FROM differential_snapshots('shop') WHERE snapshot_id = ?", [before + 1]).fetchone()[0]
    assert author == "mia"
    assert world.sql("mia", "SELECT count(*) FROM items").json()["snapshot_id"] is None


def test_names_caps_and_ttl_rules(world):
    world.sql("alice", "UPDATE items SET price = 1 WHERE id = 1")  # main's head is now snapshot 2
    with unchanged(world):
        for bad in ["Upper", "1digit", "a" * 49, "with space", "dot.ted", ""]:
            refused(world.create("mia", bad), 400, "invalid_branch_name")
        refused(world.create("mia", "too-long-ttl", ttl_hours=169), 400, "invalid_ttl")
        refused(world.create("mia", "forever", ttl_hours=0), 400, "invalid_ttl")
        refused(world.create("mia", "old-fork", from_snapshot=1), 400, "from_snapshot_refused")
        refused(world.create("mia", "nested", parent="feature"), 400, "branch_of_branch")
    assert world.create("mia", "at-head", from_snapshot=world.service.engine.main_head("shop")).status_code == 201
    assert world.create("alice", "admin-forever", ttl_hours=0).json()["expires_at"] is None
    refused(world.create("mia", "admin-forever"), 409, "branch_exists")


def test_cap_per_database(tmp_path):
    from conftest import World
    w = World(tmp_path / "repo", max_per_database=2)
    try:
        assert w.create("mia", "one").status_code == 201
        assert w.create("mia", "two").status_code == 201
        with unchanged(w):
            refused(w.create("mia", "three"), 409, "branch_limit")
        assert w.call("mia", "DELETE", "/api/branch/shop/branches/one").status_code == 200
        assert w.create("mia", "one").status_code == 201  # the name and the slot are free again
    finally:
        w.close()


def test_write_by_the_principal_on_the_branch_and_main_untouched(world):
    branch_with_change(world)
    assert world.rows("SELECT price FROM items WHERE id = 3", branch="fix") == [[999]]
    assert world.rows("SELECT price FROM items WHERE id = 3") == [[30]]


def test_write_on_main_refused_to_a_branch_only_token(world):
    with unchanged(world):
        refused(world.sql("agent", "UPDATE items SET price = 0"), 403, "write_requires_branch")
    assert world.sql("agent", "SELECT count(*) FROM items").json()["rows"] == [[20]]


def test_changes_and_diff_by_anyone_with_access(world):
    branch_with_change(world)
    world.sql("mia", "INSERT INTO items VALUES (50, 'fifty', 500, 'sku-50')", branch="fix")
    world.sql("mia", "DELETE FROM customers WHERE id = 2", branch="fix")
    world.sql("mia", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body VARCHAR)", branch="fix")
    world.sql("mia", "INSERT INTO notes VALUES (1, 'a'), (2, 'b')", branch="fix")
    response = world.call("max", "GET", "/api/branch/shop/branches/fix/changes")
    assert response.status_code == 200, response.text
    tables = {t["table"]: t for t in response.json()["tables"]}
    assert (tables["items"]["change"], tables["items"]["inserted"], tables["items"]["updated"],
            tables["items"]["deleted"]) == ("modified", 1, 1, 0)
    assert (tables["customers"]["change"], tables["customers"]["deleted"]) == ("modified", 1)
    assert (tables["notes"]["change"], tables["notes"]["inserted"]) == ("created", 2)
    page = world.call("max", "GET", "/api/branch/shop/branches/fix/diff/items?limit=1").json()
    assert page["total"] == 2 and page["next_offset"] == 1
    assert page["rows"][0]["op"] == "update" and page["rows"][0]["changed"] == ["price"]
    assert page["rows"][0]["before"]["price"] == 30 and page["rows"][0]["after"]["price"] == 999
    second = world.call("max", "GET", "/api/branch/shop/branches/fix/diff/items?offset=1&limit=1").json()
    assert second["rows"][0]["op"] == "insert" and second["rows"][0]["key"] == {"id": 50}
    assert second["next_offset"] is None


def test_changes_refused_without_access(world):
    branch_with_change(world)
    with unchanged(world):
        refused(world.call("outsider", "GET", "/api/branch/shop/branches/fix/changes"), 403, "token_scope")
        refused(world.call(None, "GET", "/api/branch/shop/branches/fix/diff/items"), 401, "unauthenticated")


def test_propose_by_owner_and_by_admin_and_again_replaces(world):
    branch_with_change(world)
    first = world.propose("mia", "fix")
    assert first.status_code == 200, first.text
    merge = first.json()["merge"]
    assert merge["id"] > 0 and merge["proposer"] == "mia" and merge["policy"] is None
    second = world.propose("alice", "fix", on_conflict="main")
    assert second.status_code == 200
    shown = world.call("max", "GET", "/api/branch/shop/branches/fix").json()
    assert [(p["id"], p["state"]) for p in shown["proposals"]] == [(merge["id"], "replaced"),
                                                                    (second.json()["merge"]["id"], "open")]
    assert shown["open_proposal"] == second.json()["merge"]["id"]


def test_propose_refused_to_another_member(world):
    branch_with_change(world)
    with unchanged(world):
        refused(world.propose("max", "fix"), 403, "not_owner")


def test_merge_by_an_admin_other_than_the_proposer(world):
    branch_with_change(world)
    pid = world.propose("mia", "fix").json()["merge"]["id"]
    response = world.merge("rob", "fix", pid)
    assert response.status_code == 200, response.text
    merge = response.json()["merge"]
    assert merge["tag"] == f"merge-fix-{pid}" and merge["approver"] == "rob" and merge["proposer"] == "mia"
    assert world.rows("SELECT price FROM items WHERE id = 3") == [[999]]
    snap = world.service.engine.cursor().execute(
        "SELECT author, commit_message FROM differential_snapshots('shop') WHERE snapshot_name = ?",
        [merge["tag"]]).fetchone()
    assert snap[0] == "rob" and "fix" in snap[1] and f"merge {pid}" in snap[1] and "mia" in snap[1]
    assert world.service.engine.main_head("shop") == merge["snapshot_id"]
    shown = world.call("mia", "GET", "/api/branch/shop/branches/fix").json()
    assert shown["state"] == "merged" and shown["proposals"][-1]["approver"] == "rob"
    branches = [r[0] for r in world.service.engine.cursor().execute(
        "SELECT branch_name FROM differential_branches('shop')").fetchall()]
    assert "fix" not in branches
    refused(world.merge("alice", "fix", pid), 409, "already_merged")
    assert world.create("mia", "fix").status_code == 201  # the name is free again


def test_merge_refused_to_proposer_member_and_branch_only(world):
    branch_with_change(world, owner="alice")
    pid = world.propose("alice", "fix").json()["merge"]["id"]
    with unchanged(world):
        refused(world.merge("alice", "fix", pid), 403, "self_merge_forbidden")
        refused(world.merge("max", "fix", pid), 403, "admin_required")
        refused(world.merge("adminagent", "fix", pid), 403, "branch_only_token")
        refused(world.merge("rob", "fix", pid + 100), 404, "proposal_not_found")


def test_discard_by_owner_or_admin_keeps_the_row(world):
    branch_with_change(world)
    world.create("mia", "other")
    assert world.call("mia", "DELETE", "/api/branch/shop/branches/fix").status_code == 200
    assert world.call("rob", "DELETE", "/api/branch/shop/branches/other").status_code == 200
    listed = world.call("mia", "GET", "/api/branch/shop/branches?all=true").json()
    assert {(b["name"], b["state"], b["ended_by"]) for b in listed} == {("fix", "discarded", "mia"),
                                                                          ("other", "discarded", "rob")}
    assert world.call("mia", "GET", "/api/branch/shop/branches").json() == []
    assert world.rows("SELECT price FROM items WHERE id = 3") == [[30]]


def test_discard_refused_to_another_member(world):
    branch_with_change(world)
    with unchanged(world):
        refused(world.call("max", "DELETE", "/api/branch/shop/branches/fix"), 403, "not_owner")


def test_expiry_by_the_manager_sweep(world):
    world.create("mia", "short", ttl_hours=1)
    world.create("mia", "long", ttl_hours=48)
    assert world.service.sweep() == []
    world.now += 2 * 3600
    assert world.service.sweep() == [{"database": "shop", "name": "short"}]
    listed = {b["name"]: b for b in world.call("mia", "GET", "/api/branch/shop/branches?all=true").json()}
    assert listed["short"]["state"] == "expired" and listed["short"]["ended_by"] == "manager"
    assert listed["long"]["state"] == "live"
    audit = world.call("rob", "GET", "/api/auth/audit?action=branch.expire").json()
    assert [(a["principal"], a["branch"]) for a in audit] == [("manager", "short")]


def test_expiry_refused_to_a_member_asking_beyond_the_default(world):
    with unchanged(world):
        refused(world.create("mia", "eternal", ttl_hours=10000), 400, "invalid_ttl")


def test_kill_switch(tmp_path):
    from conftest import World
    w = World(tmp_path / "repo", enabled=False)
    try:
        with unchanged(w):
            refused(w.create("alice", "nope"), 503, "branching_disabled")
    finally:
        w.close()


def test_diff_as_an_arrow_stream_holds_every_page(world):
    import pyarrow as pa
    world.create("mia", "bulk")
    world.sql("mia", "UPDATE items SET price = price + 1 WHERE id <= 12", branch="bulk")
    world.sql("mia", "DELETE FROM items WHERE id = 20", branch="bulk")
    world.sql("mia", "INSERT INTO items VALUES (21, 'new', 1, 'sku-21')", branch="bulk")
    pages, offset = [], 0
    while offset is not None:
        page = world.call("max", "GET", f"/api/branch/shop/branches/bulk/diff/items?offset={offset}&limit=5").json()
        pages += page["rows"]
        offset = page["next_offset"]
    response = world.client.get("/api/branch/shop/branches/bulk/diff/items",
                                headers={**world.h("max"), "Accept": "application/vnd.apache.arrow.stream"})
    assert response.status_code == 200 and response.headers["content-type"] == "application/vnd.apache.arrow.stream"
    table = pa.ipc.open_stream(response.content).read_all()
    assert table.column_names == ["op", "key", "before", "after"]
    rows = table.to_pylist()
    assert [r["op"] for r in rows] == [p["op"] for p in pages] == ["update"] * 12 + ["delete", "insert"]
    assert [r["after"] for r in rows[:12]] == [p["after"] for p in pages[:12]]
    assert rows[12]["after"] is None and rows[13]["before"] is None and rows[13]["after"]["id"] == 21
    assert [r["key"] for r in rows] == [p["key"] for p in pages]
    with unchanged(world):
        refused(world.client.get("/api/branch/shop/branches/bulk/diff/items",
                                 headers={**world.h("outsider"), "Accept": "application/vnd.apache.arrow.stream"}),
                403, "token_scope")
