// The review page's logic: every call goes to the REST API with the token from the login form.
"use strict";
const $ = (id) => document.getElementById(id);
const PAGE = 50;
// The branch on screen: {db, name, info, preview, table, offset}; null on the inbox.
let view = null;

class Refusal extends Error {
  constructor(code, message) { super(code + ": " + message); this.code = code; this.detail = message; }
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: {"Authorization": "Bearer " + sessionStorage.getItem("token"), "Content-Type": "application/json"},
    body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await response.json();
  if (!response.ok) throw new Refusal(data.code, data.message);
  return data;
}

const enc = encodeURIComponent;
const branchPath = (db, name) => `/api/branch/${enc(db)}/branches/${enc(name)}`;
const shown = (v) => v === null || v === undefined ? "∅" : typeof v === "object" ? JSON.stringify(v) : String(v);

const keyText = (key) => Object.entries(key).map(([k, v]) => `${k}=${shown(v)}`).join(", ");

function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = shown(text);
  if (cls) td.className = cls;
  return td;
}

function linkCell(row, text, href) {
  const a = document.createElement("a");
  a.href = href; a.textContent = text;
  row.insertCell().appendChild(a);
  return a;
}

function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

const when = (epoch) => new Date(epoch * 1000).toISOString().replace("T", " ").slice(0, 19);
const reviewHref = (db, name) => `#review/${enc(db)}/${enc(name)}`;

function notify(text) {
  $("outcome").textContent = text; $("refusal").hidden = true;
}

function refuse(error) {
  $("outcome").textContent = "";
  $("refusal-code").textContent = error.code || "error";
  $("refusal-message").textContent = error.detail || error.message;
  $("refusal").hidden = false;
}

async function login(event) {
  if (event) event.preventDefault();
  if ($("token").value) sessionStorage.setItem("token", $("token").value);
  $("token").value = "";
  try {
    const me = await api("GET", "/api/auth/whoami");
    $("who").textContent = me.principal + " (" + me.role + (me.branch_only ? ", branch-only" : "") + ")";
    $("login").hidden = true; $("app").hidden = false; $("logout").hidden = false; $("top").hidden = false;
    const databases = await api("GET", "/api/branch/databases");
    $("database").replaceChildren(...databases.map((d) => new Option(d, d)));
    await route();
  } catch (error) {
    sessionStorage.removeItem("token");
    $("login-error").textContent = error.message;
  }
}

async function route() {
  const parts = location.hash.split("/").map(decodeURIComponent);
  notify("");
  try {
    if (parts[0] === "#review" && parts.length === 3) {
      $("inbox").hidden = true; $("review").hidden = false;
      await openBranch(parts[1], parts[2]);
    } else {
      view = null;
      $("review").hidden = true; $("inbox").hidden = false;
      await Promise.all([loadInbox(), loadBranches()]);
    }
  } catch (error) {
    refuse(error);
  }
}

async function loadInbox() {
  const inbox = await api("GET", "/api/branch/inbox");
  const body = $("proposals").tBodies[0];
  body.replaceChildren();
  for (const p of inbox.proposals) {
    const tr = body.insertRow();
    tr.dataset.proposal = p.id; tr.dataset.branch = p.branch; tr.dataset.database = p.database;
    linkCell(tr, `${p.database}/${p.branch} #${p.id}`, reviewHref(p.database, p.branch));
    cell(tr, p.proposer);
    for (const n of [p.tables, p.inserted, p.updated, p.deleted]) cell(tr, n, "num");
    const conflicts = p.conflicts + (p.table_conflicts ? ` + ${p.table_conflicts} table` : "");
    cell(tr, conflicts, p.conflicts || p.table_conflicts ? "num changed" : "num");
    cell(tr, duration(p.age_seconds));
  }
  $("proposals-empty").hidden = inbox.proposals.length > 0;
  const soon = $("expiring").tBodies[0];
  soon.replaceChildren();
  for (const b of inbox.expiring) {
    const tr = soon.insertRow();
    tr.dataset.branch = b.branch; tr.dataset.database = b.database;
    linkCell(tr, `${b.database}/${b.branch}`, reviewHref(b.database, b.branch));
    cell(tr, b.owner); cell(tr, b.expires_in_seconds <= 0 ? "now" : duration(b.expires_in_seconds));
  }
  $("expiring-empty").hidden = inbox.expiring.length > 0;
}

