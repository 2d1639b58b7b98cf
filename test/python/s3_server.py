"""A real S3 server for the SQL tests: versitygw (pinned in VERSITYGW_VERSION, installed by scripts/setup.sh)
started on loopback with fresh random root credentials that live only in this process and the child's
environment. Buckets are created with curl's own SigV4 signing (`--aws-sigv4`), never by hand."""
import os
import pathlib
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
VERSION = (REPO_ROOT / "VERSITYGW_VERSION").read_text().strip()
CACHE = pathlib.Path(os.environ.get("DIFFERENTIAL_CACHE", pathlib.Path.home() / ".cache" / "differential"))
BINARY = CACHE / f"bin-versitygw-{VERSION}" / "versitygw"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tool_env():
    """The environment for a tool of ours that is not Python: without the sanitizer runtimes `make test-asan`
    preloads into the Python processes (they are for the extension, and hang some other programs)."""
    return {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}


class VersityGW:
    """One versitygw process with a posix backend in a temp directory; stop() waits for it to exit."""

    def __init__(self):
        if not BINARY.exists():
            raise RuntimeError(f"{BINARY} is missing: run scripts/setup.sh (it installs versitygw {VERSION})")
        self.key_id = "test" + secrets.token_hex(6)
        self.secret = secrets.token_hex(20)
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="versitygw-"))
        (self.directory / "data").mkdir()
        self.process = None
        self.start()

    def start(self, port=None):
        """Starts the server on `port` (a restart after stop() keeps its port, so clients reconnect) or a free one."""
        self.port = port or free_port()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.directory),
               "ROOT_ACCESS_KEY_ID": self.key_id, "ROOT_SECRET_ACCESS_KEY": self.secret}
        log = open(self.directory / "server.log", "ab")
        self.process = subprocess.Popen(
            [str(BINARY), "--port", f"127.0.0.1:{self.port}", "--quiet", "posix", str(self.directory / "data")],
            env=env, stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError("versitygw did not start: " + (self.directory / "server.log").read_text()[-2000:])

    @property
    def endpoint(self):
        return f"127.0.0.1:{self.port}"

    def create_bucket(self, name):
        result = subprocess.run(
            ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3",
             "--user", f"{self.key_id}:{self.secret}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD",
             "-X", "PUT", f"http://{self.endpoint}/{name}"], capture_output=True, text=True, timeout=30,
            env=tool_env())
        assert result.stdout == "200", f"creating bucket {name}: HTTP {result.stdout} {result.stderr}"
        return name

    def bucket_path(self, bucket):
        """Where the posix backend keeps a bucket's objects (one file per key), for tests that inspect or
        damage them directly."""
        return self.directory / "data" / bucket

    def secret_sql(self, scope, name="lake"):
        return (f"CREATE OR REPLACE SECRET {name} (TYPE s3, KEY_ID '{self.key_id}', SECRET '{self.secret}', "
                f"ENDPOINT '{self.endpoint}', URL_STYLE 'path', USE_SSL false, REGION 'us-east-1', "
                f"SCOPE '{scope}')")

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)

    def kill(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def close(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
