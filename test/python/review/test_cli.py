"""The `differential-server` CLI: local token minting, and the branch workflow over REST with profiles."""
import json
import os
import subprocess
import sys

from conftest import World, live_server
from differential_server.api import create_app


def run(args, env, expect=0):
    result = subprocess.run([sys.executable, "-m", "differential_server.cli", *args], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == expect, f"{args}: {result.stdout}\n{result.stderr}"
    return json.loads(result.stdout)


def test_cli_workflow_with_profiles(tmp_path):
    world = World(tmp_path / "repo")
    try:
        with live_server(create_app(world.service, sweep=False)) as url:
            profiles = tmp_path / "profiles.toml"
            profiles.write_text(f'[agent]\nurl = "{url}"\ntoken_env = "AGENT_TOKEN"\n\n'
                                f'[reviewer]\nurl = "{url}"\ntoken_env = "REVIEWER_TOKEN"\n')
            env = dict(os.environ, DIFFERENTIAL_PROFILES=str(profiles), REVIEWER_TOKEN=world.tokens["rob"])
            minted = run(["auth", "token", "create", "--name", "cliagent", "--branch-only", "--database", "shop",
                          "--ttl", "2", "--repository", str(world.repository)], env)
            assert minted["token"].startswith(f"dft_{minted['id']}_")
            env["AGENT_TOKEN"] = minted["token"]
            agent, reviewer = ["--profile", "agent"], ["--profile", "reviewer"]

            assert run(agent + ["branch", "create", "--db", "shop", "--name", "viacli", "--ttl-hours", "5"],
                       env)["state"] == "live"
            assert run(agent + ["sql", "UPDATE items SET price = 4242 WHERE id = 2", "--db", "shop", "--branch",
                                "viacli"], env)["changed"] is True
            assert run(agent + ["sql", "DELETE FROM items", "--db", "shop"], env,
                       expect=1)["code"] == "write_requires_branch"
            changes = run(agent + ["branch", "changes", "--db", "shop", "--branch", "viacli"], env)
            assert [(t["table"], t["updated"]) for t in changes["tables"]] == [("items", 1)]
            diff = run(agent + ["branch", "diff", "--db", "shop", "--branch", "viacli", "--table", "items"], env)
            assert diff["rows"][0]["after"]["price"] == 4242
            pid = run(agent + ["branch", "propose", "--db", "shop", "--branch", "viacli", "--on-conflict", "main"],
                      env)["merge"]["id"]
            merge = ["branch", "merge", "--db", "shop", "--branch", "viacli", "--proposal", str(pid)]
            assert run(agent + merge, env, expect=1)["code"] == "branch_only_token"
            assert run(reviewer + merge, env)["merge"]["approver"] == "rob"
            listed = run(reviewer + ["branch", "list", "--db", "shop", "--all"], env)
            assert [(b["name"], b["state"]) for b in listed] == [("viacli", "merged")]
            assert run(reviewer + ["branch", "show", "--db", "shop", "--branch", "viacli"],
                       env)["proposals"][0]["state"] == "merged"

            run(["auth", "token", "revoke", minted["id"], "--repository", str(world.repository)], env)
            assert run(agent + ["branch", "list", "--db", "shop"], env, expect=1)["code"] == "unauthenticated"
        assert world.rows("SELECT price FROM items WHERE id = 2") == [[4242]]
    finally:
        world.close()
