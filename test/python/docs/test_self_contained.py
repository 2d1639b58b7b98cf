"""The repository is self-contained: no tracked file points a reader to an issue number or to a file outside it."""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[3]
# "issue 12", "(issue 10, read side)", "issues/12": a reader of the repository has no issue tracker to follow.
ISSUE = re.compile(r"\bissues?[ /#]+\d+\b", re.IGNORECASE)
# A path that climbs out of the checkout: the design, specs and notes the project started from live elsewhere.
OUTSIDE = re.compile(r"\.\./shared/|\.\./\.\./shared/")
TEXT = (".md", ".py", ".sh", ".cpp", ".hpp", ".def", ".txt", ".cmake", ".toml", ".yml", ".yaml", ".js", ".html", ".pml")


def tracked_text_files():
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.split()
    return [ROOT / name for name in names if name.endswith(TEXT) or name == "Makefile"]


def test_no_tracked_file_cites_an_issue_number_or_a_file_outside_the_repository():
    found = []
    for path in tracked_text_files():
        if path == pathlib.Path(__file__):
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if ISSUE.search(line) or OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "\n".join(found)


def test_the_pattern_catches_what_it_is_for():
    assert ISSUE.search("Followers (issue 11, follower side)")
    assert ISSUE.search("see issues/12")
    assert not ISSUE.search("issues += (issues.empty() ? \"\" : \"\\n\") + issue;")
    assert OUTSIDE.search("read ../shared/DESIGN.md first")
