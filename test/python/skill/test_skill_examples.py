"""Every SQL example of the agent skill (skills/differential) runs, in order, against a fresh repository, and
returns what the skill says it returns: the skill cannot drift from the product. A statement's trailing
comment `-- returns: <python literal>` is compared with fetchall(); `-- refused: <code>` expects that refusal."""
import ast
import pathlib
import re

import duckdb
import pytest

from differential_testing import REPO_ROOT, connect

SKILL = REPO_ROOT / "skills" / "differential"
SQL_BLOCK = re.compile(r"```sql\n(.*?)```", re.S)
EXPECTATION = re.compile(r"\s--\s(returns|refused):\s(.+)$")
PLACEHOLDER_REPOSITORY = "/tmp/agent-repo"


def statements(markdown):
    """(sql, expectation kind, expected) in document order; a statement ends with ';' at the end of a line."""
    found, pending = [], []
    for block in SQL_BLOCK.findall(markdown):
        for line in block.splitlines():
            expectation = EXPECTATION.search(line)
            code = line[: expectation.start()] if expectation else line
            pending.append(code)
            if code.rstrip().endswith(";"):
                kind, expected = (expectation.group(1), expectation.group(2).strip()) if expectation else (None, None)
                found.append(("\n".join(pending).strip(), kind, expected))
                pending = []
        assert not "".join(pending).strip(), f"an SQL block ends without ';': {pending}"
    return found


def skill_files():
    return sorted(path for path in SKILL.rglob("*.md") if SQL_BLOCK.search(path.read_text()))


def test_the_skill_has_front_matter_and_examples():
    text = (SKILL / "SKILL.md").read_text()
    front = re.match(r"---\nname: (\S+)\ndescription: (.+?)\n---\n", text, re.S)
    assert front and front.group(1) == "differential" and len(front.group(2)) > 50
    for reference in re.findall(r"`(reference/[a-z-]+\.md)`", text):
        assert (SKILL / reference).exists(), reference
    assert sum(len(statements(path.read_text())) for path in skill_files()) >= 40


@pytest.mark.parametrize("path", skill_files(), ids=lambda path: str(path.relative_to(SKILL)))
def test_every_example_runs_as_written(path, tmp_path):
    con = connect()
    checked = 0
    try:
        for sql, kind, expected in statements(path.read_text()):
            sql = sql.replace(PLACEHOLDER_REPOSITORY, str(tmp_path / "repository"))
            if kind == "refused":
                with pytest.raises(duckdb.Error) as refusal:
                    con.execute(sql)
                assert f"[differential:{expected}]" in str(refusal.value), (sql, str(refusal.value))
                checked += 1
                continue
            rows = con.execute(sql).fetchall()
            if kind == "returns":
                assert rows == ast.literal_eval(expected), (sql, rows)
                checked += 1
    finally:
        con.close()
    assert checked > 0, f"{path.name} checks no result"
