"""Toxiproxy (pinned in scripts/common.sh, installed by scripts/setup_toxiproxy.sh) between the extension and a
test S3 server: one proxy whose toxics add latency, cut connections mid-body or stall them. Shared by the fault
tests (test/python/s3/test_export_faults.py) and bench/bench_s3.py; configured with Toxiproxy's own CLI."""
import socket
import subprocess
import time

from s3_server import CACHE, free_port, tool_env

TOXIPROXY = CACHE / "bin-toxiproxy-v2.5.0"


class Toxiproxy:
    """Toxiproxy's server and one proxy (`s3`) in front of the S3 server on `upstream_port`."""

    def __init__(self, upstream_port, latency_ms=0):
        if not (TOXIPROXY / "server").exists():
            raise RuntimeError(f"{TOXIPROXY} is missing: run scripts/setup.sh (it installs Toxiproxy)")
        self.api = free_port()
        self.process = subprocess.Popen([str(TOXIPROXY / "server"), "-host", "127.0.0.1", "-port", str(self.api)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=tool_env())
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.api), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("toxiproxy did not start")
                time.sleep(0.05)
        self.port = free_port()
        self.cli("create", "--listen", f"127.0.0.1:{self.port}", "--upstream", f"127.0.0.1:{upstream_port}", "s3")
        if latency_ms:
            self.add("latency", "latency", latency=latency_ms)

    @property
    def endpoint(self):
        return f"127.0.0.1:{self.port}"

    def cli(self, *args):
        subprocess.run([str(TOXIPROXY / "cli"), "--host", f"http://127.0.0.1:{self.api}", *args], check=True,
                       stdout=subprocess.DEVNULL, env=tool_env())

    def add(self, name, kind, stream="downstream", **attributes):
        """Adds a toxic to every connection, the open ones included (`stream`: downstream is the server's
        answers, upstream the requests and their bodies)."""
        args = ["toxic", "add", "--toxicName", name, "--type", kind, "--" + stream]
        for key, value in attributes.items():
            args += ["--attribute", f"{key}={value}"]
        self.cli(*args, "s3")

    def remove(self, name):
        self.cli("toxic", "remove", "--toxicName", name, "s3")

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=30)
