"""Merges re-decide against main's head: every 409/422 code of the spec, policies as recorded decisions."""
from conftest import refused, unchanged


def setup_conflict(world, branch="fix"):
    """The branch and main both change item 3's price, and the branch also renames item 4."""
    assert world.create("mia", branch).status_code == 201
    assert world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch=branch).json()["changed"]
    assert world.sql("mia", "UPDATE items SET name = 'renamed' WHERE id = 4", branch=branch).json()["changed"]
    assert world.sql("alice", "UPDATE items SET price = 1 WHERE id = 3").json()["changed"]


def test_row_conflict_without_policy_is_refused(world):
    setup_conflict(world)
    proposal = world.propose("mia", "fix").json()
    conflicts = proposal["changes"]["conflicts"]
    assert [(c["table"], c["kind"], c["key"], c["columns"]) for c in conflicts] == [
        ("items", "cell", {"id": "3"}, ["price"])]
    with unchanged(world):
        body = refused(world.merge("rob", "fix", proposal["merge"]["id"]), 409, "merge_conflict")
    assert body["conflicts"] == 1


def test_on_conflict_main_keeps_mains_cell_and_records_the_decision(world):
    setup_conflict(world)
    pid = world.propose("mia", "fix", on_conflict="main").json()["merge"]["id"]
    merged = world.merge("rob", "fix", pid)
    assert merged.status_code == 200, merged.text
    assert world.rows("SELECT price, name FROM items WHERE id IN (3, 4) ORDER BY id") == [[1, "item 3"],
                                                                                          [30 + 10, "renamed"]]
    decisions = world.service.engine.cursor().execute(
        "SELECT table_name, action, columns FROM differential_merge_resolutions('shop', ?)",
        [merged.json()["merge"]["request_id"]]).fetchall()
    assert decisions == [("items", "cells", {"price": "ours"})]


def test_on_conflict_branch_takes_the_branchs_cell(world):
    setup_conflict(world)
    pid = world.propose("mia", "fix", on_conflict="branch").json()["merge"]["id"]
    assert world.merge("rob", "fix", pid).status_code == 200
    assert world.rows("SELECT price FROM items WHERE id = 3") == [[999]]


def test_delete_update_under_each_policy(world):
    """The branch deletes a row main updated: main keeps it under `main`, the branch's delete wins under `branch`."""
    for policy, item, expected in (("main", 5, [[5, 77]]), ("branch", 6, [])):
        name = f"del-{policy}"
        world.create("mia", name)
        world.sql("mia", f"DELETE FROM items WHERE id = {item}", branch=name)
        world.sql("alice", f"UPDATE items SET price = 77 WHERE id = {item}")
        proposal = world.propose("mia", name, on_conflict=policy).json()
        assert [c["kind"] for c in proposal["changes"]["conflicts"]] == ["delete_update"]
        response = world.merge("rob", name, proposal["merge"]["id"])
        assert response.status_code == 200, response.text
        assert world.rows(f"SELECT id, price FROM items WHERE id = {item}") == expected


def test_main_moved_without_conflict_merges_both(world):
    world.create("mia", "fix")
    world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch="fix")
    pid = world.propose("mia", "fix").json()["merge"]["id"]
    world.sql("alice", "UPDATE items SET price = 7 WHERE id = 9")
    assert world.merge("rob", "fix", pid).status_code == 200
    assert world.rows("SELECT id, price FROM items WHERE id IN (3, 9) ORDER BY id") == [[3, 999], [9, 7]]


def test_conflicts_changed_when_main_made_new_conflicts(world):
    world.create("mia", "fix")
    world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch="fix")
    pid = world.propose("mia", "fix", on_conflict="branch").json()["merge"]["id"]
    world.sql("alice", "UPDATE items SET price = 1 WHERE id = 3")
    with unchanged(world):
        refused(world.merge("rob", "fix", pid), 409, "conflicts_changed")
    pid2 = world.propose("mia", "fix", on_conflict="branch").json()["merge"]["id"]
    assert world.merge("rob", "fix", pid2).status_code == 200


def test_proposal_stale_when_the_branch_moved(world):
    world.create("mia", "fix")
    world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch="fix")
    pid = world.propose("mia", "fix").json()["merge"]["id"]
    world.sql("mia", "UPDATE items SET price = 998 WHERE id = 3", branch="fix")
    with unchanged(world):
        refused(world.merge("rob", "fix", pid), 409, "proposal_stale")