async function loadBranches() {
  const db = $("database").value;
  if (!db) return;
  const rows = await api("GET", `/api/branch/${enc(db)}/branches?all=${$("show-all").checked}`);
  if (db !== $("database").value) return;  // another selection was made while this one loaded
  const body = $("branches").tBodies[0];
  body.replaceChildren();
  for (const b of rows) {
    const tr = body.insertRow();
    tr.dataset.branch = b.name;
    if (b.state === "live") linkCell(tr, b.name, reviewHref(db, b.name)); else cell(tr, b.name);
    cell(tr, b.owner); cell(tr, b.state); cell(tr, b.open_proposal);
    cell(tr, b.expires_at ? when(b.expires_at) : "never");
  }
}

async function openBranch(db, name) {
  view = {db, name, info: null, preview: null, table: null, offset: 0};
  $("review-title").textContent = `${db} / ${name}`;
  for (const id of ["changes", "preview", "history", "diff"]) $(id).tBodies[0].replaceChildren();
  $("diff").tHead.replaceChildren(); $("timeline").replaceChildren();
  const mine = view;
  const [info, preview, timeline, history] = await Promise.all([
    api("GET", branchPath(db, name)), api("GET", branchPath(db, name) + "/preview").catch((e) => e),
    api("GET", branchPath(db, name) + "/timeline"), api("GET", `/api/branch/${enc(db)}/history?limit=10`)]);
  if (mine !== view) return;  // another branch was opened meanwhile
  renderSummary(info);
  renderTimeline(timeline); renderHistory(history);
  if (preview instanceof Refusal) { refuse(preview); return; }
  view.preview = preview;
  renderChanges(preview); renderPreview(preview);
  if (preview.tables.length) await showTable(preview.tables[0].table, 0);
}

function renderSummary(info) {
  view.info = info;
  const open = info.proposals.find((p) => p.id === info.open_proposal);
  $("summary").textContent = `owner ${info.owner} · ${info.state}` + (info.ended_by ? ` by ${info.ended_by}` : "")
    + ` · forked at snapshot ${info.fork_snapshot}` + (info.expires_at ? ` · expires ${when(info.expires_at)}` : "")
    + (open ? ` · proposal #${open.id} by ${open.proposer}, on conflict: ${open.policy || "refuse"}`
      : " · no open proposal");
  $("merge").disabled = !open || info.state !== "live";
  $("discard").disabled = info.state !== "live";
  $("propose").disabled = info.state !== "live";
}

function renderChanges(preview) {
  const body = $("changes").tBodies[0];
  body.replaceChildren();
  for (const t of preview.tables) {
    const tr = body.insertRow();
    tr.dataset.table = t.table;
    const button = document.createElement("button");
    button.type = "button"; button.textContent = t.table; button.onclick = () => showTable(t.table, 0);
    tr.insertCell().appendChild(button);
    cell(tr, t.change);
    for (const n of [t.inserted, t.updated, t.deleted]) cell(tr, t.counts_unavailable ? "–" : n, "num");
    cell(tr, t.conflicts, "num");
  }
}

