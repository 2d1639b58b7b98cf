"""The REST API under /api/branch and /api/auth, the review page, and MCP mounted at /mcp, as one ASGI app."""
from __future__ import annotations

import contextlib
import pathlib
from typing import Any, Literal, cast

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

from .errors import CODES, ServiceError
from .mcp_tools import build_mcp
from .service import Service
from .tokens import Caller

WEB = pathlib.Path(__file__).resolve().parent / "web"
ARROW = "application/vnd.apache.arrow.stream"


class ErrorBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    code: str = Field(description="one of the documented codes (docs/REVIEW.md)")
    message: str


class BranchCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=200)
    ttl_hours: float | None = Field(None, ge=0, le=100000)
    from_snapshot: int | None = Field(None, ge=-(2**31), le=2**31)
    parent: str | None = Field(None, max_length=200)


class SqlRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sql: str = Field(max_length=100000)
    branch: str | None = Field(None, max_length=200)


class ProposeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    on_conflict: Literal["main", "branch"] | None = None
    keys: list[str] = Field(default_factory=list, max_length=100)
    # 'fields' merges STRUCT values field by field (conflicts then name field paths such as settings.theme).
    nested: Literal["whole", "fields"] | None = None
    # 'virtual' merges a criss-cross history's best common ancestors into a virtual base (the extension's option).
    base: Literal["selected", "virtual"] | None = None


class MergeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    proposal_id: int = Field(ge=1, le=2**31)
    expect_main: int | None = Field(None, ge=-(2**31), le=2**31)


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=100)
    branch_only: bool = False
    drop_admin: bool = False
    databases: list[str] | None = Field(None, max_length=100)
    ttl_hours: float | None = Field(None, gt=0, le=100000)


ERRORS: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorBody, "description": ", ".join(c for c, (s, _) in CODES.items() if s == status)}
    for status in sorted({s for s, _ in CODES.values()})}


def create_app(service: Service | None, sweep: bool = True) -> FastAPI:
    """`service` None builds the same routes for the OpenAPI document alone (no repository, no extension)."""
    # Without a service no route body ever runs (only the document is read), so the routes may take one as given.
    served = cast(Service, service)
    mcp = build_mcp(served)
    mcp_app = mcp.streamable_http_app(streamable_http_path="/mcp",
                                      host=service.settings.host if service else "127.0.0.1")

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI):
        if sweep and service is not None:
            service.sweeper()
        async with mcp.session_manager.run():
            yield

    app = FastAPI(title="differential review server", version="0.1.0", lifespan=lifespan,
                  description="Agents propose, humans merge: branches, changes, diffs, proposals and merges over a"
                              " differential repository. Every refusal is a JSON body with a documented code.")
    bearer = HTTPBearer(auto_error=False)

    def caller(credentials: HTTPAuthorizationCredentials | None = Depends(bearer)) -> Caller:
        return served.authenticate(f"Bearer {credentials.credentials}" if credentials else None)

    @app.exception_handler(ServiceError)
    async def refused(_: Request, error: ServiceError) -> JSONResponse:
        return JSONResponse(error.body(), status_code=error.status)

    @app.exception_handler(RequestValidationError)
    async def malformed(_: Request, error: RequestValidationError) -> JSONResponse:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in error.errors()})
        return JSONResponse({"code": "invalid_request", "message": "malformed request", "fields": fields}, 400)

    _auth_routes(app, served, caller)
    _branch_routes(app, served, caller)
    app.mount("/static", StaticFiles(directory=WEB), name="static")

    @app.get("/", include_in_schema=False)
    def page() -> FileResponse:
        return FileResponse(WEB / "index.html")

    app.mount("/", mcp_app)
    return app


def _auth_routes(app: FastAPI, service: Service, caller: Any) -> None:
    @app.get("/api/auth/whoami", tags=["auth"], responses=ERRORS)
    def whoami(c: Caller = Depends(caller)) -> dict:
        return {"principal": c.name, "role": c.role, "branch_only": c.branch_only,
                "databases": list(c.databases) if c.databases is not None else None, "token_id": c.token_id,
                "expires_at": c.expires_at}

    @app.post("/api/auth/tokens", tags=["auth"], status_code=201, responses=ERRORS)
    def create_token(body: TokenCreate, c: Caller = Depends(caller)) -> dict:
        """Mint a child token of the caller's token; it is shown once and never more than its parent."""
        return service.create_token(c, body.name, body.branch_only, body.drop_admin, body.databases, body.ttl_hours)

    @app.get("/api/auth/tokens", tags=["auth"], responses=ERRORS)
    def list_tokens(c: Caller = Depends(caller)) -> list[dict]:
        return service.list_tokens(c)

    @app.delete("/api/auth/tokens/{token_id}", tags=["auth"], responses=ERRORS)
    def revoke_token(token_id: str, c: Caller = Depends(caller)) -> dict:
        return service.revoke_token(c, token_id)

    @app.get("/api/auth/audit", tags=["auth"], responses=ERRORS)
    def audit(limit: int = Query(200, ge=1, le=10000), action: str | None = Query(None, max_length=100),
              c: Caller = Depends(caller)) -> list[dict]:
        """The audit log (admins): every create, write, propose, merge, discard, expiry and refusal."""
        return service.audit_log(c, limit, action)


