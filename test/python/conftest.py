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


@pytest.fixture(scope="session")
def s3_server():
    """One versitygw for the session (it starts in ~0.1 s, but each test gets its own bucket)."""
    from s3_server import VersityGW

    server = VersityGW()
    yield server
    server.close()


@pytest.fixture
def s3(s3_server, request):
    """A fresh bucket; `s3.url` is a DATA_PATH in it and `s3.secret_sql` the secret that reaches it."""
    import re
    import secrets as random

    bucket = s3_server.create_bucket("t" + random.token_hex(6) + "-" + re.sub(r"[^a-z0-9]", "", request.node.name.lower())[:40])

    class Bucket:
        server = s3_server
        name = bucket
        url = f"s3://{bucket}/lake/"
        secret_sql = s3_server.secret_sql(f"s3://{bucket}/")
        path = s3_server.bucket_path(bucket)

    return Bucket