def test_proposal_replaced_names_the_open_one(world):
    world.create("mia", "fix")
    world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch="fix")
    first = world.propose("mia", "fix").json()["merge"]["id"]
    second = world.propose("mia", "fix", on_conflict="main").json()["merge"]["id"]
    with unchanged(world):
        body = refused(world.merge("rob", "fix", first), 409, "proposal_replaced")
    assert body["open_proposal"] == second


def test_concurrent_write_when_expect_main_names_another_snapshot(world):
    world.create("mia", "fix")
    world.sql("mia", "UPDATE items SET price = 999 WHERE id = 3", branch="fix")
    pid = world.propose("mia", "fix").json()["merge"]["id"]
    head = world.service.engine.main_head("shop")
    with unchanged(world):
        body = refused(world.merge("rob", "fix", pid, expect_main=head - 1), 409, "concurrent_write")
    assert body["main_head"] == head
    assert world.merge("rob", "fix", pid, expect_main=head).status_code == 200


def test_nothing_to_merge(world):
    world.create("mia", "empty")
    pid = world.propose("mia", "empty").json()["merge"]["id"]
    with unchanged(world):
        refused(world.merge("rob", "empty", pid), 422, "nothing_to_merge")


def test_column_changes_are_merge_unsupported(world):
    world.create("mia", "ddl")
    assert world.sql("mia", "ALTER TABLE items ADD COLUMN color VARCHAR", branch="ddl").status_code == 200
    changes = world.call("mia", "GET", "/api/branch/shop/branches/ddl/changes").json()
    assert [(t["table"], t["change"]) for t in changes["tables"]] == [("items", "altered")]
    schema = world.call("mia", "GET", "/api/branch/shop/branches/ddl/schema-diff/items").json()
    assert schema["columns"] == [{"column": "color", "change": "added", "type": "VARCHAR"}]
    pid = world.propose("mia", "ddl").json()["merge"]["id"]
    with unchanged(world):
        refused(world.merge("rob", "ddl", pid), 422, "merge_unsupported")


def test_created_and_dropped_tables_merge(world):
    world.create("mia", "tables")
    world.sql("mia", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body VARCHAR)", branch="tables")
    world.sql("mia", "INSERT INTO notes VALUES (1, 'hello')", branch="tables")
    world.sql("mia", "DROP TABLE customers", branch="tables")
    changes = world.propose("mia", "tables").json()
    kinds = {t["table"]: (t["change"], t["inserted"], t["deleted"]) for t in changes["changes"]["tables"]}
    assert kinds == {"notes": ("created", 1, 0), "customers": ("dropped", 0, 3)}
    assert world.merge("rob", "tables", changes["merge"]["id"]).status_code == 200
    tables = [t["table"] for t in world.call("mia", "GET", "/api/branch/shop/tables").json()]
    assert tables == ["items", "notes"]


def test_keys_are_checked_and_matches_refuse_the_merge(world):
    world.create("mia", "keys")
    world.sql("mia", "INSERT INTO items VALUES (200, 'branch row', 1, 'sku-new')", branch="keys")
    world.sql("alice", "INSERT INTO items VALUES (300, 'main row', 2, 'sku-new')")
    with unchanged(world):
        refused(world.propose("mia", "keys", keys=["main.nope=id"]), 400, "invalid_key")
        refused(world.propose("mia", "keys", keys=["main.items=nope"]), 400, "invalid_key")
        refused(world.propose("mia", "keys", keys=["main.customers=id"]), 400, "invalid_key")
        refused(world.propose("mia", "keys", keys=["other.items=sku"]), 400, "invalid_key")
    proposal = world.propose("mia", "keys", keys=["main.items=sku"]).json()
    assert proposal["changes"]["key_matches"] == [
        {"table": "items", "kind": "key_match", "key": {"id": "200"}, "columns": ["sku"], "main_key": {"id": "300"},
         "values": {"sku": "sku-new"}}]
    with unchanged(world):
        refused(world.merge("rob", "keys", proposal["merge"]["id"]), 409, "merge_conflict")