def _branch_routes(app: FastAPI, service: Service, caller: Any) -> None:
    base = "/api/branch/{database}"

    @app.get("/api/branch/databases", tags=["branch"], responses=ERRORS)
    def databases(c: Caller = Depends(caller)) -> list[str]:
        return service.databases(c)

    @app.get("/api/branch/inbox", tags=["review"], responses=ERRORS)
    def inbox(expiring_hours: float = Query(24, ge=0, le=100000), c: Caller = Depends(caller)) -> dict:
        """Open proposals of every database the token may read, oldest first, and the branches about to expire."""
        return service.inbox(c, expiring_hours)

    @app.get(base + "/history", tags=["review"], responses=ERRORS)
    def history(database: str, limit: int = Query(20, ge=1, le=1000), c: Caller = Depends(caller)) -> list[dict]:
        """Main's newest snapshots, newest first, with author, message and tag."""
        return service.history(c, database, limit)

    @app.get(base + "/branches/{branch}/timeline", tags=["review"], responses=ERRORS)
    def timeline(database: str, branch: str, c: Caller = Depends(caller)) -> dict:
        """The branch's audit records since it was created: writes, proposals, refusals, merge or discard."""
        return service.timeline(c, database, branch)

    @app.get(base + "/branches/{branch}/preview", tags=["review"], responses=ERRORS)
    def preview(database: str, branch: str, c: Caller = Depends(caller)) -> dict:
        """The merge as it would be decided at main's head: each conflict's rows and what each policy keeps."""
        return service.preview(c, database, branch)

    @app.get(base + "/branches", tags=["branch"], responses=ERRORS)
    def list_branches(database: str, all: bool = False, c: Caller = Depends(caller)) -> list[dict]:
        return service.list_branches(c, database, all)

    @app.post(base + "/branches", tags=["branch"], status_code=201, responses=ERRORS)
    def create_branch(database: str, body: BranchCreate, c: Caller = Depends(caller)) -> dict:
        return service.create_branch(c, database, body.name, body.ttl_hours, body.from_snapshot, body.parent)

    @app.get(base + "/branches/{branch}", tags=["branch"], responses=ERRORS)
    def show_branch(database: str, branch: str, c: Caller = Depends(caller)) -> dict:
        return service.show_branch(c, database, branch)

    @app.delete(base + "/branches/{branch}", tags=["branch"], responses=ERRORS)
    def discard_branch(database: str, branch: str, c: Caller = Depends(caller)) -> dict:
        return service.discard_branch(c, database, branch)

    @app.get(base + "/branches/{branch}/changes", tags=["branch"], responses=ERRORS)
    def changes(database: str, branch: str, c: Caller = Depends(caller)) -> dict:
        return service.changes(c, database, branch)

    binary = {"schema": {"type": "string", "format": "binary"}}
    arrow: dict[int | str, dict[str, Any]] = {200: {"content": {ARROW: binary},
                   "description": "one page as JSON, or with Accept: " + ARROW + " the whole diff as one stream"}}

    @app.get(base + "/branches/{branch}/diff/{table}", tags=["branch"], responses={**ERRORS, **arrow})
    def diff(database: str, branch: str, table: str, request: Request, offset: int = Query(0, ge=0, le=2**31),
             limit: int = Query(100, ge=1, le=1000), c: Caller = Depends(caller)) -> Any:
        """Row diff of one table since the fork: JSON pages, or the whole diff as an Arrow IPC stream."""
        if ARROW in request.headers.get("accept", ""):
            return StreamingResponse(service.diff_arrow(c, database, branch, table), media_type=ARROW)
        return service.diff(c, database, branch, table, offset, limit)

    @app.get(base + "/branches/{branch}/schema-diff/{table}", tags=["branch"], responses=ERRORS)
    def schema_diff(database: str, branch: str, table: str, c: Caller = Depends(caller)) -> dict:
        return service.schema_diff(c, database, branch, table)

    @app.post(base + "/branches/{branch}/propose", tags=["branch"], responses=ERRORS)
    def propose(database: str, branch: str, body: ProposeRequest, c: Caller = Depends(caller)) -> dict:
        return service.propose(c, database, branch, body.on_conflict, body.keys, body.nested, body.base)

    @app.post(base + "/branches/{branch}/merge", tags=["branch"], responses=ERRORS)
    def merge(database: str, branch: str, body: MergeRequest, c: Caller = Depends(caller)) -> dict:
        return service.merge(c, database, branch, body.proposal_id, body.expect_main)

    @app.post(base + "/sql", tags=["branch"], responses=ERRORS)
    def run_sql(database: str, body: SqlRequest, c: Caller = Depends(caller)) -> dict:
        return service.run_sql(c, database, body.sql, body.branch)

    @app.get(base + "/tables", tags=["branch"], responses=ERRORS)
    def list_tables(database: str, branch: str | None = None, c: Caller = Depends(caller)) -> list[dict]:
        return service.list_tables(c, database, branch)

    @app.get(base + "/tables/{table}", tags=["branch"], responses=ERRORS)
    def describe_table(database: str, table: str, branch: str | None = None, c: Caller = Depends(caller)) -> dict:
        return service.describe_table(c, database, table, branch)
