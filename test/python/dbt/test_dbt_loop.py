"""examples/dbt end to end: dbt builds on a branch, the branch merges into main in one step, and a
rebuild on main yields the same tables (examples/dbt/run_loop.py, run as a subprocess)."""
import json
import subprocess

from differential_testing import REPO_ROOT

EXAMPLE = REPO_ROOT / "examples" / "dbt"
DBT_PYTHON = EXAMPLE / ".venv" / "bin" / "python"
EXTENSION_REPOSITORY = REPO_ROOT / "build" / "repository"
MODEL_TABLES = ["country_names", "customer_revenue", "daily_orders"]


def run_loop(tmp_path):
    assert (EXAMPLE / ".venv" / "bin" / "dbt").exists(), (
        "dbt is not installed in examples/dbt/.venv: run `bash scripts/setup.sh` (it installs "
        "examples/dbt/requirements.txt there)")
    assert EXTENSION_REPOSITORY.is_dir(), (
        "build/repository is missing: run `bash scripts/build.sh` (the loop installs the release extension from it)")
    result = subprocess.run(
        [str(DBT_PYTHON), str(EXAMPLE / "run_loop.py"), "--repository", str(tmp_path),
         "--extension-repository", str(EXTENSION_REPOSITORY)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path, check=False)
    assert result.returncode == 0, f"run_loop.py failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout)


def test_dbt_on_a_branch_merges_into_main_and_rebuilds_the_same(tmp_path):
    out = run_loop(tmp_path)
    # Main before the merge: the sources only, untouched by the branch's build.
    assert out["main_before"]["tables"] == ["customers", "notes", "orders"]
    assert out["main_before"]["views"] == {}
    assert out["main_after_branch_build"] == out["main_before"]
    # The branch: the seed, both views, the table and the incremental model, with their real rows.
    branch = out["branch"]
    assert branch["tables"] == ["country_names", "customer_revenue", "customers", "daily_orders", "notes", "orders"]
    assert sorted(branch["views"]) == ["stg_customers", "stg_orders"]
    assert len(branch["country_names"]) == 4
    assert branch["customer_revenue"] == [
        ["1", "Ada", "Germany", "2", "20.5"], ["2", "Grace", "United States", "1", "71.0"],
        ["3", "Edsger", "Netherlands", "1", "19.99"], ["4", "Barbara", "France", "1", "5.0"]]
    assert branch["daily_orders"] == [
        ["2026-11-30", "1", "12.5"], ["2026-12-01", "1", "8.0"], ["2026-12-02", "2", "24.99"],
        ["2026-12-03", "1", "71.0"]]
    # The review: each model table reads as all inserts on the branch.
    assert out["diff"] == {t: {"insert": len(branch[t])} for t in MODEL_TABLES}
    # One merge step, a real three-way merge (main moved on meanwhile), and main now has the branch's tables.
    assert out["merge"]["merge_action"] == "merged"
    after = out["main_after_merge"]
    for table in MODEL_TABLES + ["views"]:
        assert after[table] == branch[table], table
    assert "notes" in after["tables"]
    # dbt on main afterwards: the same tables and views.
    for table in MODEL_TABLES + ["views"]:
        assert out["main_rebuilt"][table] == branch[table], table
    assert out["same_after_rebuild"] is True
