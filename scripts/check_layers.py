#!/usr/bin/env python3
"""Fails when an include in src/ points up the layer stack (docs/ARCHITECTURE.md §1), or across layers that must not
know each other. Run by .ci/run before the tests; `--root DIR` checks another tree (the tests use it)."""
import argparse
import pathlib
import re
import sys

# Who may include whom. A layer may always include itself. "layer/file.hpp" admits one header of a layer
# (an interface a lower layer declares for the one above to implement).
ALLOWED = {
    "common": set(),
    "storage": {"common"},
    "metadata": {"common", "storage/file_catalog.hpp", "storage/diff_path.hpp", "storage/remote_image.hpp"},
    "remote": {"common", "storage/object_store.hpp", "storage/remote_image.hpp", "storage/content_cache.hpp",
               "storage/remote_fetch.hpp", "storage/chunk_geometry.hpp"},
    "repository": {"common", "storage", "metadata"},
    "export": {"common", "storage", "metadata", "remote", "repository", "merge/merge_publisher.hpp"},
    "host": {"common", "storage", "metadata", "remote", "repository", "export", "merge/merge_publisher.hpp"},
    "maintenance": {"common", "storage", "metadata", "repository"},
    "merge": {"common", "metadata", "storage"},
    "replication": {"common", "storage", "metadata", "remote", "repository", "export", "host"},
    "catalog": {"common", "storage", "metadata", "remote", "repository", "export", "host", "replication"},
    "functions": {"common", "storage", "metadata", "remote", "repository", "export", "host", "catalog", "maintenance",
                  "merge", "replication"},
}
# Headers of a layer that a permitted neighbour must still not see: storage internals stay inside storage.
PRIVATE = {
    "merge": {"storage/index_page.hpp", "storage/chunk_geometry.hpp"},
}
# Layers that must not see DuckDB at all (metadata is plain SQLite; common's DuckDB glue lives in named files).
NO_DUCKDB = {"metadata", "remote", "export"}
# Only this file may include SQLite's own header: no SQLite type reaches any other file.
SQLITE_HEADER_OWNER = "metadata/sqlite.cpp"

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def violations(src: pathlib.Path):
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".h") or not path.is_file():
            continue
        rel = path.relative_to(src).as_posix()
        layer = rel.split("/")[0] if "/" in rel else None
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = match.group(2)
            where = f"{rel}:{number}: includes {target}"
            if target == "sqlite3.h" and rel != SQLITE_HEADER_OWNER:
                yield f"{where}: only {SQLITE_HEADER_OWNER} may include SQLite's header"
            if layer is None or match.group(1) == "<":
                continue
            target_layer = target.split("/")[0] if "/" in target else None
            if target_layer == "duckdb" or target.startswith("duckdb"):
                if layer in NO_DUCKDB:
                    yield f"{where}: the {layer} layer must not depend on DuckDB"
                continue
            if target_layer is None or target_layer == layer:
                continue
            if target_layer not in ALLOWED:
                yield f"{where}: unknown layer {target_layer}"
                continue
            if layer not in ALLOWED:
                yield f"{where}: {layer}/ is not a known layer; add it to scripts/check_layers.py"
                continue
            allowed = ALLOWED[layer]
            if target in PRIVATE.get(layer, set()):
                yield f"{where}: {target} is internal to {target_layer}/ and hidden from {layer}/"
            elif target_layer not in allowed and target not in allowed:
                yield f"{where}: {layer}/ must not include {target_layer}/ (see docs/ARCHITECTURE.md §1)"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parents[1] / "src", type=pathlib.Path)
    args = parser.parse_args()
    found = list(violations(args.root))
    for v in found:
        print(v)
    if found:
        print(f"layering check: {len(found)} forbidden include(s)")
        return 1
    print("layering check: every include points down the stack")
    return 0


if __name__ == "__main__":
    sys.exit(main())
