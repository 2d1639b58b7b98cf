"""A refused ATTACH changes nothing: every ATTACH option alone and in pairs, crossed with every cause of a
refusal, leaves the repository (and every directory a DATA_PATH could name) exactly as it was."""
import itertools

import duckdb
import pytest

from differential_testing import connect, held_branches, run_python, tree_fingerprint

# Each option with a value that is accepted and one that is not.
OPTIONS = {
    "BRANCH": ("'dev'", "42"),
    "SNAPSHOT": ("1", "'first'"),
    "REPOSITORY": ("'{repo}'", "'relative/repository'"),
    "DATA_PATH": ("'file://{stores}/a/'", "'ftp://nowhere/x/'"),
    "SHIP_WAL": ("'async'", "'sometimes'"),
    "SHIP_INTERVAL": ("5", "0"),
    "WRITERS": ("'shared'", "'many'"),
    "ON_CONFLICT": ("'branch'", "'explode'"),
    "READ_ONLY": ("true", "'maybe'"),
    "BLOCK_SIZE": ("262144", "1000"),
    "ROW_GROUP_SIZE": ("122880", "7"),
    "STORAGE_VERSION": ("'v1.0.0'", "'v0.0.0-nope'"),
    "COMPRESS": ("false", "'perhaps'"),
}
OPTION_SETS = [(name,) for name in OPTIONS] + list(itertools.combinations(OPTIONS, 2))
# Options a read-only attachment cannot take.
WRITES_SETTINGS = {"DATA_PATH", "SHIP_WAL", "SHIP_INTERVAL", "WRITERS", "ON_CONFLICT"}
READ_ONLY_ALREADY = {"READ_ONLY", "SNAPSHOT"}


def _render(options, paths):
    return ", ".join(f"{name} {value.format(**paths)}" for name, value in options)


def _case(cause, names, paths, s3_url):
    """The ATTACH statement for one option set and cause, or None when the cause cannot apply to the set."""
    good = [(n, OPTIONS[n][0]) for n in names]
    database = "shop"
    if cause == "branch_locked":
        if READ_ONLY_ALREADY & set(names):
            return None
    elif cause == "read_only_conflict":
        if not WRITES_SETTINGS & set(names):
            return None
        if not READ_ONLY_ALREADY & set(names):
            good.append(("READ_ONLY", "true"))
    elif cause == "bad_value":
        good[0] = (names[0], OPTIONS[names[0]][1])
    elif cause == "unknown_option":
        good.append(("BOGUS_OPTION", "1"))
    elif cause == "missing_database":
        database = "ghost"
        if not ({"READ_ONLY", "SNAPSHOT", "BRANCH"} & set(names)):
            good.append(("READ_ONLY", "true"))
    elif cause == "wrong_secret":
        good = [(n, v) for n, v in good if n not in ("DATA_PATH", "WRITERS")]
        good += [("DATA_PATH", f"'{s3_url}'"), ("WRITERS", "'shared'")]
    return f"ATTACH 'differential:{database}' AS target ({_render(good, paths)})"


@pytest.fixture
def world(tmp_path, s3):
    repo, stores, outside = tmp_path / "repo", tmp_path / "stores", tmp_path / "outside"
    outside.mkdir()
    con = connect(repo)
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items AS SELECT range AS id, 'item ' || range AS label FROM range(100)")
    con.execute("CALL differential_create_snapshot('shop', name => 'first')")
    con.execute("CALL differential_create_branch('shop', 'dev')")
    con.execute("ATTACH 'differential:shop' AS dev (BRANCH 'dev')")
    con.execute("INSERT INTO dev.items VALUES (1000, 'dev only')")
    con.execute("DETACH dev")
    con.execute("DETACH shop")
    con.close()
    return {"repo": str(repo), "stores": str(stores), "outside": str(outside), "s3": s3}


def _instance(cause, world):
    con = connect(world["repo"])
    if cause == "wrong_secret":
        s3 = world["s3"]
        con.execute(f"CREATE SECRET wrong (TYPE s3, KEY_ID 'not-a-key', SECRET 'not-a-secret', "
                    f"ENDPOINT '{s3.server.endpoint}', URL_STYLE 'path', USE_SSL false, REGION 'us-east-1', "
                    f"SCOPE 's3://{s3.name}/')")
    if cause == "disallowed_directory":
        con.execute(f"SET allowed_directories = ['{world['outside']}/']")
    if cause in ("external_access_off", "disallowed_directory"):
        con.execute("SET enable_external_access = false")
    return con


CAUSES = ["read_only_conflict", "bad_value", "unknown_option", "missing_database", "external_access_off",
          "disallowed_directory", "wrong_secret", "branch_locked"]
# The refusal each cause must produce on at least one case (DuckDB's own errors count for bad values).
EXPECTED_CODE = {"branch_locked": "branch_locked", "unknown_option": "unknown_option",
                 "missing_database": "database_not_found", "external_access_off": "external_access_denied",
                 "disallowed_directory": "external_access_denied", "wrong_secret": "access_denied",
                 "read_only_conflict": "read_only", "bad_value": "invalid_option"}


def test_every_refused_attach_leaves_everything_as_it_was(world):
    paths = {"repo": world["repo"], "stores": world["stores"]}
    s3_url = world["s3"].url
    watched = (world["repo"], world["stores"], world["outside"], world["s3"].path)
    before = tree_fingerprint(*watched)
    refusals, codes = 0, {}
    for cause in CAUSES:
        holder = held_branches(world["repo"], "shop@main", "shop@dev") if cause == "branch_locked" else None
        if holder:
            holder.__enter__()
            before = tree_fingerprint(*watched)
        con = _instance(cause, world)
        try:
            for names in OPTION_SETS:
                sql = _case(cause, names, paths, s3_url)
                if sql is None:
                    continue
                with pytest.raises(duckdb.Error) as refused:
                    con.execute(sql)
                refusals += 1
                message = str(refused.value)
                code = message.split("]")[0].split(":")[-1] if "[differential:" in message else "duckdb"
                codes.setdefault(cause, set()).add(code)
                assert tree_fingerprint(*watched) == before, f"{cause}: {sql} changed the repository: {message}"
        finally:
            con.close()
            if holder:
                holder.__exit__(None, None, None)
    assert refusals >= 300, refusals
    for cause, code in EXPECTED_CODE.items():
        assert code in codes.get(cause, set()), (cause, codes.get(cause))
    # A fresh process attaches every database and branch, and the repository verifies clean.
    out = run_python(
        "from differential_testing import connect, scalar\n"
        f"con = connect('{world['repo']}')\n"
        "con.execute(\"ATTACH 'differential:shop' AS shop\")\n"
        "con.execute(\"ATTACH 'differential:shop' AS dev (BRANCH 'dev')\")\n"
        "print(scalar(con, 'SELECT count(*) FROM shop.items'), scalar(con, 'SELECT count(*) FROM dev.items'),\n"
        "      scalar(con, 'SELECT sum(problems) FROM differential_verify()'))\n")
    assert out.split() == ["100", "101", "0"], out
