"""The install tests need what `make build` writes besides the extension: the repository and the CLI."""
import pytest

from install_testing import SHELL, published_file


@pytest.fixture(autouse=True)
def built_repository_and_shell():
    for path in (published_file(), SHELL):
        if not path.exists():
            pytest.fail(f"{path} is missing: build it with `make build` (or run `make test`)", pytrace=False)
