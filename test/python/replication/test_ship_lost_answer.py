"""A create-only epoch PUT that lands but whose answer is lost (fault points in ChainWriter::PutCreateOnly, sync
leader in its own process): the shipper reads the key back instead of guessing, so the commit is shipped and
acknowledged; when the store stays unreachable for that read too, the commit fails (outcome unknown), and the next
shipment never writes a WAL offset twice: it goes on after the landed epoch when that epoch holds a prefix of its
WAL bytes, and stops with ship_diverged when DuckDB rolled the failed commit back. Either way every chain's WAL is
continuous, the branch recovers clean and holds every acknowledged commit."""
import json

import pytest

from differential_testing import connect, run_python
from lease_testing import assert_wal_continuous
from replication_helpers import recovered_ids

LEADER = """
import json
from differential_testing import connect
con = connect({repository!r})
con.execute({secret!r})
con.execute("ATTACH 'differential:orders' AS orders (DATA_PATH '{url}', SHIP_WAL 'sync')")
con.execute("CREATE TABLE orders.t (id INTEGER)")
acked, errors = [], []
for n in range(8):
    try:
        con.execute(f"INSERT INTO orders.t VALUES ({{n}})")
        acked.append(n)
    except Exception as error:
        errors.append(str(error))
local = [row[0] for row in con.execute("SELECT id FROM orders.t ORDER BY id").fetchall()]
print(json.dumps({{"acked": acked, "errors": errors, "local": local}}))
"""


def run_leader(tmp_path, s3, fault):
    code = LEADER.format(repository=str(tmp_path / "leader"), secret=s3.secret_sql, url=s3.url)
    out = run_python(code, timeout=180, env={"DIFFERENTIAL_FAULT_POINT": fault})
    return json.loads(out.strip().splitlines()[-1])


def recovered(tmp_path, s3):
    con = connect(tmp_path / "check")
    con.execute(s3.secret_sql)
    ids, _, problems = recovered_ids(con, s3.url, "third_copy")
    assert problems == 0
    return ids


@pytest.mark.parametrize("pass_number", [3, 5])
def test_lost_answer_is_read_back_and_acknowledged(s3, tmp_path, pass_number):
    result = run_leader(tmp_path, s3, f"ship.epoch_put_answer:{pass_number}")
    assert result["errors"] == [] and result["acked"] == list(range(8)), result
    assert assert_wal_continuous(s3.path / "lake") >= 8
    assert recovered(tmp_path, s3) == list(range(8))


@pytest.mark.parametrize("pass_number", [3, 5])
def test_unconfirmed_put_never_ships_a_wal_offset_twice(s3, tmp_path, pass_number):
    result = run_leader(tmp_path, s3, f"ship.epoch_put_unconfirmed:{pass_number}")
    errors = result["errors"]
    assert errors, result  # the commit whose PUT stayed unconfirmed failed (outcome unknown)
    assert "[differential:remote_" in errors[0], errors
    # Later commits either ship after the landed epoch (it held a prefix of their WAL) or are refused once the
    # shipper saw that the landed epoch holds a commit DuckDB rolled back here.
    for error in errors[1:]:
        assert "[differential:ship_diverged]" in error or "[differential:head_conflict]" in error, errors
    assert_wal_continuous(s3.path / "lake")
    ids = recovered(tmp_path, s3)
    assert set(result["acked"]) <= set(ids), (result, ids)
    assert set(ids) <= set(range(8))
    # What the leader keeps locally is what it acknowledged: the failed commits were rolled back.
    assert result["local"] == result["acked"]
