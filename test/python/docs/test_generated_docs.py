"""The lists the code defines (functions, settings, error codes, log events, layers) match their generated copies
in docs/, every row has its hand-written meaning, and the generator does notice a new code."""
import pathlib
import sys

from differential_testing import EXTENSION, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import generate_docs  # noqa: E402


def test_the_generated_lists_in_docs_match_the_code():
    for document, text in generate_docs.updated_documents(EXTENSION).items():
        on_disk = (generate_docs.DOCS / document).read_text()
        assert on_disk == text, f"docs/{document} drifted from the code: run `make docs`"
        assert generate_docs.UNDESCRIBED not in text, f"docs/{document} has rows without a meaning"


def test_the_lists_are_not_empty():
    """A scan that matched nothing would leave empty tables that still 'match'."""
    con = generate_docs.connect(EXTENSION)
    try:
        assert generate_docs.render_functions(con).count("`differential_") >= 30
        assert generate_docs.render_settings(con).count("`differential_") >= 9
    finally:
        con.close()
    codes = generate_docs.error_codes()
    assert {"branch_locked", "merge_conflict", "view_output", "invalid_data_path"} <= codes.keys()
    assert codes["view_output"][0] == {"INVALID_INPUT"}
    events = generate_docs.log_events()
    assert {"publish", "group_commit", "merge_comparison", "cleanup_request"} <= events.keys()


def test_a_new_error_code_shows_up_undescribed(tmp_path, monkeypatch):
    source = pathlib.Path(tmp_path / "src")
    for path in generate_docs.sources():
        target = source / path.relative_to(generate_docs.SRC)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    (source / "storage" / "made_up.cpp").write_text('Fail(ErrorKind::IO, "made_up_code", "x");\n')
    monkeypatch.setattr(generate_docs, "SRC", source)
    rendered = generate_docs.render_error_codes("")
    assert f"| `made_up_code` | IO Error | `storage/made_up.cpp` | {generate_docs.UNDESCRIBED} |" in rendered
