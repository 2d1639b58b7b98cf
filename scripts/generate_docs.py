#!/usr/bin/env python3
"""Writes the lists the code defines into docs/: the SQL functions and settings (read from DuckDB with the
extension loaded), the error codes and log events (read from src/), the layers (scripts/check_layers.py).
Each list sits between `<!-- generated:<name> -->` and `<!-- end generated:<name> -->`; everything else in
the docs is written by hand. `--check` changes nothing and fails on drift (test/python/docs runs it).

Usage: generate_docs.py [--check] [--extension PATH]   (default: build/release/differential.duckdb_extension)"""
import argparse
import collections
import difflib
import pathlib
import re
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
SRC = REPO_ROOT / "src"
DOCS = REPO_ROOT / "docs"
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import check_layers  # noqa: E402  (the layer rules live there; the table is made from them)

KIND_TO_DUCKDB = {
    "INVALID_INPUT": "Invalid Input Error",
    "NOT_FOUND": "Catalog Error",
    "CONFLICT": "TransactionContext Error",
    "IO": "IO Error",
    "INVALID": "Invalid Error",
    "PERMISSION": "Permission Error",
    "INTERNAL": "INTERNAL Error",
}


def sources():
    return sorted(p for p in SRC.rglob("*") if p.suffix in (".cpp", ".hpp") and p.is_file())


def relative(path):
    return path.relative_to(SRC).as_posix()


def error_codes():
    """code -> (kinds, files, meaning) from the registry src/common/error_codes.def: the kind it is raised with,
    any other kind a raise names (`Fail(ErrorKind::<KIND>, ErrorCode::<NAME>, ...)`), and the files that use it."""
    registry = (SRC / "common" / "error_codes.def").read_text()
    texts = {path: path.read_text() for path in sources() if path.parent.name != "common" or "error" not in path.name}
    found = {}
    entry = re.compile(r'^DIFFERENTIAL_ERROR_CODE\(([A-Z0-9_]+), "([a-z0-9_]+)", ([A-Z_]+),((?:\s*"(?:[^"\\]|\\.)*")+)\)', re.M)
    for name, code, kind, meaning in entry.findall(registry):
        pieces = re.findall(r'"((?:[^"\\]|\\.)*)"', meaning)
        kinds = {kind}
        files = set()
        for path, text in texts.items():
            uses = re.findall(rf"(?:ErrorKind::([A-Z_]+),\s*)?ErrorCode::{name}\b", text)
            if uses:
                files.add(relative(path))
                kinds.update(other for other in uses if other)
        found[code] = (kinds, files, "".join(pieces).replace('\\"', '"').replace("\\\\", "\\"))
    return dict(sorted(found.items()))


def merge_phases():
    text = (SRC / "merge" / "merge_states.hpp").read_text()
    table = text[text.index("MERGE_PHASES[]") :]
    return re.findall(r'\{MergePhase::[A-Z]+, "([a-z_]+)"', table[: table.index("};")])


def log_events():
    """event -> (levels, files). Names are literals at the call, the merge phases (`"merge_" + phase`), or
    the name a LoggedObjectStore is built with."""
    found = collections.defaultdict(lambda: (set(), set()))

    def add(event, level, path):
        levels, files = found[event]
        levels.add(level)
        files.add(relative(path))

    for path in sources():
        if path.parent.name == "common" and path.stem == "logging":
            continue
        text = path.read_text()
        for match in re.finditer(r"\bLog(Event|Warning)\(([^;]*?),", text):
            level = "INFO" if match.group(1) == "Event" else "WARNING"
            for literal in re.findall(r'"([a-z_]+)"', match.group(2)):
                if literal.endswith("_"):
                    for phase in merge_phases():
                        add(literal + phase, level, path)
                else:
                    add(literal, level, path)
        for match in re.finditer(r'\bLoggedObjectStore\s+\w+\([^;]*?"([a-z_]+)"\)', text):
            add(match.group(1), "INFO", REPO_ROOT / "src" / "remote" / "logged_object_store.cpp")
    return dict(sorted(found.items()))


def code_list(values):
    return ", ".join(f"`{value}`" for value in sorted(values))


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


UNDESCRIBED = "**(to describe)**"


def descriptions(block):
    """name -> the last cell of its row in the current block: the one column written by hand, kept as it is."""
    found = {}
    for line in block.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        for name in re.findall(r"`([a-z0-9_]+)/?`", cells[0]):
            found[name] = cells[-1]
    return found


def render_error_codes():
    rows = [
        [f"`{code}`", " / ".join(KIND_TO_DUCKDB[kind] for kind in sorted(kinds)), code_list(files) or "—", meaning]
        for code, (kinds, files, meaning) in error_codes().items()
    ]
    return table(["code", "DuckDB error type", "raised or handled in (`src/`)", "meaning"], rows)


