"""The lists the code defines (functions, settings, error codes, log events, layers) match their generated copies
in docs/, every row has its meaning, every registered error code is raised, and the generator notices a new code."""
import pathlib
import sys

from differential_testing import EXTENSION, REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import generate_docs  # noqa: E402


def test_the_generated_lists_in_docs_match_the_code():
    for document, text in generate_docs.updated_documents(EXTENSION).items():
        on_disk = (REPO_ROOT / document).read_text()
        assert on_disk == text, f"{document} drifted from the code: run `make docs`"
        assert generate_docs.UNDESCRIBED not in text, f"{document} has rows without a meaning"


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


def test_every_registered_code_is_raised_somewhere():
    unused = [code for code, (_, files, _) in generate_docs.error_codes().items() if not files]
    assert unused == [], f"codes in src/common/error_codes.def that no source raises: {unused}"


def test_a_new_registry_entry_shows_up_in_the_table(tmp_path, monkeypatch):
    source = pathlib.Path(tmp_path / "src")
    for path in generate_docs.sources() + [generate_docs.SRC / "common" / "error_codes.def"]:
        target = source / path.relative_to(generate_docs.SRC)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    with open(source / "common" / "error_codes.def", "a") as registry:
        registry.write('DIFFERENTIAL_ERROR_CODE(MADE_UP_CODE, "made_up_code", IO,\n    "a code " "for the test")\n')
    (source / "storage" / "made_up.cpp").write_text("Fail(ErrorKind::CONFLICT, ErrorCode::MADE_UP_CODE, x);\n")
    monkeypatch.setattr(generate_docs, "SRC", source)
    rendered = generate_docs.render_error_codes()
    assert "| `made_up_code` | TransactionContext Error / IO Error | `storage/made_up.cpp` | a code for the test |" in rendered
