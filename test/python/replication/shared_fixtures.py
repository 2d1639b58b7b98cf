"""Hosts as separate processes, and reading the published history of a shared database straight from the
bucket's files (versitygw's posix backend keeps each key as a plain file)."""
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


class Host:
    """A long-lived process with its own repository, so an attachment stays open between statements."""

    def __init__(self, repository, setup_sql, extra_env=None):
        env = dict(os.environ, **(extra_env or {}))
        env["PYTHONPATH"] = f"{HERE.parent}{os.pathsep}{HERE}"
        self.process = subprocess.Popen([sys.executable, str(HERE / "sql_host.py"), str(repository), setup_sql],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def run(self, sql):
        self.process.stdin.write(json.dumps(sql) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the host process died running {sql}"
        return json.loads(line)

    def rows(self, sql):
        answer = self.run(sql)
        assert "rows" in answer, f"{sql} failed: {answer['error']}"
        return answer["rows"]

    def error(self, sql):
        answer = self.run(sql)
        assert "error" in answer, f"{sql} should have failed, gave {answer['rows']}"
        return answer["error"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


def text_object(path):
    values = {}
    for line in pathlib.Path(path).read_text().splitlines()[1:]:
        key, _, value = line.partition(" ")
        values[key] = value
    return values


def published_history(prefix_root, database, branch="main"):
    """Snapshot ids reachable from the branch's head through the commit records' parents, newest first."""
    head = text_object(prefix_root / "heads" / database / branch)
    chain = []
    snapshot = int(head["snapshot"])
    while snapshot:
        record = text_object(prefix_root / "commits" / database / f"{snapshot:020d}")
        assert int(record["snapshot"]) == snapshot
        chain.append(snapshot)
        snapshot = int(record.get("parent", "0"))
    return chain