function renderPreview(preview) {
  const r = preview.refusals;
  const said = (code) => code ? `refused (${code})` : "merges";
  $("choices").textContent = `At main's snapshot ${preview.main_head}: without on_conflict the merge ${said(r.refuse)};`
    + ` main wins: ${said(r.main)}; branch wins: ${said(r.branch)}.`;
  $("table-conflicts").replaceChildren(...preview.table_conflicts.map((c) => {
    const li = document.createElement("li"); li.textContent = `${c.table}: ${c.reason}`; return li;
  }));
  const body = $("preview").tBodies[0];
  body.replaceChildren();
  for (const c of preview.conflicts) {
    const columns = c.columns.length ? c.columns : [null];
    for (const col of columns) {
      const tr = body.insertRow();
      tr.dataset.table = c.table; tr.dataset.kind = c.kind;
      const pick = (row) => row === null ? null : col === null ? row : row[col];
      cell(tr, c.table); cell(tr, keyText(c.key)); cell(tr, c.kind); cell(tr, col === null ? "(row)" : col);
      cell(tr, pick(c.fork)); cell(tr, pick(c.main)); cell(tr, pick(c.branch));
      cell(tr, pick(c.keeps.main), "keep").dataset.policy = "main";
      cell(tr, pick(c.keeps.branch), "keep").dataset.policy = "branch";
    }
  }
  for (const m of preview.key_matches) {
    const tr = body.insertRow();
    cell(tr, m.table); cell(tr, keyText(m.key)); cell(tr, "key_match"); cell(tr, m.columns.join(", "));
    cell(tr, null); cell(tr, keyText(m.main_key)); cell(tr, keyText(m.key));
    cell(tr, "main's row", "keep"); cell(tr, "branch's row", "keep");
  }
}

function renderTimeline(timeline) {
  $("timeline").replaceChildren(...timeline.events.map((e) => {
    const li = document.createElement("li");
    li.textContent = `${when(e.at)} ${e.principal || "?"} ${e.action.replace("branch.", "")}`;
    if (e.outcome !== "ok") {
      const span = document.createElement("span");
      span.className = "refused";
      span.textContent = ` ${e.outcome}: ${e.code}${e.message ? " (" + e.message + ")" : ""}`;
      li.appendChild(span);
    }
    return li;
  }));
}

function renderHistory(history) {
  const body = $("history").tBodies[0];
  body.replaceChildren();
  for (const h of history) {
    const tr = body.insertRow();
    tr.dataset.snapshot = h.snapshot_id;
    cell(tr, h.snapshot_id, "num"); cell(tr, h.created_at.replace("T", " ").slice(0, 19));
    cell(tr, h.author); cell(tr, h.message); cell(tr, h.tag);
  }
}

async function showTable(table, offset) {
  const {db, name} = view;
  const mine = view;
  const [page, schema] = await Promise.all([
    api("GET", `${branchPath(db, name)}/diff/${enc(table)}?offset=${offset}&limit=${PAGE}`).catch((e) => e),
    api("GET", `${branchPath(db, name)}/schema-diff/${enc(table)}`).catch((e) => e)]);
  if (mine !== view) return;
  view.table = table; view.offset = offset;
  renderSchema(schema);
  if (page instanceof Refusal) { refuse(page); return; }
  const last = Math.min(page.total, offset + page.rows.length);
  $("diff-title").textContent = `Row diff of ${page.table} (${page.total} rows)`;
  $("diff-range").textContent = page.total ? `rows ${offset + 1}–${last} of ${page.total}` : "no rows";
  $("diff-prev").disabled = offset === 0;
  $("diff-next").disabled = page.next_offset === null;
  const head = $("diff").tHead; head.replaceChildren();
  const hr = head.insertRow();
  for (const c of ["op"].concat(page.columns)) {
    const th = document.createElement("th"); th.textContent = c; hr.appendChild(th);
  }
  const body = $("diff").tBodies[0]; body.replaceChildren();
  for (const r of page.rows) {
    const tr = body.insertRow(); tr.className = r.op;
    cell(tr, r.op);
    for (const c of page.columns) {
      const changed = r.changed.includes(c);
      const after = r.after ? r.after[c] : r.before[c];
      const td = cell(tr, changed ? `${shown(r.before[c])} → ${shown(after)}` : after, changed ? "changed" : "");
      td.dataset.column = c;
      if (changed) td.title = `changed: was ${shown(r.before[c])}`;
    }
  }
}

