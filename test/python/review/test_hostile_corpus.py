"""A hostile corpus through REST SQL and MCP run_sql as a branch-only token, with and without a branch: whatever
each statement does, main, the other database, the server's state and every file outside the branch stay as they
were, and the server still restarts and serves."""
import hashlib
import json
import os
import pathlib
import re
import sqlite3
import tempfile

import anyio
import duckdb
import pytest

from conftest import World, live_server
from differential_server.api import create_app
from differential_server.errors import CODES
from differential_server.service import Service
from test_mcp import agent_client, tool

SRC = pathlib.Path(__file__).resolve().parents[3] / "src" / "differential_extension.cpp"
MARK = "hostile-corpus"

# Calls of every differential_* function with arguments that bind (the writers must refuse before running).
CALLS = {
    "CreateSnapshot": ["differential_create_snapshot('shop', name => 'merge-work-1', author => 'rob')",
                       "differential_create_snapshot('shop_main')", "differential_create_snapshot('other')"],
    "CreateBranch": ["differential_create_branch('shop', 'evil')", "differential_create_branch('other', 'evil')"],
    "Branches": ["differential_branches('shop')", "differential_branches('other')"],
    "Databases": ["differential_databases()"],
    "Followers": ["differential_followers()"],
    "Snapshots": ["differential_snapshots('shop')", "differential_snapshots('other')"],
    "Verify": ["differential_verify()", "differential_verify('other')"],
    "Restore": ["differential_restore('shop', 1)", "differential_restore('other', 1)"],
    "CloneDatabase": ["differential_clone_database('other', 'stolen')"],
    "ExportSnapshot": ["differential_export_snapshot('shop')"],
    "EvictExported": ["differential_evict_exported('shop')"],
    "FetchEvicted": ["differential_fetch_evicted('shop')"],
    "RecoverExport": ["differential_recover_export('shop', 's3://bucket/x/')"],
    "RecoverBranch": ["differential_recover_branch('shop', 'work')"],
    "Shipping": ["differential_shipping()"],
    "ResolveConflict": ["differential_resolve_conflict('r1', keep => 'ours')"],
    "DropBranch": ["differential_drop_branch('shop', 'work')", "differential_drop_branch('other', 'main')"],
    "DropDatabase": ["differential_drop_database('other')", "differential_drop_database('shop')"],
    "ExpireSnapshots": ["differential_expire_snapshots('shop')", "differential_expire_snapshots('other')"],
    "CleanupOldFiles": ["differential_cleanup_old_files()"],
    "CleanupRemoteFiles": ["differential_cleanup_remote_files('shop')"],
    "StorageInfo": ["differential_storage_info()", "differential_storage_info('other')"],
    "IoCounters": ["differential_io_counters()"],
    "MergeAncestry": ["differential_merge_ancestry('other', 1, 1)"],
    "MergeVirtualBase": ["differential_merge_virtual_base('other', 1, 1)"],
    "MergeBranch": ["differential_merge_branch('shop', 'main', 'work', 'main')",
                    "differential_merge_branch('other', 'main', 'main', 'main')"],
    "MergeSnapshots": ["differential_merge_snapshots('shop', 1, 1, 1, 'main')"],
    "MergeBranchPreflight": ["differential_merge_branch_preflight('other', 'main', 'main', 'main')"],
    "MergeRequests": ["differential_merge_requests('other')"],
    "MergeBranchPreview": ["differential_merge_branch_preview('other', 'main', 'main')"],
    "MergeSnapshotsPreview": ["differential_merge_snapshots_preview('other', 1, 1, 1)"],
    "Diff": ["differential_diff('other', 1, 1, 'items')"],
    "AbortMerge": ["differential_abort_merge('shop', 'r1')"],
    "MergeResolutions": ["differential_merge_resolutions('other', 'r1')"],
    "MergeStatus": ["differential_merge_status()"],
}

# The functions that write a repository, as src/differential_extension.cpp registers them.
WRITERS = set(re.findall(r"Guarded\(differential::(\w+?)Functions?\(\), writes\)", SRC.read_text()))

