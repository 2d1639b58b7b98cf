"""`differential-server`: serve, mint tokens locally, and drive branches over REST with profiles."""
from __future__ import annotations

import json
import os
import pathlib
import sys
from typing import Any

import httpx
import tomllib
import typer

from . import tokens
from .config import load_settings
from .state import State

app = typer.Typer(help="The differential review server and its client.", no_args_is_help=True)
auth_app = typer.Typer(help="Principals and tokens (local: writes the server's state file).", no_args_is_help=True)
token_app = typer.Typer(help="Tokens.", no_args_is_help=True)
branch_app = typer.Typer(help="Branches, over REST (a --profile or DIFFERENTIAL_URL / DIFFERENTIAL_TOKEN).",
                         no_args_is_help=True)
app.add_typer(auth_app, name="auth")
auth_app.add_typer(token_app, name="token")
app.add_typer(branch_app, name="branch")
PROFILE: dict[str, Any] = {}


@app.callback()
def main_options(profile: str | None = typer.Option(None, help="a [profile] of the profiles file"),
                 url: str | None = typer.Option(None, help="the server, e.g. http://127.0.0.1:8787")) -> None:
    """Profiles live in ~/.config/differential/profiles.toml: url and token_env (the variable holding the token)."""
    PROFILE.clear()
    if profile:
        default = "~/.config/differential/profiles.toml"
        path = pathlib.Path(os.environ.get("DIFFERENTIAL_PROFILES", default)).expanduser()
        profiles = tomllib.loads(path.read_text()) if path.exists() else {}
        if profile not in profiles:
            raise typer.BadParameter(f"no profile [{profile}] in {path}")
        PROFILE.update(profiles[profile])
    if url:
        PROFILE["url"] = url


@app.command()
def serve(repository: pathlib.Path | None = typer.Option(None), host: str | None = None,
          port: int | None = None, config: pathlib.Path | None = None) -> None:
    """Serve REST, MCP (streamable HTTP at /mcp) and the review page over one repository."""
    import uvicorn

    from .api import create_app
    from .service import Service
    settings = load_settings(config, repository=repository, host=host, port=port)
    service = Service(settings)
    typer.echo(f"differential review server on http://{settings.host}:{settings.port}/ (repository"
               f" {settings.repository})", err=True)
    uvicorn.run(create_app(service), host=settings.host, port=settings.port, log_level="info")


@app.command("serve-demo")
def serve_demo(repository: pathlib.Path = typer.Option(..., help="a fresh directory for the demo repository"),
               host: str | None = None, port: int | None = None) -> None:
    """Seeds a TPC-H-like database, mints a one-time admin token, prints it and the page's address, serves."""
    import uvicorn

    from .api import create_app
    from .demo import seed_tpch_like
    from .service import Service
    settings = load_settings(repository=repository, host=host, port=port)
    settings.repository.mkdir(parents=True, exist_ok=True)
    seed_tpch_like(settings.repository, settings.extension)
    service = Service(settings)
    principal = tokens.ensure_principal(service.state, "admin", "admin")
    _, text = tokens.mint(service.state, principal, "admin", ttl_hours=24)
    service.state.audit("auth.token.create", "ok", "serve-demo", detail={"principal": "admin"})
    typer.echo(f"\nrepository: {settings.repository}\nadmin token (shown once, valid 24 h): {text}\n"
               f"review page: http://{settings.host}:{settings.port}/\n"
               f"MCP (streamable HTTP): http://{settings.host}:{settings.port}/mcp\n")
    uvicorn.run(create_app(service), host=settings.host, port=settings.port, log_level="warning")


@app.command("mcp-stdio")
def mcp_stdio(repository: pathlib.Path | None = typer.Option(None), config: pathlib.Path | None = None) -> None:
    """MCP over stdio for a local agent; the token comes from DIFFERENTIAL_TOKEN. Owns the repository itself."""
    from .mcp_tools import build_mcp
    from .service import Service
    service = Service(load_settings(config, repository=repository))
    build_mcp(service, stdio_token=os.environ.get("DIFFERENTIAL_TOKEN")).run("stdio")


