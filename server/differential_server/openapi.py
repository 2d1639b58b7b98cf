"""Writes the generated OpenAPI document (docs/openapi.json); a test fails when the checked-in copy drifts."""
from __future__ import annotations

import json
import pathlib
import sys

from .api import create_app

TARGET = pathlib.Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def document() -> str:
    return json.dumps(create_app(None, sweep=False).openapi(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    path.write_text(document())
    print(f"wrote {path}")