READERS = ["read_text", "read_blob", "read_csv", "read_csv_auto", "read_json", "read_json_auto", "read_ndjson",
           "read_parquet", "parquet_scan", "parquet_metadata", "parquet_schema", "sniff_csv", "glob"]


def differential_functions():
    """Every function the extension registers, by the factory names in its entry point."""
    return sorted(set(re.findall(r"differential::(\w+?)Functions?\(\)", SRC.read_text())) - {"CatalogSnapshots"})


def corpus(repo, state_file, home):
    tmp = tempfile.gettempdir()
    out = f"{tmp}/{MARK}"
    secret_targets = [str(state_file), f"{repo}/metadata.sqlite", "/etc/passwd", f"{home}/.bashrc", f"{repo}/shop"]
    statements = []
    # Files and the environment: every reader, at the server's state, the repository, system and home files.
    for reader in READERS:
        for target in secret_targets[:3] if reader in ("read_text", "read_blob", "glob") else secret_targets[:1]:
            statements.append(f"SELECT * FROM {reader}('{target}')")
    statements += [f"FROM '{state_file}'", "FROM '/etc/passwd'", f"SELECT * FROM glob('{repo}/*')",
                   f"SELECT * FROM glob('{home}/*')", "SELECT getenv('HOME')", "SELECT * FROM getenv('PATH')",
                   f"SELECT * FROM read_text('diff://{repo}/other/main')", "SELECT current_setting('home_directory')",
                   f"SELECT * FROM query('SELECT * FROM read_text(''{state_file}'')')",
                   f"CREATE VIEW leak AS SELECT * FROM read_text('{state_file}')",
                   f"CREATE TABLE leak AS SELECT * FROM read_csv('/etc/passwd')",
                   f"INSERT INTO items SELECT 900, content, 1, 'x' FROM read_text('{state_file}')"]
    # Attachments: other databases, main read-write, the extension's REPOSITORY and DATA_PATH, plain files.
    attaches = ["ATTACH 'differential:other' AS o", "ATTACH 'differential:shop' AS m2 (BRANCH 'main')",
                f"ATTACH 'differential:agentdb' AS w (REPOSITORY '{repo}')",
                f"ATTACH 'differential:other' AS o2 (REPOSITORY '{repo}')",
                f"ATTACH 'differential:shop' AS d (REPOSITORY '{out}-repo')",
                f"ATTACH 'differential:shop' AS e (DATA_PATH '{out}-data/')",
                f"ATTACH '{out}.duckdb' AS f", f"ATTACH '{state_file}' AS g (TYPE sqlite)", "ATTACH ':memory:' AS mem",
                "DETACH shop_main", "DETACH shop", "DETACH DATABASE IF EXISTS shop_main", "USE memory", "USE other",
                "USE system", "USE temp"]
    # Files out, extensions, settings.
    outs = [f"COPY items TO '{out}.csv'", f"COPY (SELECT * FROM shop_main.items) TO '{out}.parquet' (FORMAT parquet)",
            f"COPY items FROM '{state_file}'", "COPY FROM DATABASE shop TO shop_main", f"EXPORT DATABASE '{out}-export'",
            f"IMPORT DATABASE '{out}-export'", "INSTALL httpfs", "FORCE INSTALL httpfs", "LOAD httpfs",
            f"LOAD '{out}.duckdb_extension'", "UPDATE EXTENSIONS", "SET enable_external_access = true",
            "SET lock_configuration = false", "SET differential_sql_functions = 'all'", "RESET differential_sql_functions",
            f"SET differential_repository = '{out}-repo'", "RESET differential_repository",
            f"SET temp_directory = '{out}-tmp'", f"SET secret_directory = '{out}-secrets'", "SET GLOBAL threads = 1",
            "SET SESSION memory_limit = '1GB'", "SET VARIABLE v = 1", "SET search_path = 'other.main'",
            "RESET ALL", "PRAGMA enable_profiling", f"PRAGMA profiling_output = '{out}.json'",
            "PRAGMA disable_checkpoint_on_shutdown", f"PRAGMA import_database('{out}-export')",
            "CALL enable_logging()", f"CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'k', SECRET 'x')",
            "CREATE SECRET s2 (TYPE s3, KEY_ID 'k', SECRET 'x')", f"PREPARE p AS COPY items TO '{out}.csv'",
            "EXECUTE p", f"EXPLAIN ANALYZE COPY items TO '{out}.csv'",
            "EXPLAIN ANALYZE SELECT * FROM differential_create_snapshot('shop')", "CHECKPOINT shop_main",
            "FORCE CHECKPOINT", "VACUUM", "ANALYZE"]
    # Main through the branch session, and look-alikes that are harmless.
    mains = ["DELETE FROM shop_main.items", "UPDATE shop_main.items SET price = 0", "CREATE TABLE shop_main.evil (i INT)",
             "USE shop_main; DELETE FROM items", "DROP TABLE shop_main.customers",
             "SELECT 'ATTACH ''differential:other'' AS o' AS attach", "SELECT count(*) AS \"copy\" FROM items",
             "SELECT name FROM items WHERE name = 'COPY items TO x' -- LOAD httpfs",
             "/* ATTACH 'x' */ SELECT 1", "SELECT * FROM shop_main.items LIMIT 1", "SELECT * FROM duckdb_settings()",
             "SELECT * FROM duckdb_databases()", "PRAGMA table_info('items')", "PRAGMA database_size",
             "CREATE MACRO snap() AS TABLE SELECT * FROM differential_create_snapshot('shop'); SELECT * FROM snap()",
             "CREATE VIEW snapv AS SELECT * FROM differential_drop_branch('shop', 'work')",
             "INSERT OR REPLACE INTO items VALUES (901, 'legit', 1, 'sku-901')", "UPDATE items SET price = price + 1 WHERE id = 2"]
    functions = [c for name in differential_functions() for c in CALLS[name]]
    assert set(CALLS) == set(differential_functions()), "a differential function is missing from the corpus"
    calls = [f"SELECT * FROM {c}" for c in functions] + [f"CALL {c}" for c in functions]
    calls += ['SELECT * FROM "differential_create_snapshot"(\'shop\')', "select * from DIFFERENTIAL_DROP_BRANCH('shop', 'work')",
              "SELECT * FROM system.main.differential_create_snapshot('shop')"]
    base = statements + attaches + outs + mains + calls
    # Variants: case, comments, and hidden behind a harmless statement or inside a transaction.
    variants = [s.lower() for s in attaches + outs[:12]] + [f"/* hi */ {s}" for s in attaches[:6] + outs[:6]]
    variants += [f"SELECT 1; {s}" for s in attaches[:6] + outs[:8]] + [f"BEGIN; {s}; COMMIT" for s in attaches[:4]]
    return base + variants


