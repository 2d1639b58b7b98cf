"""The checked-in OpenAPI document matches the generated one, and schemathesis finds no 500 and no stray code."""
import json
import pathlib
import subprocess
import sys

from conftest import World, live_server
from differential_server.api import create_app
from differential_server.errors import CODES
from differential_server.openapi import TARGET, document

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_checked_in_openapi_matches_the_generated_document():
    assert TARGET.read_text() == document(), (
        "docs/openapi.json drifted: regenerate it with `.venv/bin/python -m differential_server.openapi`")
    paths = json.loads(TARGET.read_text())["paths"]
    assert all(p.startswith(("/api/branch/", "/api/auth/")) for p in paths)
    assert "/api/branch/{database}/branches/{branch}/merge" in paths


def _schemathesis(url, token, report, config):
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run", f"{url}/openapi.json",
               "-H", f"Authorization: Bearer {token}", "--checks",
               "not_a_server_error,status_code_conformance,content_type_conformance",
               "--phases", "examples,coverage,fuzzing", "-n", "8", "--seed", "1", "--workers", "1",
               "--generation-database", "none", "--no-shrink", "--max-time", "30", "--request-timeout", "60",
               "--report", "junit", "--report-junit-path", str(report), "--no-color"]
    # Its caches (.schemathesis, .hypothesis) go to the run's own directory, not the checkout.
    return subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=report.parent)


def test_schemathesis_against_the_live_server_with_every_role(tmp_path):
    world = World(tmp_path / "repo")
    try:
        world.create("mia", "fuzzed")
        world.sql("mia", "UPDATE items SET price = 1 WHERE id = 1", branch="fuzzed")
        main_before = world.rows("SELECT * FROM items ORDER BY id")
        # The database and branch that exist, so the hostile values reach the branch logic, not only lookups.
        config = tmp_path / "schemathesis.toml"
        config.write_text('[parameters]\n"path.database" = "shop"\n"path.branch" = "fuzzed"\n')
        with live_server(create_app(world.service, sweep=False)) as url:
            for role in ("agent", "outsider", "mia", "rob"):
                result = _schemathesis(url, world.tokens[role], tmp_path / f"{role}.xml", config)
                assert result.returncode == 0, f"{role}:\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}"
                report = (tmp_path / f"{role}.xml").read_text()
                assert report.count("<testcase ") == 22 and 'failures="0"' in report and 'errors="0"' in report
                if role == "agent":
                    # A branch-only token: whatever it sent, main did not change.
                    assert world.rows("SELECT * FROM items ORDER BY id") == main_before
        codes = world.service.state.read("SELECT DISTINCT code FROM audit WHERE outcome != 'ok'")
        assert codes and all(r["code"] in CODES and r["code"] != "internal" for r in codes), [dict(r) for r in codes]
    finally:
        world.close()
