"""The layering and size checks that .ci/run runs: they pass on src/ and fail on a tree that breaks them."""
import pathlib
import shutil
import subprocess
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
SRC = REPO_ROOT / "src"


def run_check(script, root):
    return subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / script), "--root", str(root)],
                          capture_output=True, text=True)


def copy_of_src(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(SRC, copy)
    return copy


def test_src_passes_the_layering_check():
    result = run_check("check_layers.py", SRC)
    assert result.returncode == 0, result.stdout


def add_include(path, include):
    text = path.read_text()
    marker = "namespace differential {"
    assert marker in text
    path.write_text(text.replace(marker, f'#include "{include}"\n\n{marker}', 1))


def test_an_upward_include_fails(tmp_path):
    copy = copy_of_src(tmp_path)
    add_include(copy / "storage" / "diff_path.cpp", "catalog/attach.hpp")
    result = run_check("check_layers.py", copy)
    assert result.returncode == 1
    assert "storage/diff_path.cpp" in result.stdout and "must not include catalog/" in result.stdout


def test_a_sibling_include_fails(tmp_path):
    # merge/ and catalog/ stand side by side: neither may know the other.
    copy = copy_of_src(tmp_path)
    add_include(copy / "merge" / "ancestry.cpp", "catalog/differential_catalog.hpp")
    result = run_check("check_layers.py", copy)
    assert result.returncode == 1
    assert "merge/ancestry.cpp" in result.stdout and "must not include catalog/" in result.stdout


def test_sqlite_stays_inside_the_metadata_wrapper(tmp_path):
    copy = copy_of_src(tmp_path)
    header = copy / "metadata" / "history_store.hpp"
    header.write_text(header.read_text().replace("#pragma once", "#pragma once\n\n#include <sqlite3.h>", 1))
    result = run_check("check_layers.py", copy)
    assert result.returncode == 1
    assert "metadata/history_store.hpp" in result.stdout and "SQLite" in result.stdout


def test_src_passes_the_size_check():
    result = run_check("check_sizes.py", SRC)
    assert result.returncode == 0, result.stdout


def test_a_long_function_fails_the_size_check(tmp_path):
    root = tmp_path / "src"
    (root / "common").mkdir(parents=True)
    body = "\n".join(f"\tcount += {i};" for i in range(80))
    (root / "common" / "long.cpp").write_text(
        f"// A function one line too long.\nnamespace differential {{\n\nint Long() {{\n\tint count = 0;\n{body}\n"
        "\treturn count;\n}\n\n} // namespace differential\n")
    result = run_check("check_sizes.py", root)
    assert result.returncode == 1
    assert "common/long.cpp:4: a function of 83 lines" in result.stdout
