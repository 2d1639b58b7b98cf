"""The server's refusals: one exception carrying the spec's code and HTTP status, rendered as JSON."""
from __future__ import annotations

from typing import Any

# Every code the server answers with, its status, and what it means; docs/REVIEW.md lists the same table.
CODES: dict[str, tuple[int, str]] = {
    "unauthenticated": (401, "the token is missing, unknown, expired, revoked or malformed"),
    "token_scope": (403, "the token's database scope does not name this database"),
    "admin_required": (403, "the caller is not an admin"),
    "not_owner": (403, "only the branch owner or an admin may do this"),
    "self_merge_forbidden": (403, "the caller is the proposer"),
    "branch_only_token": (403, "a branch-only token cannot merge"),
    "write_requires_branch": (403, "a branch-only token cannot write main"),
    "external_access_denied": (403, "the statement reaches outside the database (files, settings, extensions)"),
    "statement_not_allowed": (
        403, "the statement's kind is outside what SQL may do here (ATTACH, COPY, SET, LOAD, ...)"
    ),
    "function_not_allowed": (
        403, "the differential function writes a repository: that is the server's, through its API"
    ),
    "branching_disabled": (503, "the kill switch is off: branching is disabled"),
    "invalid_request": (400, "a field is malformed"),
    "invalid_branch_name": (400, "lowercase, a letter first, then letters, digits, _ or -, at most 48"),
    "invalid_ttl": (400, "a non-admin may ask for at most the default TTL"),
    "invalid_key": (400, "a --key names an unknown table or column, or a table outside the change set"),
    "from_snapshot_refused": (400, "a branch forks at main's current head"),
    "branch_of_branch": (400, "a branch cannot itself be branched"),
    "sql_error": (400, "DuckDB refused the statement"),
    "sql_timeout": (408, "the statement ran longer than sqlTimeoutSec"),
    "database_not_found": (404, "no such database"),
    "branch_not_found": (404, "no such live branch"),
    "table_not_found": (404, "no such table on the branch or at its fork"),
    "proposal_not_found": (404, "no such proposal"),
    "token_not_found": (404, "no such token"),
    "branch_exists": (409, "a live branch has this name"),
    "branch_limit": (409, "the database has maxPerDatabase live branches"),
    "branch_busy": (409, "another request is using this branch; retry"),
    "merge_conflict": (409, "a table conflict, or row conflicts and no --on-conflict"),
    "conflicts_changed": (409, "main made conflicts the proposal did not show: propose again"),
    "proposal_stale": (409, "the branch changed since it was proposed: propose again"),
    "proposal_replaced": (409, "the open proposal is not the one the merge names"),
    "already_merged": (409, "the named proposal has merged"),
    "proposal_unsettled": (409, "a merge of this branch may already be on main: merge again"),
    "concurrent_write": (409, "main kept moving, or --expect-main names another snapshot"),
    "history_gap": (409, "a snapshot from the fork on is gone: discard the branch"),
    "merge_unsupported": (422, "column changes, views or macros, or a reserved column"),
    "diff_unsupported": (422, "the table's primary key differs between fork and head, or it has none and its"
                              " columns changed: its rows have no identity to diff by"),
    "nothing_to_merge": (422, "nothing left to write: discard the branch"),
    "internal": (500, "an unexpected failure; nothing was changed"),
}


class ServiceError(Exception):
    """A refusal with a documented code; `extra` goes into the JSON body next to code and message."""

    def __init__(self, code: str, message: str, **extra: Any):
        if code not in CODES:
            raise ValueError(f"undocumented code {code}")
        super().__init__(message)
        self.code = code
        self.status = CODES[code][0]
        self.message = message
        self.extra = extra

    def body(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.extra}
