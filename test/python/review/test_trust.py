"""The trust boundary between an agent's SQL and what only the server may do: history's stamps, other databases,
table conflicts, main's own branch, token administration; and merges that keep working after a --key merge."""
import json
import pathlib
import textwrap

from conftest import refused, unchanged
from differential_testing import run_python


def token_id(world, who):
    return world.tokens[who].split("_")[1]


def snapshots(world, db="shop"):
    return world.service.engine.cursor().execute(
        "SELECT snapshot_id, snapshot_name, author, commit_message, branch_name FROM differential_snapshots(?)"
        " ORDER BY 1", [db]).fetchall()


def test_an_agent_cannot_forge_the_merge_stamp_and_the_merge_tags_main_as_the_approver(world):
    assert world.create("agent", "work").status_code == 201
    assert world.sql("agent", "UPDATE items SET price = 5 WHERE id = 1", branch="work").json()["changed"]
    forged = ("CALL differential_create_snapshot('shop', name => 'merge-work-1', author => 'rob',"
              " message => 'merge of branch work (merge 1) proposed by agent, approved by rob')")
    with unchanged(world):
        body = refused(world.sql("agent", forged, branch="work"), 403, "function_not_allowed")
    assert "[differential:function_not_allowed]" in body["detail"]
    assert not any(s[1] == "merge-work-1" or s[2] == "rob" for s in snapshots(world))
    pid = world.propose("agent", "work").json()["merge"]["id"]
    assert pid == 1  # the id the agent guessed for its forged tag
    merged = world.merge("rob", "work", pid)
    assert merged.status_code == 200, merged.text
    merge = merged.json()["merge"]
    assert merge["merge_action"] == "fast_forward" and merge["tag"] == "merge-work-1"
    tag = [s for s in snapshots(world) if s[0] == merge["snapshot_id"]]
    assert len(tag) == 1 and tag[0][1:3] == ("merge-work-1", "rob") and tag[0][4] == "main", tag
    assert all(part in tag[0][3] for part in ("branch work", "merge 1", "proposed by agent", "approved by rob"))
    assert merge["snapshot_id"] != merge["merge_snapshot"]
    assert world.service.engine.main_head("shop") == merge["snapshot_id"]


def test_branch_writes_are_snapshotted_by_the_server_as_the_writer(world):
    assert world.create("agent", "work").status_code == 201
    written = world.sql("agent", "INSERT INTO items VALUES (500, 'new', 1, 'sku-500')", branch="work").json()
    row = [s for s in snapshots(world) if s[0] == written["snapshot_id"]]
    assert row and row[0][1] is None and row[0][2] == "agent" and row[0][4] == "work", row
    assert world.rows("SELECT count(*) FROM items WHERE id = 500", branch="work") == [[1]]


def test_merge_status_in_a_session_shows_no_other_databases_activity(tmp_path):
    """`other`'s user runs changes (a merge preview, held 3 s at its comparison) while the agent of `shop` asks."""
    review = pathlib.Path(__file__).resolve().parent
    code = textwrap.dedent(f"""
        import json, sys, threading, time
        sys.path.insert(0, {str(review)!r})
        from conftest import World
        world = World(__import__("pathlib").Path({str(tmp_path / "repo")!r}))
        assert world.create("outsider", "busy", db="other").status_code == 201
        assert world.sql("outsider", "UPDATE items SET price = 0 WHERE id = 1", branch="busy", db="other").json()["changed"]
        assert world.create("agent", "work").status_code == 201
        thread = threading.Thread(target=lambda: world.call("outsider", "GET", "/api/branch/other/branches/busy/changes"))
        thread.start()
        status = "SELECT DISTINCT database_name FROM differential_merge_status()"
        seen, answers = [], []
        deadline = time.time() + 60
        while not seen and time.time() < deadline:
            seen = world.service.engine.cursor().execute(status).fetchall()
            time.sleep(0.02)
        for branch in ("work", None):
            answers.append(world.sql("agent", status, branch=branch).json())
        still = world.service.engine.cursor().execute(status).fetchall()
        thread.join()
        world.close()
        print(json.dumps({{"seen": seen, "still": still, "answers": answers}}))
    """)
    result = json.loads(run_python(code, timeout=300, env={"DIFFERENTIAL_PAUSE_POINT": "merge.comparison:3000"})
                        .splitlines()[-1])
    # The preview of `other` was running before and after the agent's reads, and the agent saw none of it.
    assert result["seen"] == [["other"]] and result["still"] == [["other"]], result
    assert [a["rows"] for a in result["answers"]] == [[], []], result


