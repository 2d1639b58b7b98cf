"""Position matching (docs/MERGES.md §10b) on randomized histories: every preview (counts, conflict rows)
and merge (merge_action, result rows), with and without resolutions, equals the reference method's
(SET differential_merge_skip_unchanged = false), whatever the number of parts the comparison is cut into; and
a position matching shifted by one, or parts that leave a row group out, are caught."""
import pathlib
import random

import pytest

from differential_testing import connect, run_python
from position_histories import build, compare, history

SEEDS = range(36)
# Histories whose merge used position matching, and those that also resolved conflicts (filled as the
# seeds run; the last test checks that the histories exercised what they are meant to).
RAN, TAKEN, RESOLVED = set(), set(), set()


def position_matched(con):
    return con.execute("SELECT count(*) FROM duckdb_logs_parsed('differential') "
                       "WHERE event = 'positions_matched'").fetchone()[0]


@pytest.mark.parametrize("seed", SEEDS)
def test_position_matching_equals_the_reference_method(con, seed):
    spec = history(random.Random(seed), seed)
    build(con, spec)
    con.execute("SET enable_logging = true")
    con.execute("SET enabled_log_types = 'differential'")
    differences, resolved = compare(con, seed)
    assert not differences, f"seed {seed} ({spec}): {differences}"
    if position_matched(con):
        TAKEN.add(seed)
    if resolved:
        RESOLVED.add(seed)
    RAN.add(seed)


def test_the_histories_exercise_position_matching_and_resolutions():
    if len(RAN) < len(SEEDS):
        pytest.skip("only meaningful after every history above ran")
    assert len(TAKEN) >= len(SEEDS) // 3, sorted(TAKEN)
    assert len(RESOLVED) >= 3, sorted(RESOLVED)


MUTATION_RUN = """
import pathlib, random, sys, tempfile
from differential_testing import connect
from position_histories import build, compare, history
found = []
for seed in {seeds}:
    with tempfile.TemporaryDirectory() as work:
        con = connect(pathlib.Path(work) / 'repository')
        build(con, history(random.Random(seed), seed))
        differences, _ = compare(con, seed)
        con.close()
    if differences:
        found.append(seed)
    if len(found) == 3:
        break
print('differing seeds:', found)
"""


@pytest.mark.parametrize("mutation", ["merge_position_shift", "merge_position_part_gap"])
def test_a_mutated_position_matching_is_caught(mutation):
    """merge_position_shift pairs each differing base row with ours' row at the next position;
    merge_position_part_gap leaves out the first row group of every part of the comparison after the
    first (the parts a comparison is cut into, one per thread). The same histories must then differ
    from the reference method."""
    here = pathlib.Path(__file__).resolve().parent
    env = {"PYTHONPATH": f"{here.parent}:{here}", "DIFFERENTIAL_MUTATION": mutation}
    out = run_python(MUTATION_RUN.format(seeds=list(SEEDS)), timeout=1800, env=env)
    found = eval(out.strip().split("differing seeds:")[1])
    print(f"mutation {mutation} caught by seeds {found}")
    assert found, out


def test_a_dropped_row_group_keeps_its_rowids(con):
    """A checkpoint drops a row group whose rows are all deleted, and the groups after it keep their
    rowids, so rowid ranges computed from the groups' sizes are shifted. Such a layout is not trusted
    (ours is read whole): before, the rows of ours' last group were read from the wrong rowids, so ours
    seemed to have deleted them too (42 false delete_update conflicts here, or silently lost rows)."""
    con.execute("ATTACH 'differential:db' AS db")
    con.execute("CREATE TABLE db.t (id INTEGER PRIMARY KEY, v INTEGER)")
    con.execute("INSERT INTO db.t SELECT range, range FROM range(250000)")
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("CALL differential_create_branch('db', 'side', snapshot => 1)")
    con.execute("ATTACH 'differential:db' AS side (BRANCH 'side')")
    con.execute("UPDATE side.t SET v = -v WHERE id % 100 = 1 AND id >= 245760")
    con.execute("CALL differential_create_snapshot('side')")
    con.execute("DELETE FROM db.t WHERE id BETWEEN 122880 AND 245759")  # the whole second row group
    con.execute("CALL differential_create_snapshot('db')")
    con.execute("DETACH db")
    con.execute("DETACH side")
    differences, _ = compare(con, 0)
    assert not differences, differences
    con.execute("ATTACH 'differential:db' AS r (BRANCH 'cut0', READ_ONLY)")
    assert con.execute("SELECT count(*), count(*) FILTER (v < 0) FROM r.t").fetchone() == (250000 - 122880, 42)