def test_on_conflict_settles_key_matches(world):
    """Under `main` the branch's matching row is dropped, under `branch` main's matching row is replaced."""
    for policy in ("main", "branch"):
        name, sku = f"keys-{policy}", f"sku-{policy}"
        world.create("mia", name)
        offset = 10 if policy == "main" else 0
        world.sql("mia", f"INSERT INTO items VALUES ({200 + offset}, 'branch row', 1, '{sku}'),"
                         f" ({400 + offset}, 'other', 1, 'sku-unmatched-{policy}')", branch=name)
        world.sql("mia", f"UPDATE items SET name = 'touched' WHERE id = {7 + offset}", branch=name)
        world.sql("alice", f"INSERT INTO items VALUES ({300 + offset}, 'main row', 2, '{sku}')")
        proposal = world.propose("mia", name, keys=["main.items=sku"], on_conflict=policy).json()
        assert len(proposal["changes"]["key_matches"]) == 1
        merged = world.merge("rob", name, proposal["merge"]["id"])
        assert merged.status_code == 200, merged.text
        expected = [[310, "main row"]] if policy == "main" else [[200, "branch row"]]
        assert world.rows(f"SELECT id, name FROM items WHERE sku = '{sku}'") == expected
        # The rest of the branch merged as usual, and the tag holds the decision.
        assert world.rows(f"SELECT name FROM items WHERE id IN ({400 + offset}, {7 + offset}) ORDER BY id") == [
            ["touched"], ["other"]]
        assert world.service.engine.cursor().execute(
            f"SELECT count(*) FROM shop.items AT (VERSION => {merged.json()['merge']['snapshot_id']})"
            f" WHERE sku = '{sku}'").fetchone()[0] == 1


def test_key_match_main_made_after_the_proposal_is_conflicts_changed(world):
    world.create("mia", "late")
    world.sql("mia", "INSERT INTO items VALUES (250, 'branch row', 1, 'sku-late')", branch="late")
    pid = world.propose("mia", "late", keys=["main.items=sku"], on_conflict="main").json()["merge"]["id"]
    world.sql("alice", "INSERT INTO items VALUES (350, 'main row', 2, 'sku-late')")
    with unchanged(world):
        refused(world.merge("rob", "late", pid), 409, "conflicts_changed")


def setup_struct_edits(world, branch="prefs"):
    """Row 1: the branch changes settings.theme, main settings.lang. Row 2: both change settings.theme, and the
    branch also settings.size, main settings.lang."""
    assert world.sql("alice", "CREATE TABLE prefs (id INTEGER PRIMARY KEY, "
                              "settings STRUCT(theme VARCHAR, lang VARCHAR, size INTEGER))").status_code == 200
    assert world.sql("alice", "INSERT INTO prefs VALUES (1, {'theme': 'plain', 'lang': 'en', 'size': 1}), "
                              "(2, {'theme': 'plain', 'lang': 'en', 'size': 1})").status_code == 200
    assert world.create("mia", branch).status_code == 201
    for statement in ("UPDATE prefs SET settings = {'theme': 'light', 'lang': 'en', 'size': 1} WHERE id = 1",
                      "UPDATE prefs SET settings = {'theme': 'light', 'lang': 'en', 'size': 2} WHERE id = 2"):
        assert world.sql("mia", statement, branch=branch).json()["changed"]
    for statement in ("UPDATE prefs SET settings = {'theme': 'plain', 'lang': 'fr', 'size': 1} WHERE id = 1",
                      "UPDATE prefs SET settings = {'theme': 'dark', 'lang': 'fr', 'size': 1} WHERE id = 2"):
        assert world.sql("alice", statement).json()["changed"]


def test_nested_fields_merges_struct_fields_and_the_policy_decides_the_clashing_field(world):
    setup_struct_edits(world)
    whole = world.propose("mia", "prefs").json()["changes"]["conflicts"]
    assert [(c["key"], c["columns"]) for c in whole] == [({"id": "1"}, ["settings"]), ({"id": "2"}, ["settings"])]
    with unchanged(world):
        refused(world.propose("mia", "prefs", nested="deep"), 400, "invalid_request")
    proposal = world.propose("mia", "prefs", on_conflict="branch", nested="fields").json()
    assert proposal["merge"]["nested"] == "fields"
    assert [(c["key"], c["columns"]) for c in proposal["changes"]["conflicts"]] == [({"id": "2"}, ["settings.theme"])]
    preview = world.call("rob", "GET", "/api/branch/shop/branches/prefs/preview").json()
    assert preview["nested"] == "fields"
    [conflict] = preview["conflicts"]
    assert conflict["keeps"]["main"]["settings"] == {"theme": "dark", "lang": "fr", "size": 2}
    assert conflict["keeps"]["branch"]["settings"] == {"theme": "light", "lang": "fr", "size": 2}
    merged = world.merge("rob", "prefs", proposal["merge"]["id"])
    assert merged.status_code == 200, merged.text
    assert world.rows("SELECT id, settings.theme, settings.lang, settings.size FROM prefs ORDER BY id") == [
        [1, "light", "fr", 1], [2, "light", "fr", 2]]
    decisions = world.service.engine.cursor().execute(
        "SELECT table_name, action, columns FROM differential_merge_resolutions('shop', ?)",
        [merged.json()["merge"]["request_id"]]).fetchall()
    assert decisions == [("prefs", "cells", {"settings.theme": "theirs"})]


