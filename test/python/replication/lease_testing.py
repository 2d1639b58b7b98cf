"""Helpers of the lease tests: a leader and standbys as separate OS processes (sql_host.py), each with its own
repository, SET differential_failover = 'lease' and a short lease; and walking the epoch chains in the bucket."""
import pathlib
import time

from shared_fixtures import Host

LEASE_S = 3
FOLLOW_S = 0.5


def lease_setup(s3):
    return f"{s3.secret_sql}; SET differential_failover = 'lease'; SET differential_lease_duration = {LEASE_S}"


def start_leader(repository, s3, mode="sync"):
    """A leader shipping `orders` with the lease; table t(id) created. Waits until it holds the lease."""
    host = Host(repository, lease_setup(s3))
    host.rows(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}', SHIP_WAL '{mode}', SHIP_INTERVAL 1)")
    host.rows("CREATE TABLE orders.t (id INTEGER)")
    wait_for(lambda: host.rows("SELECT lease FROM differential_shipping()")[0][0], lambda v: v == "held")
    return host


def start_standby(repository, s3, alias="orders", extra_env=None):
    host = Host(repository, lease_setup(s3), extra_env)
    host.rows(f"ATTACH 'differential:{s3.url}heads/orders/main' AS live "
              f"(FOLLOW true, FOLLOW_INTERVAL {FOLLOW_S}, TAKEOVER_AS '{alias}')")
    return host


def standby_lease(host):
    return host.rows("SELECT takeover_as, lease FROM differential_followers()")[0]


def wait_for(probe, accept, timeout=90, pause=0.1):
    """Calls probe() until accept(value); returns (value, seconds waited); fails with the last value on timeout."""
    start = time.monotonic()
    value = probe()
    while not accept(value) and time.monotonic() - start < timeout:
        time.sleep(pause)
        value = probe()
    assert accept(value), f"still {value!r} after {timeout} s"
    return value, time.monotonic() - start


def chains(root, database="orders", branch="main"):
    """{chain: [(seq, kind)]} of every epoch object in the bucket (kind 1 commit, 2 seal)."""
    out = {}
    base = pathlib.Path(root) / "epochs" / database / branch
    for path in sorted(base.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            out.setdefault(int(path.parent.name), []).append((int(path.name), data[12]))
    return out


def assert_one_line(root):
    """No fork, as far as the objects show it: every chain's seqs run 1..k without a gap and a seal, if any, is the
    last (a chain is sealed once, and nothing follows its seal)."""
    found = chains(root)
    assert found, "no epochs in the bucket"
    for chain, epochs in found.items():
        seqs = [seq for seq, _ in epochs]
        assert seqs == list(range(1, len(seqs) + 1)), f"chain {chain}: seqs {seqs}"
        seals = [seq for seq, kind in epochs if kind == 2]
        assert seals in ([], [seqs[-1]]), f"chain {chain}: seals at {seals} of {seqs}"
    return found


def _commit_range(data):
    """(wal_offset, wal length) of a commit epoch object (docs/FORMAT.md §10.4)."""
    at = 14

    def take_bytes():
        nonlocal at
        length = int.from_bytes(data[at:at + 8], "little")
        at += 8 + length

    take_bytes()  # database
    take_bytes()  # branch
    at += 8 + 8 + 32  # chain, seq, previous
    take_bytes()  # writer
    offset = int.from_bytes(data[at:at + 8], "little")
    length = int.from_bytes(data[at + 8:at + 16], "little")
    return offset, length


def assert_wal_continuous(root, database="orders", branch="main"):
    """Every commit epoch of a chain starts its WAL where the previous one ended: no WAL offset shipped twice."""
    base = pathlib.Path(root) / "epochs" / database / branch
    checked = 0
    for chain in sorted(p for p in base.iterdir() if p.is_dir()):
        end = 0
        for path in sorted(chain.iterdir()):
            data = path.read_bytes()
            if data[12] != 1:
                continue
            offset, length = _commit_range(data)
            assert offset == end, f"{path.relative_to(base)} starts its WAL at {offset}, the previous ended at {end}"
            end = offset + length
            checked += 1
    return checked
