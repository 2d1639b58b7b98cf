"""Server settings: the spec's branching defaults, read from a config file and DIFFERENTIAL_* variables."""
from __future__ import annotations

import json
import os
import pathlib
import re
from typing import Any

import tomllib
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
DEFAULT_EXTENSION = REPO_ROOT / "build" / "release" / "differential.duckdb_extension"


class Settings(BaseSettings):
    """Every key has the spec's default; env names are DIFFERENTIAL_<KEY> (e.g. DIFFERENTIAL_SWEEP_SEC)."""

    model_config = SettingsConfigDict(env_prefix="DIFFERENTIAL_", extra="ignore")

    repository: pathlib.Path = pathlib.Path("/var/lib/differential")
    extension: pathlib.Path = DEFAULT_EXTENSION
    host: str = "127.0.0.1"
    port: int = 8787
    enabled: bool = True
    default_ttl_hours: int = Field(168, ge=0)
    sweep_sec: int = 300
    max_per_database: int = Field(20, ge=1)
    merge_timeout_sec: int = Field(600, ge=1)
    merge_max_attempts: int = Field(5, ge=1)
    sql_timeout_sec: int = Field(60, ge=1)
    diff_page_max: int = Field(1000, ge=1)

    @field_validator("sweep_sec")
    @classmethod
    def _sweep_floor(cls, value: int) -> int:
        # The spec's 60 s floor: a faster sweep would contend with merges for main's lock for nothing.
        return max(60, value)

    @field_validator("repository", "extension")
    @classmethod
    def _absolute(cls, value: pathlib.Path) -> pathlib.Path:
        return value.expanduser().absolute()

    @property
    def state_path(self) -> pathlib.Path:
        return self.repository / "review-server.sqlite"


def load_settings(config_file: str | os.PathLike | None = None, **overrides: Any) -> Settings:
    """Config file values first, then DIFFERENTIAL_* variables over them, then explicit overrides."""
    values: dict[str, Any] = {}
    path = config_file or os.environ.get("DIFFERENTIAL_CONFIG")
    if path:
        text = pathlib.Path(path).read_text()
        values = json.loads(text) if str(path).endswith(".json") else tomllib.loads(text)
        # The spec's own spelling (maxPerDatabase) and kebab-case are accepted next to snake_case.
        values = {re.sub(r"(?<!^)(?=[A-Z])", "_", k).replace("-", "_").lower(): v
                  for k, v in values.get("branching", values).items()}
    for key in list(values):
        if f"DIFFERENTIAL_{key.upper()}" in os.environ:
            values.pop(key)
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**values)
