"""Load on the review server: 16 clients write on 8 branches and read main while proposals and merges run.

Every request that should succeed must succeed; p50/p99 latency per kind of request go to a JSON file and
bench/REVIEW_RESULTS.md. Run by `make bench` (scripts/bench.sh); never part of the tests.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time

import duckdb
import httpx
import uvicorn

from differential_server import tokens
from differential_server.api import create_app
from differential_server.config import Settings
from differential_server.service import Service

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"
BRANCHES = 8


def seed(repository: pathlib.Path) -> None:
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{EXTENSION}'")
    con.execute(f"SET differential_repository = '{repository}'")
    con.execute("ATTACH 'differential:shop' AS shop")
    con.execute("CREATE TABLE shop.items (id INTEGER PRIMARY KEY, branch INTEGER, price INTEGER)")
    con.execute("INSERT INTO shop.items SELECT i, i % 8, i FROM range(100000) t(i)")
    con.execute("CALL differential_create_snapshot('shop')")
    con.execute("DETACH shop")
    con.close()


class Load:
    def __init__(self, url: str, agent: str, reviewer: str, seconds: float):
        self.url, self.agent, self.reviewer = url, agent, reviewer
        self.deadline = time.monotonic() + seconds
        self.latencies: dict[str, list[float]] = {}
        self.failures: list[str] = []
        self.lock = threading.Lock()
        # A branch being merged is paused for its writers: writing a merged branch is meant to fail.
        self.paused = [threading.Event() for _ in range(BRANCHES)]
        self.idle = [threading.Semaphore(2) for _ in range(BRANCHES)]

    def timed(self, kind: str, client: httpx.Client, method: str, path: str, token: str, **kw) -> httpx.Response:
        start = time.perf_counter()
        response = client.request(method, path, headers={"Authorization": f"Bearer {token}"}, **kw)
        with self.lock:
            self.latencies.setdefault(kind, []).append(time.perf_counter() - start)
            if response.status_code >= 400:
                self.failures.append(f"{kind} {path}: {response.status_code} {response.text[:200]}")
        return response

    def writer(self, slot: int) -> None:
        branch = slot % BRANCHES
        with httpx.Client(base_url=self.url, timeout=300) as client:
            n = 0
            while time.monotonic() < self.deadline:
                if self.paused[branch].is_set():
                    time.sleep(0.05)
                    continue
                with self.idle[branch]:
                    n += 1
                    self.timed("write", client, "POST", "/api/branch/shop/sql", self.agent, json={
                        "branch": f"b{branch}", "sql": f"UPDATE items SET price = price + 1 WHERE id = {slot * 1000 + n}"})
                    self.timed("read_main", client, "POST", "/api/branch/shop/sql", self.agent, json={
                        "sql": f"SELECT count(*), sum(price) FROM items WHERE branch = {branch}"})

    def merger(self) -> None:
        with httpx.Client(base_url=self.url, timeout=600) as client:
            branch = 0
            while time.monotonic() < self.deadline:
                name = f"b{branch}"
                self.paused[branch].set()
                for _ in range(2):
                    self.idle[branch].acquire()
                try:
                    pid = self.timed("propose", client, "POST", f"/api/branch/shop/branches/{name}/propose",
                                     self.agent, json={"on_conflict": "branch"}).json()["merge"]["id"]
                    self.timed("merge", client, "POST", f"/api/branch/shop/branches/{name}/merge", self.reviewer,
                               json={"proposal_id": pid})
                    self.timed("create", client, "POST", "/api/branch/shop/branches", self.agent, json={"name": name})
                finally:
                    for _ in range(2):
                        self.idle[branch].release()
                    self.paused[branch].clear()
                branch = (branch + 1) % BRANCHES
                time.sleep(2)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--json", type=pathlib.Path, default=REPO_ROOT / "bench" / "work" / "review.json")
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="review-load-"))
    repository = work / "repository"
    seed(repository)
    service = Service(Settings(repository=repository, extension=EXTENSION))
    agent = tokens.mint(service.state, tokens.ensure_principal(service.state, "agent", "member"), "agent",
                        branch_only=True)[1]
    reviewer = tokens.mint(service.state, tokens.ensure_principal(service.state, "rob", "admin"), "rob")[1]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(service, sweep=False), host="127.0.0.1", port=port,
                                          log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    url = f"http://127.0.0.1:{port}"
    with httpx.Client(base_url=url, timeout=60) as client:
        for b in range(BRANCHES):
            client.post("/api/branch/shop/branches", json={"name": f"b{b}"}, headers={"Authorization": f"Bearer {agent}"})
    load = Load(url, agent, reviewer, args.seconds)
    threads = [threading.Thread(target=load.writer, args=(i,)) for i in range(16)]
    threads.append(threading.Thread(target=load.merger))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    server.should_exit = True
    service.close()
    shutil.rmtree(work, ignore_errors=True)
    result = {kind: {"count": len(v), "p50_ms": round(percentile(v, 0.5) * 1000, 1),
                     "p99_ms": round(percentile(v, 0.99) * 1000, 1), "mean_ms": round(statistics.mean(v) * 1000, 1)}
              for kind, v in sorted(load.latencies.items())}
    report = {"seconds": args.seconds, "clients": 16, "branches": BRANCHES, "failures": load.failures[:20],
              "failure_count": len(load.failures), "latencies": result}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2))
    lines = ["# Review server under load", "",
             f"{report['clients']} clients writing on {BRANCHES} branches and reading main for {args.seconds:.0f} s"
             " while one reviewer proposes, merges and recreates a branch every 2 s (`bench/bench_review.py`).", "",
             f"Failed requests: {len(load.failures)}", "", "| request | count | p50 ms | p99 ms | mean ms |",
             "|---|---|---|---|---|"]
    lines += [f"| {k} | {v['count']} | {v['p50_ms']} | {v['p99_ms']} | {v['mean_ms']} |" for k, v in result.items()]
    (REPO_ROOT / "bench" / "REVIEW_RESULTS.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if load.failures else 0


if __name__ == "__main__":
    sys.exit(main())
