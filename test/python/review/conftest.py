"""Fixtures for the review server's tests: a seeded repository, a Service on it, and tokens for every role."""
import contextlib
import socket
import sqlite3
import threading
import time

import pytest
from fastapi.testclient import TestClient

from differential_testing import EXTENSION, connect
from differential_server import tokens
from differential_server.api import create_app
from differential_server.config import Settings
from differential_server.service import Service

SEED = [
    "CREATE TABLE {db}.items (id INTEGER PRIMARY KEY, name VARCHAR, price INTEGER, sku VARCHAR)",
    "INSERT INTO {db}.items SELECT i, 'item ' || i, i * 10, 'sku-' || i FROM range(1, 21) t(i)",
    "CREATE TABLE {db}.customers (id INTEGER PRIMARY KEY, name VARCHAR, city VARCHAR)",
    "INSERT INTO {db}.customers VALUES (1, 'ann', 'oslo'), (2, 'bob', 'rome'), (3, 'cid', 'lima')",
]


def seed(repository, databases=("shop", "other")):
    con = connect(repository)
    for db in databases:
        con.execute(f"ATTACH 'differential:{db}' AS {db}")
        for statement in SEED:
            con.execute(statement.format(db=db))
        con.execute(f"CALL differential_create_snapshot('{db}', name => 'seed')")
        con.execute(f"DETACH {db}")
    con.close()


class World:
    """A server over a fresh repository, with a token per role of the spec's lifecycle table."""

    def __init__(self, repository, seeded=False, **settings):
        if not seeded:
            seed(repository)
        self.repository = repository
        self.settings = Settings(repository=repository, extension=EXTENSION, **settings)
        self.now = time.time()
        self.service = Service(self.settings, clock=lambda: self.now)
        self.client = TestClient(create_app(self.service, sweep=False))
        self.tokens = {}
        self.mint("alice", "admin")                     # an admin who proposes
        self.mint("rob", "admin")                       # the reviewer
        self.mint("mia", "member")                      # a member who owns branches
        self.mint("max", "member")                      # another member
        self.mint("agent", "member", branch_only=True, databases=["shop"])
        self.mint("adminagent", "admin", branch_only=True, drop_admin=True, databases=["shop"])
        self.mint("outsider", "member", databases=["other"])

    def mint(self, name, role, **kw):
        principal = tokens.ensure_principal(self.service.state, name, role)
        self.tokens[name] = tokens.mint(self.service.state, principal, name, **kw)[1]
        return self.tokens[name]

    def h(self, who):
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def call(self, who, method, path, **kw):
        return self.client.request(method, path, headers=self.h(who) if who else {}, **kw)

    def sql(self, who, statement, branch=None, db="shop"):
        return self.call(who, "POST", f"/api/branch/{db}/sql", json={"sql": statement, "branch": branch})

    def rows(self, statement, branch=None, db="shop"):
        response = self.sql("alice", statement, branch, db)
        assert response.status_code == 200, response.text
        return response.json()["rows"]

    def create(self, who, name, db="shop", **body):
        return self.call(who, "POST", f"/api/branch/{db}/branches", json={"name": name, **body})

    def propose(self, who, name, db="shop", **body):
        return self.call(who, "POST", f"/api/branch/{db}/branches/{name}/propose", json=body)

    def merge(self, who, name, proposal_id, db="shop", **body):
        return self.call(who, "POST", f"/api/branch/{db}/branches/{name}/merge",
                         json={"proposal_id": proposal_id, **body})

    def snapshot(self):
        """Everything a refusal must leave unchanged: repository history, main's rows, the server's rows."""
        cur = self.service.engine.cursor()
        history = cur.execute("SELECT database_name FROM differential_databases()").fetchall()
        for (db,) in history[:]:
            history += cur.execute("SELECT branch_name, head_snapshot_id FROM differential_branches(?) ORDER BY 1",
                                   [db]).fetchall()
            history += cur.execute("SELECT snapshot_id, snapshot_name FROM differential_snapshots(?) ORDER BY 1",
                                   [db]).fetchall()
            history += cur.execute(f'SELECT * FROM "{db}".items ORDER BY id').fetchall()
            history += cur.execute(f'SELECT * FROM "{db}".customers ORDER BY id').fetchall()
        con = sqlite3.connect(self.settings.state_path)
        server = con.execute("SELECT id, name, state FROM branches ORDER BY id").fetchall()
        server += con.execute("SELECT id, state FROM proposals ORDER BY id").fetchall()
        server += con.execute("SELECT id, revoked_at FROM tokens ORDER BY id").fetchall()
        con.close()
        return history, server

    def close(self):
        self.service.close()


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path / "repository")
    yield w
    w.close()


def refused(response, status, code):
    assert response.status_code == status, response.text
    assert response.json()["code"] == code, response.text
    return response.json()


@contextlib.contextmanager
def unchanged(world):
    before = world.snapshot()
    yield
    assert world.snapshot() == before


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def live_server(app):
    """uvicorn on a real port in a thread, for clients that speak HTTP themselves (MCP, schemathesis, Chromium)."""
    import uvicorn
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
