"""Principals and tokens: minting (shown once), salted SHA-256 storage, verification, revocation."""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import re
import secrets
import time

from .errors import ServiceError
from .state import State

TOKEN_RE = re.compile(r"^dft_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$")
PRINCIPAL_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.@-]{0,63}$")


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who a request acts as: the token's principal with the token's restrictions applied."""

    principal_id: int
    name: str
    role: str  # effective role: a --drop-admin token acts as a member
    branch_only: bool
    databases: tuple[str, ...] | None  # None: every database
    token_id: str
    expires_at: float | None

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def may_use(self, database: str) -> bool:
        return self.databases is None or database in self.databases


def _digest(salt: bytes, secret: str) -> bytes:
    return hashlib.sha256(salt + secret.encode()).digest()


def ensure_principal(state: State, name: str, role: str) -> int:
    if not PRINCIPAL_RE.match(name or ""):
        raise ServiceError("invalid_request", "a principal name is a letter, then up to 63 of [A-Za-z0-9_.@-]")
    if role not in ("member", "admin"):
        raise ServiceError("invalid_request", "role is member or admin")
    with state.write() as con:
        row = con.execute("SELECT id FROM principals WHERE name = ?", (name,)).fetchone()
        if row:
            con.execute("UPDATE principals SET role = ? WHERE id = ?", (role, row["id"]))
            return row["id"]
        created = con.execute("INSERT INTO principals (name, role, created_at) VALUES (?, ?, ?)",
                              (name, role, time.time())).lastrowid
        if created is None:
            raise ServiceError("internal", "the new principal has no id")
        return created


def mint(state: State, principal_id: int, name: str, *, branch_only: bool = False, drop_admin: bool = False,
         databases: list[str] | None = None, ttl_hours: float | None = None, parent_id: str | None = None,
         now: float | None = None) -> tuple[str, str]:
    """Returns (token id, token text). Only the salted hash is stored: the text cannot be shown again."""
    now = time.time() if now is None else now
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_bytes(16)
    expires = None if not ttl_hours else now + ttl_hours * 3600
    with state.write() as con:
        con.execute(
            "INSERT INTO tokens (id, principal_id, name, salt, hash, branch_only, drop_admin, databases, expires_at,"
            " parent_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (token_id, principal_id, name, salt, _digest(salt, secret), int(branch_only), int(drop_admin),
             None if databases is None else json.dumps(sorted(set(databases))), expires, parent_id, now),
        )
    return token_id, f"dft_{token_id}_{secret}"


def authenticate(state: State, authorization: str | None, now: float | None = None) -> Caller:
    """A dead, unknown or malformed token is refused the same way, so the answer tells an attacker nothing."""
    now = time.time() if now is None else now
    refusal = ServiceError("unauthenticated", "a live token is required: Authorization: Bearer <token>")
    text = (authorization or "").strip()
    if text.lower().startswith("bearer "):
        text = text[7:].strip()
    match = TOKEN_RE.match(text)
    if not match:
        raise refusal
    row = state.one(
        "SELECT t.*, p.name AS principal, p.role FROM tokens t JOIN principals p ON p.id = t.principal_id"
        " WHERE t.id = ?", (match.group(1),))
    if row is None or not hmac.compare_digest(row["hash"], _digest(row["salt"], match.group(2))):
        raise refusal
    if row["revoked_at"] is not None or (row["expires_at"] is not None and row["expires_at"] <= now):
        raise refusal
    role = "member" if row["drop_admin"] else row["role"]
    databases = None if row["databases"] is None else tuple(json.loads(row["databases"]))
    return Caller(row["principal_id"], row["principal"], role, bool(row["branch_only"]), databases, row["id"],
                  row["expires_at"])


def mint_child(state: State, caller: Caller, name: str, *, branch_only: bool, drop_admin: bool,
               databases: list[str] | None, ttl_hours: float | None, now: float | None = None) -> tuple[str, str]:
    """A token minted by a token: never more than its parent (branch-only, scope, role and lifetime inherit)."""
    now = time.time() if now is None else now
    if databases is not None and caller.databases is not None and not set(databases) <= set(caller.databases):
        raise ServiceError("token_scope", "a child token's databases must be within its parent's")
    scope = list(caller.databases) if databases is None and caller.databases is not None else databases
    if caller.expires_at is not None:
        left = (caller.expires_at - now) / 3600
        ttl_hours = left if not ttl_hours else min(ttl_hours, left)
    return mint(state, caller.principal_id, name, branch_only=branch_only or caller.branch_only,
                drop_admin=drop_admin or not caller.is_admin, databases=scope, ttl_hours=ttl_hours,
                parent_id=caller.token_id, now=now)


def administers(caller: Caller, principal_id: int, databases: str | None) -> bool:
    """Whether the caller may see and revoke a token: its own principal's, or as an admin one within its scope.

    Scope bounds token administration as it bounds databases: an admin scoped to some databases administers only
    tokens scoped to databases among them (an unscoped token reaches every database, so it is outside that scope).
    """
    if principal_id == caller.principal_id:
        return True
    if not caller.is_admin:
        return False
    if caller.databases is None:
        return True
    return databases is not None and set(json.loads(databases)) <= set(caller.databases)


def revoke(state: State, caller: Caller, token_id: str) -> None:
    row = state.one("SELECT principal_id, databases, revoked_at FROM tokens WHERE id = ?", (token_id,))
    if row is None or not administers(caller, row["principal_id"], row["databases"]):
        raise ServiceError("token_not_found", "no such token of yours")
    with state.write() as con:
        # Children die with their parent: a leaked parent must not leave working descendants.
        con.execute(
            "WITH RECURSIVE tree(id) AS (SELECT ? UNION SELECT t.id FROM tokens t JOIN tree ON t.parent_id = tree.id)"
            " UPDATE tokens SET revoked_at = ? WHERE id IN (SELECT id FROM tree) AND revoked_at IS NULL",
            (token_id, time.time()))


def list_tokens(state: State, caller: Caller) -> list[dict]:
    rows = state.read(
        "SELECT t.id, t.name, t.principal_id, p.name AS principal, t.branch_only, t.drop_admin, t.databases,"
        " t.expires_at, t.revoked_at, t.parent_id, t.created_at"
        " FROM tokens t JOIN principals p ON p.id = t.principal_id ORDER BY t.created_at")
    rows = [r for r in rows if administers(caller, r["principal_id"], r["databases"])]
    return [{**{k: v for k, v in dict(r).items() if k != "principal_id"}, "branch_only": bool(r["branch_only"]),
             "drop_admin": bool(r["drop_admin"]),
             "databases": None if r["databases"] is None else json.loads(r["databases"])} for r in rows]