@token_app.command("create")
def token_create(name: str = typer.Option(..., help="the principal the token acts as"),
                 role: str = typer.Option("member", help="member or admin"),
                 branch_only: bool = typer.Option(False, "--branch-only"),
                 drop_admin: bool = typer.Option(False, "--drop-admin"),
                 database: list[str] = typer.Option([], help="repeatable; none: every database"),
                 ttl: float | None = typer.Option(None, help="hours; none: no expiry"),
                 repository: pathlib.Path | None = typer.Option(None)) -> None:
    """Mint a token; it is printed once and only its salted hash is kept."""
    settings = load_settings(repository=repository)
    state = State(settings.state_path)
    principal = tokens.ensure_principal(state, name, role)
    token_id, text = tokens.mint(state, principal, name, branch_only=branch_only, drop_admin=drop_admin,
                                 databases=database or None, ttl_hours=ttl)
    state.audit("auth.token.create", "ok", "cli", detail={"token_id": token_id, "principal": name, "role": role})
    typer.echo(json.dumps({"id": token_id, "token": text, "principal": name, "role": role}))


@token_app.command("revoke")
def token_revoke(token_id: str, repository: pathlib.Path | None = typer.Option(None)) -> None:
    settings = load_settings(repository=repository)
    state = State(settings.state_path)
    admin = tokens.Caller(0, "cli", "admin", False, None, "cli", None)
    tokens.revoke(state, admin, token_id)
    state.audit("auth.token.revoke", "ok", "cli", detail={"token_id": token_id})
    typer.echo(json.dumps({"id": token_id, "revoked": True}))


def _client() -> httpx.Client:
    url = PROFILE.get("url") or os.environ.get("DIFFERENTIAL_URL", "http://127.0.0.1:8787")
    token = os.environ.get(PROFILE.get("token_env", "DIFFERENTIAL_TOKEN"), "")
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=660)


def _call(method: str, path: str, **kwargs: Any) -> None:
    with _client() as client:
        response = client.request(method, path, **kwargs)
    typer.echo(json.dumps(response.json(), indent=2))
    if response.status_code >= 400:
        sys.exit(1)


@branch_app.command("create")
def branch_create(db: str = typer.Option(...), name: str = typer.Option(...),
                  ttl_hours: float | None = typer.Option(None)) -> None:
    _call("POST", f"/api/branch/{db}/branches", json={"name": name, "ttl_hours": ttl_hours})


@branch_app.command("list")
def branch_list(db: str = typer.Option(...), all: bool = typer.Option(False, "--all")) -> None:
    _call("GET", f"/api/branch/{db}/branches", params={"all": all})


@branch_app.command("show")
def branch_show(db: str = typer.Option(...), branch: str = typer.Option(...)) -> None:
    _call("GET", f"/api/branch/{db}/branches/{branch}")


@branch_app.command("changes")
def branch_changes(db: str = typer.Option(...), branch: str = typer.Option(...)) -> None:
    _call("GET", f"/api/branch/{db}/branches/{branch}/changes")


@branch_app.command("diff")
def branch_diff(db: str = typer.Option(...), branch: str = typer.Option(...), table: str = typer.Option(...),
                schema: str = typer.Option("main"), offset: int = 0, limit: int = 100) -> None:
    _call("GET", f"/api/branch/{db}/branches/{branch}/diff/{table}", params={"offset": offset, "limit": limit})


@branch_app.command("propose")
def branch_propose(db: str = typer.Option(...), branch: str = typer.Option(...),
                   on_conflict: str | None = typer.Option(None), key: list[str] = typer.Option([]),
                   nested: str | None = typer.Option(None), base: str | None = typer.Option(None)) -> None:
    _call("POST", f"/api/branch/{db}/branches/{branch}/propose",
          json={"on_conflict": on_conflict, "keys": key, "nested": nested, "base": base})


@branch_app.command("merge")
def branch_merge(db: str = typer.Option(...), branch: str = typer.Option(...), proposal: int = typer.Option(...),
                 expect_main: int | None = typer.Option(None)) -> None:
    body = {"proposal_id": proposal, "expect_main": expect_main}
    _call("POST", f"/api/branch/{db}/branches/{branch}/merge", json=body)


@branch_app.command("discard")
def branch_discard(db: str = typer.Option(...), branch: str = typer.Option(...)) -> None:
    _call("DELETE", f"/api/branch/{db}/branches/{branch}")


@app.command("sql")
def run_sql(statement: str, db: str = typer.Option(...), branch: str | None = typer.Option(None)) -> None:
    """Run SQL on a branch (or main) through the server."""
    _call("POST", f"/api/branch/{db}/sql", json={"sql": statement, "branch": branch})


def main() -> None:
    app()


if __name__ == "__main__":
    main()