def parses(statement):
    try:
        duckdb.extract_statements(statement)
        return True
    except duckdb.Error:
        return False


class Witness:
    """What no statement may change: main and `other` (rows and history), the server's state, files elsewhere."""

    def __init__(self, world):
        self.world = world
        self.home = pathlib.Path.home()

    def digest(self):
        cur = self.world.service.engine.cursor()
        h = hashlib.sha256()
        for db in ("shop", "other"):
            for row in cur.execute("SELECT branch_name, head_snapshot_id FROM differential_branches(?) WHERE"
                                   " branch_name != 'work' ORDER BY 1", [db]).fetchall():
                h.update(repr(row).encode())
            for row in cur.execute("SELECT snapshot_id, snapshot_name, author, branch_name FROM"
                                   " differential_snapshots(?) WHERE branch_name != 'work' ORDER BY 1", [db]).fetchall():
                h.update(repr(row).encode())
            for table in ("items", "customers"):
                h.update(repr(cur.execute(f'SELECT * FROM "{db}".{table} ORDER BY id').fetchall()).encode())
            h.update(repr(cur.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? ORDER BY 1",
                                      [db]).fetchall()).encode())
        con = sqlite3.connect(self.world.settings.state_path)
        for table in ("principals", "tokens", "branches", "proposals"):
            h.update(repr(con.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()).encode())
        con.close()
        return h.hexdigest()

    def files(self):
        """Paths carrying the corpus's marker anywhere it could write, and the repository's top two levels."""
        tmp = pathlib.Path(tempfile.gettempdir())
        marked = [str(p) for root in (tmp, self.home) for p in root.glob(f"{MARK}*")]
        marked += [str(p) for p in (self.home / ".duckdb").rglob("*")] if (self.home / ".duckdb").exists() else []
        repo = pathlib.Path(self.world.repository)
        top = sorted(str(p.relative_to(repo)) for p in repo.glob("*/*") if "work" not in p.name)
        return marked, sorted(p.name for p in repo.iterdir()), top


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    world = World(tmp_path_factory.mktemp("hostile") / "repo")
    assert world.create("agent", "work").status_code == 201
    assert world.sql("agent", "UPDATE items SET price = 7 WHERE id = 1", branch="work").json()["changed"]
    yield world
    world.close()