def scratch_dropped_on_main_while_a_branch_updates_it(world):
    assert world.sql("alice", "CREATE TABLE scratch (id INTEGER PRIMARY KEY, v INTEGER);"
                              " INSERT INTO scratch VALUES (1, 1), (2, 2)").json()["changed"]
    assert world.create("agent", "edit").status_code == 201
    assert world.create("mia", "dropper").status_code == 201
    assert world.sql("mia", "DROP TABLE scratch", branch="dropper").json()["changed"]
    pid = world.propose("mia", "dropper").json()["merge"]["id"]
    assert world.merge("rob", "dropper", pid).status_code == 200
    assert world.sql("agent", "UPDATE scratch SET v = 9 WHERE id = 1", branch="edit").json()["changed"]


def test_a_table_main_dropped_while_the_branch_updated_it_is_a_table_conflict(world):
    scratch_dropped_on_main_while_a_branch_updates_it(world)
    changes = world.call("agent", "GET", "/api/branch/shop/branches/edit/changes").json()
    assert [(t["table"], t["change"], t["updated"]) for t in changes["tables"]] == [("scratch", "modified", 1)]
    assert changes["table_conflicts"] == [{"table": "scratch", "reason": "main dropped the table"}]
    for policy in (None, "branch", "main"):
        proposal = world.propose("agent", "edit", on_conflict=policy)
        assert proposal.status_code == 200, proposal.text
        with unchanged(world):
            body = refused(world.merge("rob", "edit", proposal.json()["merge"]["id"]), 409, "merge_conflict")
        assert body["table_conflicts"] == [{"table": "scratch", "reason": "main dropped the table"}]


def test_merges_keep_working_after_a_key_merge(world):
    world.create("mia", "keyed")
    world.sql("mia", "INSERT INTO items VALUES (210, 'branch row', 1, 'sku-k')", branch="keyed")
    world.sql("alice", "INSERT INTO items VALUES (310, 'main row', 2, 'sku-k')")
    pid = world.propose("mia", "keyed", keys=["main.items=sku"], on_conflict="main").json()["merge"]["id"]
    merged = world.merge("rob", "keyed", pid)
    assert merged.status_code == 200, merged.text
    assert world.rows("SELECT id FROM items WHERE sku = 'sku-k'") == [[310]]
    for round_ in range(3):
        name = f"later{round_}"
        assert world.create("mia", name).status_code == 201
        assert world.sql("mia", f"UPDATE customers SET city = 'c{round_}' WHERE id = 1", branch=name).json()["changed"]
        later = world.propose("mia", name).json()["merge"]["id"]
        answer = world.merge("rob", name, later)
        assert answer.status_code == 200, answer.text
        assert world.rows("SELECT city FROM customers WHERE id = 1") == [[f"c{round_}"]]
    assert world.rows("SELECT id FROM items WHERE sku = 'sku-k'") == [[310]]


def test_a_branch_named_main_is_refused_with_a_documented_code(world):
    with unchanged(world):
        body = refused(world.create("agent", "main"), 400, "invalid_branch_name")
        refused(world.create("alice", "main"), 400, "invalid_branch_name")
    assert "main" in body["message"]
    assert world.service.engine.branch_head("shop", "main") is not None
    assert world.rows("SELECT count(*) FROM items") == [[20]]


def test_a_scoped_admin_administers_only_tokens_within_its_scope(world):
    world.mint("shopadmin", "admin", databases=["shop"])
    listed = {t["id"] for t in world.call("shopadmin", "GET", "/api/auth/tokens").json()}
    assert token_id(world, "agent") in listed and token_id(world, "adminagent") in listed
    assert token_id(world, "shopadmin") in listed
    # Scoped to `other` only, or to every database: outside `shop`'s scope.
    for outside in ("outsider", "rob", "alice", "mia"):
        assert token_id(world, outside) not in listed
    with unchanged(world):
        for outside in ("outsider", "rob"):
            refused(world.call("shopadmin", "DELETE", f"/api/auth/tokens/{token_id(world, outside)}"), 404,
                    "token_not_found")
    assert world.call("outsider", "GET", "/api/auth/whoami").status_code == 200
    assert world.call("shopadmin", "DELETE", f"/api/auth/tokens/{token_id(world, 'agent')}").status_code == 200
    refused(world.call("agent", "GET", "/api/auth/whoami"), 401, "unauthenticated")
    # An unscoped admin still administers every token.
    everything = {t["id"] for t in world.call("rob", "GET", "/api/auth/tokens").json()}
    assert {token_id(world, w) for w in ("outsider", "alice", "shopadmin")} <= everything
