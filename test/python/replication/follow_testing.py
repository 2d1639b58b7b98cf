"""Helpers of the follower tests: a leader process that exports a branch to the test's bucket, and waiting for
a follower to see something (eventual visibility, with a generous timeout: never an assertion on time)."""
import pathlib
import time

from differential_testing import connect
from shared_fixtures import Host


class Leader:
    """`orders` with DATA_PATH in the bucket, in another OS process; every snapshot is exported and moves the head.
    `options` adds ATTACH options (", SHIP_WAL 'sync'"). Rows come back as strings."""

    def __init__(self, repository, s3, options=""):
        self.host = Host(repository, s3.secret_sql)
        self.run(f"ATTACH 'differential:orders' AS orders (DATA_PATH '{s3.url}'{options})")

    def run(self, sql):
        return [[str(value) for value in row] for row in self.host.rows(sql)]

    def snapshot(self):
        """Takes a snapshot, which exports it and moves the head; returns its id."""
        return int(self.run("SELECT snapshot_id FROM differential_create_snapshot('orders')")[0][0])

    def close(self):
        self.host.close()


def eventually(probe, expected, timeout=60, pause=0.05):
    """Calls probe() until it returns `expected`; fails with the last value after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    value = probe()
    while value != expected and time.monotonic() < deadline:
        time.sleep(pause)
        value = probe()
    assert value == expected, f"still {value!r} after {timeout} s, expected {expected!r}"
    return value


def poller_threads():
    """The follower pollers alive in this process (they name themselves diff-follow)."""
    names = []
    for task in pathlib.Path("/proc/self/task").iterdir():
        try:
            names.append((task / "comm").read_text().strip())
        except OSError:
            pass
    return names.count("diff-follow")


def follower_opener(s3):
    """A pytest fixture body: opens follower instances of the bucket's orders/main head (a follower keeps nothing
    local, so no repository) and closes every one after the test."""
    opened = []

    def open_follower(interval=1, alias="orders_live"):
        con = connect()
        con.execute(s3.secret_sql)
        con.execute(f"ATTACH 'differential:{s3.url}heads/orders/main' AS {alias} "
                    f"(FOLLOW true, FOLLOW_INTERVAL {interval})")
        opened.append(con)
        return con

    yield open_follower
    for con in opened:
        con.close()
