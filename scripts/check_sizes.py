#!/usr/bin/env python3
"""Fails when a function in src/ is longer than 80 lines or a file longer than 700: past those sizes a piece
does several things and is split before anything is added to it. Run by .ci/run; `--root DIR` checks another tree."""
import argparse
import pathlib
import re
import sys

MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 700
# A function body opens at column 0 (clang-format puts namespace-scope definitions there) or one tab in
# (methods defined inside a class); lambdas and blocks inside a body are part of it.
SIGNATURE_END = re.compile(r"\)\s*(const\s*)?(noexcept\s*)?(override\s*)?(->\s*[\w:<>&*, ]+\s*)?(:.*)?\{\s*$")


def function_spans(lines):
    """Yields (first line, line count) of every function body defined at namespace or class scope."""
    depth = 0
    start = None
    start_depth = 0
    for number, line in enumerate(lines, 1):
        code = re.sub(r"'(\\.|[^'\\])'", "''", re.sub(r'"(\\.|[^"\\])*"', '""', line)).split("//")[0]
        if start is None and SIGNATURE_END.search(code) and depth <= 2 and not code.lstrip().startswith(
                ("if", "for", "while", "switch", "else", "do", "try", "catch", "namespace", "class", "struct")):
            start = number
            start_depth = depth
        depth += code.count("{") - code.count("}")
        if start is not None and depth <= start_depth:
            yield start, number - start + 1
            start = None


def violations(root: pathlib.Path):
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".cpp", ".hpp") or not path.is_file():
            continue
        lines = path.read_text().splitlines()
        rel = path.relative_to(root).as_posix()
        if len(lines) > MAX_FILE_LINES:
            yield f"{rel}: {len(lines)} lines (at most {MAX_FILE_LINES})"
        for first, count in function_spans(lines):
            if count > MAX_FUNCTION_LINES:
                yield f"{rel}:{first}: a function of {count} lines (at most {MAX_FUNCTION_LINES})"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parents[1] / "src", type=pathlib.Path)
    args = parser.parse_args()
    found = list(violations(args.root))
    for v in found:
        print(v)
    print(f"size check: {len(found)} piece(s) over the limits")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