def test_the_base_option_reaches_the_preview_and_the_merge(world):
    """base='virtual' is recorded with the proposal and passed to the extension's preview and merge; on a history with
    one best common ancestor (every branch the server makes) it merges as the default does. Another word is
    refused with nothing changed."""
    setup_struct_edits(world)
    with unchanged(world):
        refused(world.propose("mia", "prefs", base="recursive"), 400, "invalid_request")
    proposal = world.propose("mia", "prefs", on_conflict="branch", base="virtual").json()
    assert (proposal["merge"]["base"], proposal["merge"]["nested"]) == ("virtual", "whole")
    assert [(c["key"], c["columns"]) for c in proposal["changes"]["conflicts"]] == [({"id": "1"}, ["settings"]),
                                                                                  ({"id": "2"}, ["settings"])]
    assert world.call("rob", "GET", "/api/branch/shop/branches/prefs/preview").json()["base"] == "virtual"
    merged = world.merge("rob", "prefs", proposal["merge"]["id"])
    assert merged.status_code == 200, merged.text
    assert world.rows("SELECT id, settings.theme, settings.lang FROM prefs ORDER BY id") == [
        [1, "light", "en"], [2, "light", "en"]]


def test_foreign_key_violations_under_each_policy(world):
    """Main deletes a client; the branch gives it two purchases. The violations are conflicts of the purchases; under
    `branch` the client comes back as the branch has it (one decision for both purchases), under `main` the branch's
    purchases referencing it do not land."""
    for statement in ("CREATE TABLE clients (id INTEGER PRIMARY KEY, name VARCHAR)",
                      "CREATE TABLE purchases (id INTEGER PRIMARY KEY, client_id INTEGER REFERENCES clients(id))",
                      "INSERT INTO clients VALUES (1, 'ada'), (2, 'bob'), (3, 'cy')"):
        response = world.sql("alice", statement)
        assert response.status_code == 200, response.text
    for policy, client, expected in (("branch", 2, [[20, "bob"], [21, "bob"]]), ("main", 3, [])):
        name = f"fk-{policy}"
        assert world.create("mia", name).status_code == 201
        inserted = world.sql("mia", f"INSERT INTO purchases VALUES ({client}0, {client}), ({client}1, {client})", branch=name)
        assert inserted.json().get("changed"), inserted.text
        deleted = world.sql("alice", f"DELETE FROM clients WHERE id = {client}")
        assert deleted.json().get("changed"), deleted.text
        proposal = world.propose("mia", name, on_conflict=policy).json()
        conflicts = proposal["changes"]["conflicts"]
        assert [(c["table"], c["kind"], c["key"], c["parent_table"], c["references"]) for c in conflicts] == [
            ("purchases", "foreign_key_violation", {"id": f"{client}{k}"}, "clients", {"main": False, "branch": True})
            for k in (0, 1)]
        merged = world.merge("rob", name, proposal["merge"]["id"])
        assert merged.status_code == 200, merged.text
        assert world.rows(f"SELECT o.id, c.name FROM purchases o JOIN clients c ON o.client_id = c.id "
                          f"WHERE c.id = {client} ORDER BY o.id") == expected
        decisions = world.service.engine.cursor().execute(
            "SELECT table_name, key, action FROM differential_merge_resolutions('shop', ?)",
            [merged.json()["merge"]["request_id"]]).fetchall()
        assert [(t, a) for t, _, a in decisions] == (
            [("clients", "theirs")] if policy == "branch" else [("purchases", "ours"), ("purchases", "ours")])
