"""SIGKILL the server inside a merge at the extension's labelled points; after a restart, merging again completes."""
import contextlib
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from conftest import free_port, seed
from differential_server import tokens
from differential_server.config import Settings
from differential_server.state import State
from differential_testing import EXTENSION, connect

# Passes in a freshly started server: its start-up preflight (is main clean?) compares once, the merge
# request's re-decision a second time, the merge itself a third; the tag is the first snapshot it takes.
POINTS = ["merge.comparison:3", "merge.application:1", "merge.publication:1", "merge.before_publish_commit:1",
          "snapshot.before_commit:1"]


@contextlib.contextmanager
def server(repository, crash=None, logs=None):
    port = free_port()
    env = dict(os.environ, DIFFERENTIAL_EXTENSION=str(EXTENSION))
    env.pop("DIFFERENTIAL_CRASH_POINT", None)
    if crash:
        env["DIFFERENTIAL_CRASH_POINT"] = crash
    process = subprocess.Popen([sys.executable, "-m", "differential_server.cli", "serve", "--repository",
                                str(repository), "--port", str(port)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=120)
    deadline = time.monotonic() + 60
    while True:
        with contextlib.suppress(httpx.TransportError):
            if client.get("/api/auth/whoami").status_code == 401:
                break
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read().decode()[-3000:]
        time.sleep(0.1)
    try:
        yield client, process
    finally:
        client.close()
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        text = process.stderr.read().decode(errors="replace")
        process.stderr.close()
        if logs is not None:
            logs.append(text)


def h(token):
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.parametrize("point", POINTS)
def test_merge_survives_sigkill(tmp_path, point):
    repository = tmp_path / "repo"
    seed(repository, databases=("shop",))
    state = State(Settings(repository=repository).state_path)
    mia = tokens.mint(state, tokens.ensure_principal(state, "mia", "member"), "mia")[1]
    rob = tokens.mint(state, tokens.ensure_principal(state, "rob", "admin"), "rob")[1]
    logs = []
    with server(repository, logs=logs) as (client, _):
        assert client.post("/api/branch/shop/branches", json={"name": "fix"}, headers=h(mia)).status_code == 201
        client.post("/api/branch/shop/sql", json={"sql": "UPDATE items SET price = 999 WHERE id = 3", "branch": "fix"},
                    headers=h(mia))
        client.post("/api/branch/shop/sql", json={"sql": "INSERT INTO items VALUES (77, 'x', 7, 'y')",
                                                  "branch": "fix"}, headers=h(mia))
        # Main moves too, so the merge combines both sides (a fast-forward would skip comparison and staging).
        client.post("/api/branch/shop/sql", json={"sql": "UPDATE items SET price = 5 WHERE id = 9"}, headers=h(rob))
        pid = client.post("/api/branch/shop/branches/fix/propose", json={}, headers=h(mia)).json()["merge"]["id"]
    with server(repository, crash=point, logs=logs) as (client, process):
        with pytest.raises(httpx.TransportError):
            client.post("/api/branch/shop/branches/fix/merge", json={"proposal_id": pid}, headers=h(rob))
        assert process.wait(timeout=60) == -signal.SIGKILL
    with server(repository, logs=logs) as (client, _):
        client.get("/api/auth/whoami", headers=h(mia[:-3] + "xyz"))  # a refused token is not logged either
        shown = client.get("/api/branch/shop/branches/fix", headers=h(rob)).json()
        assert shown["proposals"][-1]["state"] == "merging"
        again = client.post("/api/branch/shop/branches/fix/propose", json={}, headers=h(mia))
        assert again.json()["code"] == "proposal_unsettled"
        merged = client.post("/api/branch/shop/branches/fix/merge", json={"proposal_id": pid}, headers=h(rob))
        assert merged.status_code == 200, merged.text
        assert merged.json()["merge"]["tag"] == f"merge-fix-{pid}"
        replay = client.post("/api/branch/shop/branches/fix/merge", json={"proposal_id": pid}, headers=h(rob))
        assert replay.json()["code"] == "already_merged"
        assert replay.json()["snapshot_id"] == merged.json()["merge"]["snapshot_id"]
        rows = client.post("/api/branch/shop/sql", json={"sql": "SELECT id, price FROM items WHERE id IN (3, 9, 77)"
                                                                " ORDER BY id"}, headers=h(rob)).json()["rows"]
        assert rows == [[3, 999], [9, 5], [77, 7]]
        assert merged.json()["merge"]["merge_action"] == "merged"
    # The server's own log (uvicorn's access lines included) never carries a token.
    assert len(logs) == 3 and all("Uvicorn running" in text or "Application startup" in text for text in logs)
    for token in (mia, rob):
        assert not any(token.split("_", 2)[2][:-3] in text for text in logs)
    con = connect(repository)
    assert con.execute("SELECT sum(problems) FROM differential_verify('shop')").fetchone()[0] == 0
    tags = con.execute("SELECT count(*) FROM differential_snapshots('shop') WHERE snapshot_name = ?",
                       [f"merge-fix-{pid}"]).fetchone()[0]
    assert tags == 1
    con.close()


@pytest.mark.parametrize("point", ["merge.publication:1", "snapshot.before_commit:1"])
def test_key_policy_merge_survives_sigkill(tmp_path, point):
    """--on-conflict main on a --key match: the branch's matching row is removed exactly once, whatever the crash."""
    repository = tmp_path / "repo"
    seed(repository, databases=("shop",))
    state = State(Settings(repository=repository).state_path)
    mia = tokens.mint(state, tokens.ensure_principal(state, "mia", "member"), "mia")[1]
    rob = tokens.mint(state, tokens.ensure_principal(state, "rob", "admin"), "rob")[1]

    def sql(client, statement, who=rob, branch=None):
        return client.post("/api/branch/shop/sql", json={"sql": statement, "branch": branch}, headers=h(who)).json()

    with server(repository) as (client, _):
        assert client.post("/api/branch/shop/branches", json={"name": "keys"}, headers=h(mia)).status_code == 201
        sql(client, "INSERT INTO items VALUES (200, 'branch row', 1, 'sku-k'), (201, 'kept', 1, 'sku-z')", mia, "keys")
        sql(client, "INSERT INTO items VALUES (300, 'main row', 2, 'sku-k')")
        pid = client.post("/api/branch/shop/branches/keys/propose", json={"keys": ["main.items=sku"],
                                                                          "on_conflict": "main"},
                          headers=h(mia)).json()["merge"]["id"]
    with server(repository, crash=point) as (client, process):
        with pytest.raises(httpx.TransportError):
            client.post("/api/branch/shop/branches/keys/merge", json={"proposal_id": pid}, headers=h(rob))
        assert process.wait(timeout=60) == -signal.SIGKILL
    with server(repository) as (client, _):
        merged = client.post("/api/branch/shop/branches/keys/merge", json={"proposal_id": pid}, headers=h(rob))
        assert merged.status_code == 200, merged.text
        rows = sql(client, "SELECT id FROM items WHERE id >= 200 ORDER BY id")["rows"]
        assert rows == [[201], [300]]
    con = connect(repository)
    assert con.execute("SELECT sum(problems) FROM differential_verify('shop')").fetchone()[0] == 0
    tag = con.execute("SELECT snapshot_id FROM differential_snapshots('shop') WHERE snapshot_name = ?",
                      [f"merge-keys-{pid}"]).fetchall()
    assert len(tag) == 1
    con.execute("ATTACH 'differential:shop' AS shop (SNAPSHOT %d)" % tag[0][0])
    assert con.execute("SELECT id FROM shop.items WHERE id >= 200 ORDER BY id").fetchall() == [(201,), (300,)]
    con.close()
