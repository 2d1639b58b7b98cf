"""differential_merge_ancestry against the recorded parent edges: random histories, and edges whose ids
break creation order (the descending walk hands those to the recursive one)."""
import random
import sqlite3


def recorded_edges(repository, database):
    """snapshot id -> parents in recorded order, read from the metadata as a second reader."""
    db = sqlite3.connect(f"file:{repository / 'metadata.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT p.snapshot_id, p.parent_snapshot_id FROM snapshot_parents p JOIN databases d USING (database_id) "
            "WHERE d.database_name = ? ORDER BY p.snapshot_id, p.ordinal",
            [database],
        ).fetchall()
    finally:
        db.close()
    edges = {}
    for child, parent in rows:
        edges.setdefault(child, []).append(parent)
    return edges


def reachable(edges, start):
    seen, todo = {start}, [start]
    while todo:
        for parent in edges.get(todo.pop(), []):
            if parent not in seen:
                seen.add(parent)
                todo.append(parent)
    return seen


def expected_rows(edges, ours, theirs):
    from_ours, from_theirs = reachable(edges, ours), reachable(edges, theirs)
    return [
        (s, edges.get(s, []), "both" if s in from_ours and s in from_theirs else "ours" if s in from_ours else "theirs")
        for s in sorted(from_ours | from_theirs)
    ]


def ancestry(con, database, ours, theirs):
    return con.execute(
        "SELECT snapshot_id, parents, reachable_from FROM differential_merge_ancestry(?, ?, ?)", [database, ours, theirs]
    ).fetchall()


def grow_random_history(con, rng):
    """Snapshots on main and on branches forked from random snapshots; restores record merge snapshots."""
    con.execute("ATTACH 'differential:h' AS h")
    con.execute("CREATE TABLE h.t AS SELECT 1 AS x")
    con.execute("CALL differential_create_snapshot('h')")
    con.execute("DETACH h")
    branches = ["main"]
    for step in range(40):
        ids = [r[0] for r in con.execute("SELECT snapshot_id FROM differential_snapshots('h')").fetchall()]
        choice = rng.random()
        if choice < 0.3:
            name = f"b{step}"
            con.execute("CALL differential_create_branch('h', ?, snapshot => ?)", [name, rng.choice(ids)])
            branches.append(name)
        elif choice < 0.45:
            con.execute("CALL differential_restore('h', ?)", [rng.choice(ids)])
        else:
            branch = rng.choice(branches)
            con.execute(f"ATTACH 'differential:h' AS w (BRANCH '{branch}')")
            con.execute("INSERT INTO w.t VALUES (?)", [step])
            con.execute("CALL differential_create_snapshot('w')")
            con.execute("DETACH w")


def test_ancestry_matches_the_recorded_edges_on_random_histories(con, repository):
    rng = random.Random(7)
    grow_random_history(con, rng)
    edges = recorded_edges(repository, "h")
    ids = [r[0] for r in con.execute("SELECT snapshot_id FROM differential_snapshots('h')").fetchall()]
    assert any(len(parents) > 1 for parents in edges.values()), "the history has no merge snapshot"
    assert len(ids) > 15
    pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(40)] + [(max(ids), min(ids)), (min(ids), max(ids))]
    for ours, theirs in pairs:
        assert ancestry(con, "h", ours, theirs) == expected_rows(edges, ours, theirs), (ours, theirs)


def grow_out_of_order_history(con, repository):
    """1 -> 2 -> 3 on main, 4 on a branch from 1; then the metadata records 2's parent as 4, a larger id."""
    con.execute("ATTACH 'differential:h' AS h")
    con.execute("CREATE TABLE h.t AS SELECT 1 AS x")
    for _ in range(3):
        con.execute("INSERT INTO h.t VALUES (2)")
        con.execute("CALL differential_create_snapshot('h')")
    con.execute("CALL differential_create_branch('h', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:h' AS side (BRANCH 'side')")
    con.execute("INSERT INTO side.t VALUES (4)")
    assert con.execute("SELECT snapshot_id FROM differential_create_snapshot('side')").fetchone()[0] == 4
    db = sqlite3.connect(repository / "metadata.sqlite")
    with db:
        db.execute("UPDATE snapshot_parents SET parent_snapshot_id = 4 WHERE snapshot_id = 2")
    db.close()


def test_ancestry_follows_parents_out_of_creation_order(con, repository):
    # The descending walk passes 4 before it reaches 2; the recursive walk must take over.
    grow_out_of_order_history(con, repository)
    assert ancestry(con, "h", 3, 1) == [(1, [], "both"), (2, [4], "ours"), (3, [2], "ours"), (4, [1], "ours")]
    assert con.execute("SELECT DISTINCT selected_base FROM differential_merge_ancestry('h', 3, 1)").fetchall() == [(1,)]