function renderSchema(schema) {
  const box = $("schema");
  if (schema instanceof Refusal) { box.textContent = `${schema.code}: ${schema.detail}`; return; }
  const items = schema.columns.map((c) => `${c.change} ${c.column} ${c.type}`
    + (c.before_type ? ` (was ${c.before_type})` : ""));
  const p = document.createElement("p");
  p.textContent = items.length ? items.join("; ") : `${schema.table}: no column changes`;
  const pre = document.createElement("pre");
  pre.textContent = schema.before_sql === schema.after_sql ? (schema.after_sql || "")
    : `-- at the fork\n${schema.before_sql || "(absent)"}\n-- on the branch\n${schema.after_sql || "(dropped)"}`;
  box.replaceChildren(p, pre);
}

function confirmAction(text, verb) {
  const dialog = $("confirm");
  $("confirm-text").textContent = text; $("confirm-ok").textContent = verb;
  dialog.returnValue = "";
  dialog.showModal();
  $("confirm-ok").focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), {once: true});
  });
}

async function act(work) {
  try { notify(await work()); } catch (error) { refuse(error); }
}

async function merge() {
  const open = view.info && view.info.open_proposal;
  if (!open) return;
  const policy = view.preview ? view.preview.policy : null;
  const ok = await confirmAction(`Merge proposal #${open} of ${view.name} into main of ${view.db}`
    + ` (on conflict: ${policy || "refuse"})? This writes main.`, "Merge");
  if (!ok) { notify("merge cancelled"); return; }
  await act(async () => {
    const body = {proposal_id: open};
    if (view.preview) body.expect_main = view.preview.main_head;  // main as reviewed, or concurrent_write
    const reply = await api("POST", `${branchPath(view.db, view.name)}/merge`, body);
    return `merged as snapshot ${reply.merge.snapshot_id} (${reply.merge.tag})`;
  });
  await refreshSide();
}

async function discard() {
  const ok = await confirmAction(`Discard branch ${view.name} of ${view.db}? Its changes are dropped.`, "Discard");
  if (!ok) { notify("discard cancelled"); return; }
  await act(async () => {
    await api("DELETE", branchPath(view.db, view.name));
    return `discarded ${view.name}`;
  });
  await refreshSide();
}

async function refreshSide() {
  // After a merge or discard the branch has ended: the timeline and main's history tell what happened.
  const {db, name} = view;
  const [info, timeline, history] = await Promise.all([api("GET", branchPath(db, name)),
    api("GET", branchPath(db, name) + "/timeline"), api("GET", `/api/branch/${enc(db)}/history?limit=10`)]);
  renderSummary(info);
  renderTimeline(timeline); renderHistory(history);
}

$("login-form").onsubmit = login;
$("logout").onclick = () => { sessionStorage.removeItem("token"); location.hash = ""; location.reload(); };
$("database").onchange = loadBranches;
$("show-all").onchange = loadBranches;
$("refresh").onclick = () => act(async () => { await openBranch(view.db, view.name); return "reloaded"; });
$("propose").onclick = () => act(async () => {
  const reply = await api("POST", `${branchPath(view.db, view.name)}/propose`,
    {on_conflict: $("policy").value || null, keys: []});
  await openBranch(view.db, view.name);
  return `proposed as merge ${reply.merge.id}`;
});
$("to-inbox").onclick = (event) => {
  if (location.hash === "#inbox") { event.preventDefault(); route(); }  // no hashchange: reload it here
};
$("merge").onclick = merge;
$("discard").onclick = discard;
$("diff-prev").onclick = () => showTable(view.table, Math.max(0, view.offset - PAGE));
$("diff-next").onclick = () => showTable(view.table, view.offset + PAGE);
window.addEventListener("hashchange", () => { if (sessionStorage.getItem("token")) route(); });
if (sessionStorage.getItem("token")) login();
