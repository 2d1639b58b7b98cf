// The review page's logic: every call goes to the REST API with the token from the login form.
"use strict";
const $ = (id) => document.getElementById(id);
let current = null;

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: {"Authorization": "Bearer " + sessionStorage.getItem("token"), "Content-Type": "application/json"},
    body: body === undefined ? undefined : JSON.stringify(body)});
  const data = await response.json();
  if (!response.ok) throw new Error(data.code + ": " + data.message);
  return data;
}

function cell(row, text, cls) {
  const td = row.insertCell();
  td.textContent = text === null || text === undefined ? "∅" : String(text);
  if (cls) td.className = cls;
  return td;
}

async function login(event) {
  if (event) event.preventDefault();
  if ($("token").value) sessionStorage.setItem("token", $("token").value);
  $("token").value = "";
  try {
    const me = await api("GET", "/api/auth/whoami");
    $("who").textContent = me.principal + " (" + me.role + (me.branch_only ? ", branch-only" : "") + ")";
    $("login").hidden = true; $("app").hidden = false; $("logout").hidden = false;
    const databases = await api("GET", "/api/branch/databases");
    $("database").replaceChildren(...databases.map((d) => new Option(d, d)));
    await loadBranches();
  } catch (error) {
    sessionStorage.removeItem("token");
    $("login-error").textContent = error.message;
  }
}

async function loadBranches() {
  const db = $("database").value;
  const rows = await api("GET", `/api/branch/${db}/branches?all=${$("show-all").checked}`);
  if (db !== $("database").value) return;  // another selection was made while this one loaded
  const body = $("branches").tBodies[0];
  body.replaceChildren();
  for (const b of rows) {
    const tr = body.insertRow();
    tr.className = "selectable"; tr.dataset.branch = b.name;
    cell(tr, b.name); cell(tr, b.owner); cell(tr, b.state); cell(tr, b.open_proposal);
    cell(tr, b.expires_at ? new Date(b.expires_at * 1000).toISOString() : "never");
    if (b.state === "live") tr.onclick = () => openBranch(b.name);
  }
}

async function openBranch(name) {
  current = name;
  const db = $("database").value;
  $("branch").hidden = false; $("branch-title").textContent = name; $("message").textContent = "";
  const info = await api("GET", `/api/branch/${db}/branches/${name}`);
  if (info.open_proposal) $("proposal").value = info.open_proposal;
  const changes = await api("GET", `/api/branch/${db}/branches/${name}/changes`);
  if (name !== current) return;
  const body = $("changes").tBodies[0];
  body.replaceChildren();
  for (const t of changes.tables) {
    const tr = body.insertRow();
    tr.className = "selectable"; tr.dataset.table = t.table;
    cell(tr, t.table); cell(tr, t.change);
    for (const n of [t.inserted, t.updated, t.deleted]) cell(tr, t.counts_unavailable ? "–" : n);
    cell(tr, t.conflicts);
    tr.onclick = () => showDiff(t.table);
  }
  const items = changes.table_conflicts.map((c) => `${c.table}: ${c.reason}`)
    .concat(changes.conflicts.map((c) => `${c.table} ${JSON.stringify(c.key)}: ${c.kind} on ${c.columns.join(", ")}`));
  $("conflicts").replaceChildren(...items.map((text) => { const li = document.createElement("li"); li.textContent = text; return li; }));
  $("diff").tHead.replaceChildren(); $("diff").tBodies[0].replaceChildren();
}

async function showDiff(table) {
  const db = $("database").value;
  const page = await api("GET", `/api/branch/${db}/branches/${current}/diff/${table}?limit=200`);
  $("diff-title").textContent = `Row diff of ${page.table} (${page.total} rows)`;
  const head = $("diff").tHead; head.replaceChildren();
  const hr = head.insertRow();
  for (const c of ["op"].concat(page.columns)) { const th = document.createElement("th"); th.textContent = c; hr.appendChild(th); }
  const body = $("diff").tBodies[0]; body.replaceChildren();
  for (const r of page.rows) {
    const tr = body.insertRow(); tr.className = r.op;
    cell(tr, r.op);
    for (const c of page.columns) {
      const changed = r.changed.includes(c);
      const after = r.after ? r.after[c] : r.before[c];
      const td = cell(tr, changed ? `${r.before[c]} → ${after}` : after, changed ? "changed" : "");
      td.dataset.column = c;
    }
  }
}

async function act(work) {
  try { $("message").textContent = await work(); } catch (error) { $("message").textContent = error.message; }
}

$("login-form").onsubmit = login;
$("logout").onclick = () => { sessionStorage.removeItem("token"); location.reload(); };
$("database").onchange = loadBranches;
$("show-all").onchange = loadBranches;
$("propose").onclick = () => act(async () => {
  const reply = await api("POST", `/api/branch/${$("database").value}/branches/${current}/propose`,
    {on_conflict: $("policy").value || null, keys: []});
  $("proposal").value = reply.merge.id;
  await loadBranches();
  return `proposed as merge ${reply.merge.id}`;
});
$("merge").onclick = () => act(async () => {
  const reply = await api("POST", `/api/branch/${$("database").value}/branches/${current}/merge`,
    {proposal_id: Number($("proposal").value)});
  await loadBranches();
  return `merged as snapshot ${reply.merge.snapshot_id} (${reply.merge.tag})`;
});
$("discard").onclick = () => act(async () => {
  await api("DELETE", `/api/branch/${$("database").value}/branches/${current}`);
  await loadBranches();
  return `discarded ${current}`;
});
if (sessionStorage.getItem("token")) login();