def check(witness, before, statement, channel, status, code):
    assert status != 500 and code != "internal", (channel, statement)
    assert status == 200 or (code in CODES and 400 <= CODES[code][0] < 500), (channel, statement, status, code)
    after = witness.digest(), witness.files()
    assert after == before, (channel, statement, status, code)


def test_the_hostile_corpus_changes_nothing_outside_the_branch(hostile):
    world = hostile
    statements = corpus(world.repository, world.settings.state_path, pathlib.Path.home())
    assert len(statements) >= 200
    witness = Witness(world)
    before = witness.digest(), witness.files()
    outcomes = {}
    for statement in statements:
        for branch in ("work", None):
            response = world.sql("agent", statement, branch=branch)
            body = response.json()
            check(witness, before, statement, f"rest {branch}", response.status_code, body.get("code"))
            outcomes[(statement, branch)] = body.get("code") or "ok"

    async def over_mcp(url):
        async with agent_client(url, world.tokens["agent"]) as client:
            for statement in statements:
                for branch in ("work", None):
                    args = {"database": "shop", "sql": statement, **({"branch": branch} if branch else {})}
                    status, body = await tool(client, "run_sql", **args)
                    code = body.get("code") if status == "error" else None
                    check(witness, before, statement, f"mcp {branch}", 200 if code is None else CODES[code][0], code)
                    # MCP runs the same code as REST: the same answer.
                    assert (code or "ok") == outcomes[(statement, branch)], (statement, branch, code)

    with live_server(create_app(world.service, sweep=False)) as url:
        anyio.run(over_mcp, url)
    # What the corpus must have been refused, by kind.
    for statement in statements:
        text = statement.lower()
        if re.match(r"^(/\* hi \*/ |select 1; |begin; )?(attach|detach|copy|export|import|install|force install|load|"
                    r"update extensions|set |reset|prepare|execute)", text):
            expected = "statement_not_allowed" if parses(statement) else "sql_error"
            assert outcomes[(statement, "work")] == expected, statement
    for name in WRITERS:
        for call in CALLS[name]:
            for form, branch in ((f"SELECT * FROM {call}", "work"), (f"CALL {call}", "work"), (f"CALL {call}", None)):
                assert outcomes[(form, branch)] == "function_not_allowed", (form, branch)
    for target in ("read_text", "read_blob", "glob"):
        assert outcomes[(f"SELECT * FROM {target}('{world.settings.state_path}')", "work")] == "external_access_denied"


def test_the_server_restarts_and_serves_after_the_corpus(hostile):
    world = hostile
    world.service.close()
    world.service = Service(world.settings, clock=lambda: world.now)
    from fastapi.testclient import TestClient
    world.client = TestClient(create_app(world.service, sweep=False))
    assert world.rows("SELECT count(*) FROM items") == [[20]]
    assert world.sql("agent", "SELECT price FROM items WHERE id = 1", branch="work").json()["rows"] == [[7]]
    assert world.sql("agent", "UPDATE items SET price = 8 WHERE id = 1", branch="work").json()["changed"]
