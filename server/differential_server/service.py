"""The one service every interface calls: authentication, scope, the kill switch and audit around each action."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from . import branches, diff, merge, proposals, review, sql, tokens
from .changes import analyze
from .config import Settings
from .engine import Engine
from .errors import ServiceError
from .state import State
from .tokens import Caller

log = logging.getLogger("differential_server")


class Service:
    def __init__(self, settings: Settings, clock: Callable[[], float] = time.time):
        self.settings = settings
        self.clock = clock
        settings.repository.mkdir(parents=True, exist_ok=True)
        self.state = State(settings.state_path)
        self.engine = Engine(settings)
        self._stop = threading.Event()

    def close(self) -> None:
        self._stop.set()
        self.engine.close()

    # -- authentication and the checks every branch action shares ------------------------------------------

    def authenticate(self, authorization: str | None) -> Caller:
        try:
            return tokens.authenticate(self.state, authorization, self.clock())
        except ServiceError as refusal:
            # The presented text is never recorded: a typo'd token is still most of a secret.
            self.state.audit("auth.refused", "refused", code=refusal.code)
            raise

    def _run(self, action: str, caller: Caller | None, database: str | None, branch: str | None,
             work: Callable[[], Any], audit_ok: bool = True, branch_action: bool = True) -> Any:
        who = caller.name if caller else None
        try:
            if branch_action and not self.settings.enabled:
                raise ServiceError("branching_disabled", "branching is disabled on this server (DIFFERENTIAL_ENABLED)")
            if database is not None:
                if caller is not None and not caller.may_use(database):
                    raise ServiceError("token_scope", f"this token's database scope does not name {database!r}")
                self.engine.require_database(database)
            result = work()
        except ServiceError as refusal:
            self.state.audit(action, "refused", who, database, branch, refusal.code, {"message": refusal.message})
            raise
        except Exception as error:  # noqa: BLE001 - every failure leaves a record and a documented code
            log.exception("%s failed", action)
            self.state.audit(action, "failed", who, database, branch, "internal", {"error": type(error).__name__})
            raise ServiceError("internal", f"{action} failed unexpectedly; nothing was changed") from error
        if audit_ok:
            self.state.audit(action, "ok", who, database, branch)
        return result

    # -- branches -------------------------------------------------------------------------------------------

    def create_branch(self, caller: Caller, database: str, name: str, ttl_hours: float | None = None,
                      from_snapshot: int | None = None, parent: str | None = None) -> dict:
        return self._run("branch.create", caller, database, name, lambda: branches.create(
            self.engine, self.state, caller, database, name, ttl_hours, from_snapshot, parent, self.settings,
            self.clock()))

    def list_branches(self, caller: Caller, database: str, include_ended: bool = False) -> list[dict]:
        return self._run("branch.list", caller, database, None,
                         lambda: branches.list_branches(self.state, database, include_ended), audit_ok=False)

    def show_branch(self, caller: Caller, database: str, name: str) -> dict:
        return self._run("branch.show", caller, database, name, lambda: branches.show(self.state, database, name),
                         audit_ok=False)

    def discard_branch(self, caller: Caller, database: str, name: str) -> dict:
        return self._run("branch.discard", caller, database, name, lambda: branches.discard(
            self.engine, self.state, caller, database, name, self.clock()))

    def sweep(self) -> list[dict]:
        if not self.settings.enabled:
            return []
        return branches.sweep(self.engine, self.state, self.clock())

    def sweeper(self) -> threading.Thread:
        """The expiry sweep on its own thread, every sweepSec; the first pass runs at start."""
        def loop() -> None:
            while not self._stop.is_set():
                try:
                    self.sweep()
                except Exception:  # noqa: BLE001 - a failed pass is logged and retried at the next interval
                    log.exception("expiry sweep failed")
                self._stop.wait(self.settings.sweep_sec)
        thread = threading.Thread(target=loop, name="differential-sweep", daemon=True)
        thread.start()
        return thread

    # -- SQL ------------------------------------------------------------------------------------------------

    def _live(self, database: str, branch: str | None) -> None:
        if branch is not None:
            branches.live_branch(self.state, database, branch)

    def run_sql(self, caller: Caller, database: str, statement: str, branch: str | None = None) -> dict:
        def work() -> dict:
            self._live(database, branch)
            return sql.run_sql(self.engine, caller, database, branch, statement, self.settings.sql_timeout_sec)
        action = "branch.write" if branch else "branch.sql_main"
        return self._run(action, caller, database, branch, work, branch_action=branch is not None)

    def list_tables(self, caller: Caller, database: str, branch: str | None = None) -> list[dict]:
        def work() -> list[dict]:
            self._live(database, branch)
            return sql.list_tables(self.engine, database, branch)
        return self._run("branch.list_tables", caller, database, branch, work, audit_ok=False,
                         branch_action=branch is not None)

    def describe_table(self, caller: Caller, database: str, table: str, branch: str | None = None) -> dict:
        def work() -> dict:
            self._live(database, branch)
            return sql.describe_table(self.engine, database, branch, table)
        return self._run("branch.describe_table", caller, database, branch, work, audit_ok=False,
                         branch_action=branch is not None)

    # -- changes, diff, propose, merge ------------------------------------------------------------------------

    def _heads(self, database: str, name: str) -> tuple[int, int]:
        branches.live_branch(self.state, database, name)
        heads = self.engine.branch_head(database, name)
        if heads is None:
            raise ServiceError("branch_not_found", f"branch {name!r} has no differential branch")
        return heads

    def changes(self, caller: Caller, database: str, name: str) -> dict:
        def work() -> dict:
            fork, head = self._heads(database, name)
            with self.engine.gate(database).shared():
                main_head = self.engine.snapshot_main_if_dirty(database, caller.name, f"main at changes of {name}")
                return analyze(self.engine, database, name, fork, head, main_head)
        return self._run("branch.changes", caller, database, name, work, audit_ok=False)

    def diff(self, caller: Caller, database: str, name: str, table: str, offset: int = 0, limit: int = 100) -> dict:
        def work() -> dict:
            if offset < 0 or not 1 <= limit <= self.settings.diff_page_max:
                raise ServiceError("invalid_request", f"offset >= 0 and 1 <= limit <= {self.settings.diff_page_max}")
            fork, head = self._heads(database, name)
            return diff.row_diff(self.engine, database, fork, head, table, offset, limit)
        return self._run("branch.diff", caller, database, name, work, audit_ok=False)

    def diff_arrow(self, caller: Caller, database: str, name: str, table: str) -> Iterator[bytes]:
        def work() -> Iterator[bytes]:
            fork, head = self._heads(database, name)
            return diff.row_diff_arrow(self.engine, database, fork, head, table)
        return self._run("branch.diff", caller, database, name, work, audit_ok=False)

    def schema_diff(self, caller: Caller, database: str, name: str, table: str) -> dict:
        def work() -> dict:
            fork, head = self._heads(database, name)
            return diff.schema_diff(self.engine, database, fork, head, table)
        return self._run("branch.schema_diff", caller, database, name, work, audit_ok=False)

    def propose(self, caller: Caller, database: str, name: str, on_conflict: str | None = None,
                keys: Any = None, nested: str | None = None, base: str | None = None) -> dict:
        return self._run("branch.propose", caller, database, name, lambda: proposals.propose(
            self.engine, self.state, caller, database, name, on_conflict, keys, self.clock(), nested, base))

    def merge(self, caller: Caller, database: str, name: str, proposal_id: int, expect_main: int | None = None) -> dict:
        return self._run("branch.merge", caller, database, name, lambda: merge.merge(
            self.engine, self.state, self.settings, caller, database, name, proposal_id, expect_main))

    # -- the reviewer's reads: inbox, main's history, a branch's timeline, the merge preview ----------------------

    def inbox(self, caller: Caller, expiring_hours: float = 24.0) -> dict:
        """Only the databases the token may read: another database's proposals are not even counted."""
        return self._run("branch.inbox", caller, None, None,
                         lambda: review.inbox(self.state, self.databases(caller), self.clock(), expiring_hours),
                         audit_ok=False)

    def history(self, caller: Caller, database: str, limit: int = 20) -> list[dict]:
        return self._run("branch.history", caller, database, None,
                         lambda: review.history(self.engine, database, limit), audit_ok=False,
                         branch_action=False)

    def timeline(self, caller: Caller, database: str, name: str) -> dict:
        return self._run("branch.timeline", caller, database, name, lambda: review.timeline(self.state, database, name),
                         audit_ok=False)

    def preview(self, caller: Caller, database: str, name: str) -> dict:
        def work() -> dict:
            self._heads(database, name)
            return review.preview(self.engine, self.state, database, name, caller.name)
        return self._run("branch.preview", caller, database, name, work, audit_ok=False)

    # -- tokens, audit ----------------------------------------------------------------------------------------

    def create_token(self, caller: Caller, name: str, branch_only: bool = False, drop_admin: bool = False,
                     databases: list[str] | None = None, ttl_hours: float | None = None) -> dict:
        def work() -> dict:
            token_id, text = tokens.mint_child(self.state, caller, name, branch_only=branch_only, drop_admin=drop_admin,
                                               databases=databases, ttl_hours=ttl_hours, now=self.clock())
            return {"id": token_id, "token": text, "principal": caller.name}
        return self._run("auth.token.create", caller, None, None, work, branch_action=False)

    def revoke_token(self, caller: Caller, token_id: str) -> dict:
        def work() -> dict:
            tokens.revoke(self.state, caller, token_id)
            return {"id": token_id, "revoked": True}
        return self._run("auth.token.revoke", caller, None, None, work, branch_action=False)

    def list_tokens(self, caller: Caller) -> list[dict]:
        return tokens.list_tokens(self.state, caller)

    def audit_log(self, caller: Caller, limit: int = 200, action: str | None = None) -> list[dict]:
        def work() -> list[dict]:
            if not caller.is_admin:
                raise ServiceError("admin_required", "the audit log is for admins")
            where: list[str] = ["1 = 1"]
            params: list[str] = []
            if action is not None:
                where, params = where + ["action LIKE ?"], params + [action + "%"]
            if caller.databases is not None:
                # A scoped admin reads the records of its databases only: not other databases' activity, nor the
                # server-wide auth records.
                where.append(f"database IN ({', '.join('?' * len(caller.databases))})" if caller.databases else "0 = 1")
                params += list(caller.databases)
            rows = self.state.read("SELECT * FROM audit WHERE " + " AND ".join(where) + " ORDER BY id DESC LIMIT ?",
                                   params + [limit])
            return [dict(r) for r in rows]
        return self._run("auth.audit", caller, None, None, work, audit_ok=False, branch_action=False)

    def databases(self, caller: Caller) -> list[str]:
        self.engine.adopt_new_databases()
        return [d for d in sorted(self.engine.main_dirty) if caller.may_use(d)]
