"""`make demo`: without a terminal it runs the scripted walk-through and ends; from a terminal (a pseudo-terminal
here) it ends in the CLI on the demo's repository, with the extension installed from the repository and loaded."""
import os
import pty
import re
import select
import subprocess
import sys

from differential_testing import REPO_ROOT

DEMO = REPO_ROOT / "scripts" / "demo.py"


def test_without_a_terminal_the_demo_runs_the_walkthrough_and_ends(tmp_path):
    result = subprocess.run(
        [sys.executable, str(DEMO), str(tmp_path / "demo")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    assert "-- Maintain the history: drop a branch, expire snapshots, reclaim space" in result.stdout
    assert "Opening the DuckDB CLI" not in result.stdout


def read_until(fd, pattern, seen):
    """Reads the terminal until pattern appears in everything read so far, or (pattern None) until it closes."""
    while pattern is None or not re.search(pattern, seen[0]):
        ready, _, _ = select.select([fd], [], [], 300)
        assert ready, f"nothing more from the terminal; waited for {pattern!r} after:\n{seen[0][-2000:]}"
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the other side closed: Linux reports EIO
            chunk = b""
        if not chunk:
            break
        seen[0] += chunk.decode("utf-8", "replace")
    return seen[0]


def test_from_a_terminal_the_demo_ends_in_the_cli(tmp_path):
    controller, terminal = pty.openpty()
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    process = subprocess.Popen(
        [sys.executable, str(DEMO), str(tmp_path / "demo")],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=environment,
        close_fds=True,
    )
    os.close(terminal)
    seen = [""]
    try:
        text = read_until(controller, r"differential's shell over DuckDB's C\+\+ API[\s\S]*D $", seen)
        assert "D LOAD differential;" in text
        os.write(controller, b"SELECT count(*) AS orders FROM shop.orders;\n")
        os.write(controller, b"SELECT extension_version FROM duckdb_extensions() WHERE loaded AND installed "
                 b"AND extension_name = 'differential';\n.quit\n")
        text = read_until(controller, None, seen)
        assert process.wait(timeout=300) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(controller)
    answers = text.split("SELECT count(*) AS orders FROM shop.orders;", 1)[1]
    assert re.search(r"│ orders │\r?\n├─+┤\r?\n│\s+3 │", answers), answers
    assert re.search(r"│ v\d+\.\d+\.\d+\s+│", answers), answers
