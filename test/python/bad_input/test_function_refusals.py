"""A refused call of any of the extension's functions changes nothing: bad names, missing databases, branches and
snapshots, wrong states, a branch another process holds. The repository (rows and files) is hashed around each."""
import duckdb
import pytest

from differential_testing import connect, held_branches, tree_fingerprint

REFUSALS = [
    "CALL differential_create_snapshot('shop', name => 'bad/name')",
    "CALL differential_create_snapshot('ghost')",
    "CALL differential_create_snapshot('shop', name => 'first')",
    "CALL differential_create_branch('shop', 'dev')",
    "CALL differential_create_branch('shop', 'x', snapshot => 99)",
    "CALL differential_create_branch('ghost', 'x')",
    "CALL differential_create_branch('shop', '__reserved')",
    "CALL differential_create_branch('shop', 'has space')",
    "CALL differential_restore('shop', 99)",
    "CALL differential_restore('ghost', 1)",
    "CALL differential_restore('shop', 1, branch => 'nosuch')",
    "CALL differential_restore('shop', 1, branch => 'held')",
    "CALL differential_clone_database('shop', 'shop')",
    "CALL differential_clone_database('ghost', 'copy')",
    "CALL differential_clone_database('shop', 'copy', snapshot => 99)",
    "CALL differential_clone_database('shop', '.hidden')",
    "CALL differential_drop_branch('shop', 'main')",
    "CALL differential_drop_branch('shop', 'nosuch')",
    "CALL differential_drop_branch('ghost', 'dev')",
    "CALL differential_drop_branch('shop', 'held')",
    "CALL differential_drop_database('ghost')",
    "CALL differential_drop_database('shop')",
    "CALL differential_expire_snapshots('shop', versions => [99])",
    "CALL differential_expire_snapshots('shop', versions => [2])",
    "CALL differential_expire_snapshots('ghost', versions => [1])",
    "SELECT * FROM differential_merge_branch('shop', 'main', 'nosuch', 'main')",
    "SELECT * FROM differential_merge_branch('ghost', 'main', 'dev', 'main')",
    "SELECT * FROM differential_merge_branch('shop', 'main', 'dev', 'held')",
    "SELECT * FROM differential_merge_branch('shop', 'held', 'dev', 'held')",
    "SELECT * FROM differential_merge_branch('shop', 'main', 'dev', 'bad name')",
    "SELECT * FROM differential_merge_branch('shop', 'main', 'dev', 'main', schema_mode => 'coin')",
    "SELECT * FROM differential_merge_branch('shop', 'main', 'dev', 'main', expected_base_snapshot_id => 42)",
    "SELECT * FROM differential_merge_snapshots('shop', 1, 99, 2, 'out')",
    "SELECT * FROM differential_merge_snapshots('shop', 1, 2, 3, 'dev')",
    "SELECT * FROM differential_abort_merge('shop', 'no-such-operation')",
    "SELECT * FROM differential_merge_resolutions('shop', 'no-such-request')",
    "CALL differential_export_snapshot('shop')",
    "CALL differential_evict_exported('shop')",
    "CALL differential_resolve_conflict('shop', keep => 'branch')",
    "CALL differential_recover_branch('file:///nowhere/heads/shop/main', 'restored')",
    "CALL differential_recover_export('file:///nowhere/descriptors/0', 'restored')",
    "SELECT * FROM differential_diff('shop', 1, 99, 'items')",
    "SELECT * FROM differential_diff('shop', 1, 2, 'no_table')",
    "SELECT * FROM differential_diff('shop', 'dev', 'dev@working', 'items')",
    "SELECT * FROM differential_diff('shop', 'main@working', 'held@working', 'items')",
    "SELECT * FROM differential_merge_ancestry('shop', 1, 99)",
    "SELECT * FROM differential_merge_virtual_base('shop', 1, 99)",
    "CALL differential_cleanup_remote_files('not a url')",
]

@pytest.fixture
def shop(repository):
    con = connect(repository)
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items(id INTEGER PRIMARY KEY, label VARCHAR)")
    con.execute("INSERT INTO shop.items SELECT range, 'item' FROM range(20)")
    con.execute("CALL differential_create_snapshot('shop', name => 'first')")
    for branch in ("dev", "held"):
        con.execute(f"CALL differential_create_branch('shop', '{branch}')")
    con.execute("ATTACH 'differential:shop' AS dev (BRANCH 'dev')")
    con.execute("UPDATE dev.items SET label = 'dev' WHERE id < 5")
    con.execute("CALL differential_create_snapshot('dev')")
    con.execute("UPDATE shop.items SET label = 'main' WHERE id > 15")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH dev")
    yield con
    con.close()


def test_every_refused_function_call_leaves_the_repository_as_it_was(shop, repository):
    with held_branches(repository, "shop@held"):
        before = tree_fingerprint(repository)
        for sql in REFUSALS:
            with pytest.raises(duckdb.Error) as refused:
                shop.execute(sql).fetchall()
            assert tree_fingerprint(repository) == before, f"{sql} changed the repository: {refused.value}"
