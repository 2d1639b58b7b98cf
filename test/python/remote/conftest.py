"""Fixtures of the remote read tests: a source database made by the wheel alone, and the store its export goes to,
once as a file:// directory and once as a bucket of the test's versitygw server."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from remote_fixtures import Store, make_source  # noqa: E402


@pytest.fixture
def source(tmp_path):
    return make_source(tmp_path / "source.duckdb")


@pytest.fixture(params=["file", "s3"])
def store(request, tmp_path):
    if request.param == "file":
        root = tmp_path / "bucket" / "lake"
        root.mkdir(parents=True)
        return Store("file", f"file://{root}/", root)
    s3 = request.getfixturevalue("s3")
    # s3.url is s3://<bucket>/lake/; the posix backend keeps each key as a plain file in the bucket's directory.
    prefix = s3.url.split("/", 3)[3]
    root = pathlib.Path(s3.path) / prefix
    root.mkdir(parents=True, exist_ok=True)
    return Store("s3", s3.url, root, s3.secret_sql)
