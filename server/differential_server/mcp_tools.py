"""MCP tools for agents over the official SDK (streamable HTTP and stdio); there is no merge tool, by design."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from .errors import ServiceError
from .service import Service
from .tokens import Caller

INSTRUCTIONS = ("Write on a branch of a differential database, read its changes and row diff, and propose it. "
                "A human merges proposals; agents cannot. Every tool acts as the bearer token's principal.")


def build_mcp(service: Service, stdio_token: str | None = None) -> MCPServer:
    """Tools authenticate per call: the HTTP Authorization header, or for stdio the token the process was given."""
    server = MCPServer("differential", instructions=INSTRUCTIONS, version="0.1.0")

    async def call(ctx: Context, work: Callable[[Caller], Any]) -> str:
        headers = ctx.headers
        authorization = headers.get("authorization") if headers is not None else (
            f"Bearer {stdio_token}" if stdio_token else None)

        def run() -> Any:
            return work(service.authenticate(authorization))
        try:
            result = await anyio.to_thread.run_sync(run)
        except ServiceError as refusal:
            raise ToolError(json.dumps(refusal.body(), default=str)) from None
        return json.dumps(result, default=str)

    @server.tool()
    async def create_branch(database: str, name: str, ctx: Context, ttl_hours: float | None = None) -> str:
        """Create a writable branch of the database at main's current state."""
        return await call(ctx, lambda c: service.create_branch(c, database, name, ttl_hours))

    @server.tool()
    async def run_sql(database: str, sql: str, ctx: Context, branch: str | None = None) -> str:
        """Run SQL on a branch (or read main without one). Writes on a branch are snapshotted as you."""
        return await call(ctx, lambda c: service.run_sql(c, database, sql, branch))

    @server.tool()
    async def list_tables(database: str, ctx: Context, branch: str | None = None) -> str:
        """List the tables of main or of a branch."""
        return await call(ctx, lambda c: service.list_tables(c, database, branch))

    @server.tool()
    async def describe_table(database: str, table: str, ctx: Context, branch: str | None = None) -> str:
        """Columns, types and primary key of one table on main or on a branch."""
        return await call(ctx, lambda c: service.describe_table(c, database, table, branch))

    @server.tool()
    async def branch_changes(database: str, branch: str, ctx: Context) -> str:
        """Tables the branch changed (created, dropped, recreated, modified, altered) with row counts and conflicts."""
        return await call(ctx, lambda c: service.changes(c, database, branch))

    @server.tool()
    async def branch_diff(database: str, branch: str, table: str, ctx: Context, offset: int = 0,
                          limit: int = 100) -> str:
        """Row-level diff of one table between the branch's fork and its head, one page at a time."""
        return await call(ctx, lambda c: service.diff(c, database, branch, table, offset, limit))

    @server.tool()
    async def propose(database: str, branch: str, ctx: Context, on_conflict: str | None = None,
                      keys: list[str] | None = None, nested: str | None = None, base: str | None = None) -> str:
        """Propose the branch for merging; a reviewer merges it by the returned merge.id. nested='fields' merges
        STRUCT values field by field; base='virtual' merges a criss-cross history's bases into a virtual base."""
        return await call(ctx, lambda c: service.propose(c, database, branch, on_conflict, keys, nested, base))

    return server
