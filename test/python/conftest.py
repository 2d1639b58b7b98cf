"""pytest fixtures: a fresh repository per test and a connection with the extension loaded."""
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from differential_testing import EXTENSION, connect  # noqa: E402


def pytest_sessionstart(session):
    if not EXTENSION.exists():
        raise pytest.UsageError(f"{EXTENSION} is missing: build it with `make build` (or run `make test`).")


@pytest.fixture
def repository(tmp_path):
    return tmp_path / "repository"


@pytest.fixture
def con(repository):
    connection = connect(repository)
    yield connection
    connection.close()
