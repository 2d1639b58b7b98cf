"""The reviewer's endpoints: the inbox across databases, main's history, a branch's timeline and the merge preview,
each scoped by the token exactly as the branch endpoints are."""
from conftest import refused


def _conflicting_proposal(world):
    assert world.create("agent", "fix").status_code == 201
    assert world.sql("agent", "UPDATE items SET price = 999, name = 'renamed' WHERE id = 3",
                     branch="fix").status_code == 200
    assert world.sql("agent", "INSERT INTO items VALUES (77, 'new', 7, 'sku-77')", branch="fix").status_code == 200
    assert world.sql("alice", "UPDATE items SET price = 555 WHERE id = 3").status_code == 200
    reply = world.propose("agent", "fix")
    assert reply.status_code == 200, reply.text
    return reply.json()["merge"]["id"]


def test_inbox_lists_open_proposals_oldest_first_and_expiring_branches_of_readable_databases_only(world):
    first = _conflicting_proposal(world)
    world.now += 60
    assert world.create("alice", "later", db="other").status_code == 201
    assert world.sql("alice", "DELETE FROM customers WHERE id = 2", branch="later", db="other").status_code == 200
    second = world.propose("alice", "later", db="other").json()["merge"]["id"]
    assert world.create("mia", "soon", ttl_hours=2).status_code == 201
    assert world.create("mia", "far", ttl_hours=100).status_code == 201
    world.now += 30

    inbox = world.call("rob", "GET", "/api/branch/inbox").json()
    assert [(p["id"], p["database"], p["branch"], p["proposer"]) for p in inbox["proposals"]] == [
        (first, "shop", "fix", "agent"), (second, "other", "later", "alice")]
    fix = inbox["proposals"][0]
    assert (fix["inserted"], fix["updated"], fix["deleted"], fix["conflicts"]) == (1, 1, 0, 1)
    assert fix["age_seconds"] == 90
    assert inbox["proposals"][1]["deleted"] == 1 and inbox["proposals"][1]["conflicts"] == 0
    # fix and later expire at the default 168 hours, far at 100: only soon is within the day.
    assert [(b["database"], b["branch"], b["owner"]) for b in inbox["expiring"]] == [("shop", "soon", "mia")]
    wide = world.call("rob", "GET", "/api/branch/inbox?expiring_hours=150").json()["expiring"]
    assert [b["branch"] for b in wide] == ["soon", "far"]

    # A second token scoped to the other database never sees shop: not its proposals, not its branches.
    outsider = world.call("outsider", "GET", "/api/branch/inbox?expiring_hours=1000").json()
    assert [p["id"] for p in outsider["proposals"]] == [second]
    assert {b["database"] for b in outsider["expiring"]} == {"other"}
    agent = world.call("agent", "GET", "/api/branch/inbox").json()
    assert [p["id"] for p in agent["proposals"]] == [first]

    # A merged proposal leaves the inbox.
    assert world.merge("rob", "later", second, db="other").status_code == 200
    assert [p["id"] for p in world.call("rob", "GET", "/api/branch/inbox").json()["proposals"]] == [first]


def test_history_timeline_and_preview(world):
    proposal = _conflicting_proposal(world)
    history = world.call("mia", "GET", "/api/branch/shop/history").json()
    assert [(h["author"], h["message"]) for h in history[:1]] == [("alice", "write on main by alice")]
    assert history[-1]["tag"] == "seed"
    assert len(world.call("mia", "GET", "/api/branch/shop/history?limit=1").json()) == 1

    preview = world.call("rob", "GET", "/api/branch/shop/branches/fix/preview").json()
    assert preview["open_proposal"] == proposal
    [conflict] = preview["conflicts"]
    assert (conflict["kind"], conflict["key"], conflict["columns"]) == ("cell", {"id": "3"}, ["price"])
    assert (conflict["fork"]["price"], conflict["main"]["price"], conflict["branch"]["price"]) == (30, 555, 999)
    # Either way the branch's rename, which conflicts with nothing, merges.
    assert conflict["keeps"]["main"] == {"id": 3, "name": "renamed", "price": 555, "sku": "sku-3"}
    assert conflict["keeps"]["branch"] == {"id": 3, "name": "renamed", "price": 999, "sku": "sku-3"}
    assert preview["refusals"] == {"refuse": "merge_conflict", "main": None, "branch": None}
    refusal = refused(world.merge("rob", "fix", proposal), 409, "merge_conflict")
    assert "propose again with on_conflict" in refusal["message"]

    events = world.call("rob", "GET", "/api/branch/shop/branches/fix/timeline").json()["events"]
    assert [(e["principal"], e["action"], e["outcome"]) for e in events] == [
        ("agent", "branch.create", "ok"), ("agent", "branch.write", "ok"), ("agent", "branch.write", "ok"),
        ("agent", "branch.propose", "ok"), ("rob", "branch.merge", "refused")]
    assert events[-1]["code"] == "merge_conflict"

    world.propose("agent", "fix", on_conflict="branch")
    merged = world.merge("rob", "fix", proposal + 1).json()["merge"]
    top = world.call("rob", "GET", "/api/branch/shop/history").json()[0]
    assert (top["snapshot_id"], top["tag"], top["author"]) == (merged["snapshot_id"], merged["tag"], "rob")
    assert "approved by rob" in top["message"]
    timeline = world.call("rob", "GET", "/api/branch/shop/branches/fix/timeline").json()
    assert timeline["state"] == "merged" and timeline["events"][-1]["action"] == "branch.merge"
    refused(world.call("rob", "GET", "/api/branch/shop/branches/fix/preview"), 404, "branch_not_found")


def test_a_token_scoped_elsewhere_reads_none_of_it(world):
    _conflicting_proposal(world)
    for path in ("/api/branch/shop/history", "/api/branch/shop/branches/fix/timeline",
                 "/api/branch/shop/branches/fix/preview"):
        refused(world.call("outsider", "GET", path), 403, "token_scope")
        refused(world.call(None, "GET", path), 401, "unauthenticated")
    refused(world.call(None, "GET", "/api/branch/inbox"), 401, "unauthenticated")
    refused(world.call("rob", "GET", "/api/branch/nope/history"), 404, "database_not_found")