def render_error_meanings():
    """The registry as an agent needs it: the code, the error type it shows as, what it means."""
    rows = [[f"`{code}`", " / ".join(KIND_TO_DUCKDB[kind] for kind in sorted(kinds)), meaning]
            for code, (kinds, _, meaning) in error_codes().items()]
    return table(["code", "shows as", "meaning"], rows)


def render_log_events(block):
    described = descriptions(block)
    rows = [[f"`{event}`", " / ".join(sorted(levels)), code_list(files), described.get(event, UNDESCRIBED)]
            for event, (levels, files) in log_events().items()]
    return table(["event", "level", "emitted in (`src/`)", "what it reports"], rows)


def render_layers(block):
    rows = []
    for layer, allowed in check_layers.ALLOWED.items():
        duckdb = "no" if layer in check_layers.NO_DUCKDB else "yes"
        rows.append([f"`{layer}/`", code_list(allowed) if allowed else "—", duckdb,
                     descriptions(block).get(layer, UNDESCRIBED)])
    return table(["layer", "may include", "may include DuckDB", "holds"], rows)


def connect(extension):
    import duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute(f"LOAD '{extension}'")
    return con


def render_functions(con):
    rows = con.execute(
        """
        SELECT function_name, function_type, parameters, parameter_types
        FROM duckdb_functions()
        WHERE function_name LIKE 'differential%' AND database_name = 'system'
        ORDER BY function_name, len(parameters), parameters::VARCHAR
        """
    ).fetchall()
    headings = set(re.findall(r"^#+ `([a-z_]+)`", (DOCS / "SQL_REFERENCE.md").read_text(), re.M))
    lines = []
    for name, kind, parameters, types in rows:
        # DuckDB names positional parameters col0, col1, ...; named ones are optional (`name => value`).
        arguments = ", ".join(t if re.fullmatch(r"col\d+", p) else f"{p} => {t}" for p, t in zip(parameters, types))
        section = f"[below](#{name})" if name in headings else "not documented"
        lines.append([f"`{name}`", kind, f"`{arguments}`" if arguments else "—", section])
    return table(["function", "kind", "arguments", "reference"], lines)


def render_settings(con):
    rows = con.execute(
        """
        SELECT name, input_type, value, description FROM duckdb_settings()
        WHERE name LIKE 'differential%' ORDER BY name
        """
    ).fetchall()
    lines = [[f"`{name}`", kind, "(unset)" if value is None else f"`{value}`", description] for name, kind, value, description in rows]
    return table(["setting", "type", "default", "description"], lines)


def blocks(extension):
    """(document, name) -> how to render that block from its current text."""
    con = connect(extension)
    return con, {
        ("docs/SQL_REFERENCE.md", "functions"): lambda block: render_functions(con),
        ("docs/SQL_REFERENCE.md", "settings"): lambda block: render_settings(con),
        ("docs/SQL_REFERENCE.md", "error-codes"): lambda block: render_error_codes(),
        ("docs/DURABILITY.md", "log-events"): render_log_events,
        ("docs/ARCHITECTURE.md", "layers"): render_layers,
        ("skills/differential/reference/errors.md", "error-codes"): lambda block: render_error_meanings(),
    }


def markers(name):
    return f"<!-- generated:{name} -->", f"<!-- end generated:{name} -->"


def updated_documents(extension):
    """document -> its text with every generated block rendered afresh."""
    con, renderers = blocks(extension)
    documents = {}
    try:
        for (document, name), render in renderers.items():
            text = documents.get(document) or (REPO_ROOT / document).read_text()
            begin, end = markers(name)
            if begin not in text or end not in text:
                raise SystemExit(f"{document} has no {begin} ... {end} block: add the markers where it belongs")
            head, rest = text.split(begin, 1)
            block, tail = rest.split(end, 1)
            documents[document] = f"{head}{begin}\n{render(block.strip())}\n{end}{tail}"
    finally:
        con.close()
    return documents


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail on drift instead of writing")
    parser.add_argument("--extension", default=str(REPO_ROOT / "build" / "release" / "differential.duckdb_extension"))
    args = parser.parse_args()
    problems = []
    for document, text in updated_documents(args.extension).items():
        path = REPO_ROOT / document
        if UNDESCRIBED in text:
            problems.append(f"{document}: rows marked {UNDESCRIBED}: write what each one is")
        if path.read_text() == text:
            continue
        if args.check:
            problems.append("\n".join(difflib.unified_diff(path.read_text().splitlines(), text.splitlines(),
                                                           document, "generated", lineterm="")))
        else:
            path.write_text(text)
            print(f"updated {document}")
    if problems:
        print("\n".join(problems))
        print("the generated lists in docs/ are stale or incomplete: run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
