// The operators' console: the REST back office (/admin, docs/operators.md) for a staff
// account. Operators see every action; a support account reads everything and the page
// shows it no control that changes anything (the API refuses it them all the same).
import { $, el, request, variantName } from "./page.js";
import { initReplayer, openReplayer } from "./replayer.js";
import { initTournaments, loadTournaments, openTournament, tournamentShown } from "./console_tournaments.js";
import { editRotation, initRotations, rotationLine } from "./console_rotation.js";

const REFRESH_SECONDS = 2;
const STAFF = ["operator", "support"];
const PAGE = 20;

const state = {
  token: sessionStorage.getItem("stud.console.token"),
  name: sessionStorage.getItem("stud.console.name"),
  role: null,
  search: { prefix: "", offset: 0 },
  player: null,            // the player on show: { name, entriesBefore, handsBefore }
  audit: { filters: {}, before: null },
  hands: { rows: new Map(), filters: {}, asked: 0 },  // the hands found: id -> row (GET /admin/hands)
  tableNames: null,        // table id -> name, for a hand opened by its id alone
};

// ------------------------------------------------------------------ calls and messages

async function api(method, path, body) {
  try {
    return await request(method, path, body, state.token);
  } catch (error) {
    if (error.status === 401 && state.token) signedOut(describe(error));
    throw error;
  }
}

const describe = (error) => (error.code ? `${error.code}: ${error.message}` : error.message);
const query = (params) => new URLSearchParams(
  Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== ""),
).toString();
const when = (iso) => (iso ? iso.replace("T", " ").slice(0, 19) + " UTC" : "");
const json = (value) => (value === null || value === undefined ? "–" : JSON.stringify(value));

function notify(text, kind = "ok") {
  const n = $("notice");
  n.textContent = text;
  n.className = kind;
  n.hidden = !text;
  clearTimeout(notify.timer);
  if (text) notify.timer = setTimeout(() => { n.hidden = true; }, kind === "ok" ? 6000 : 15000);
}
const fail = (error) => notify(describe(error), "fail");

// ------------------------------------------------------------------ sign-in and views

const VIEWS = ["auth", "tables", "players", "player", "tournaments", "tournament", "hands", "audit", "books", "nodes"];

function show(view) {
  for (const v of VIEWS) $(`${v}-view`).hidden = v !== view;
  const signedIn = Boolean(state.token && state.role);
  $("who").hidden = $("nav").hidden = !signedIn;
  $("me-name").textContent = state.name || "";
  $("me-role").textContent = state.role || "";
  document.body.classList.toggle("read-only", state.role !== "operator");
  const tab = { player: "players", tournament: "tournaments" }[view] || view;
  for (const a of $("nav").querySelectorAll("a")) a.classList.toggle("current", a.dataset.view === tab);
}

async function route() {
  if (!state.token) { show("auth"); return; }
  if (!state.role) {
    try {
      const me = await api("GET", "/me");
      if (!STAFF.includes(me.role)) { await signOut(`${me.username} is not a staff account`); return; }
      state.role = me.role;
    } catch (error) { if (state.token) fail(error); return; }
  }
  const [, view = "tables", arg, params = ""] = location.hash.match(/^#\/(\w+)(?:\/([^?]+))?(?:\?(.*))?$/) || [];
  if (view === "players" && arg) await openPlayer(decodeURIComponent(arg));
  else if (view === "hands") { show("hands"); await findHands(new URLSearchParams(params), arg); }
  else if (view === "players") { show("players"); await searchPlayers(); }
  else if (view === "tournaments" && arg) { if (await openTournament(Number(arg))) show("tournament"); }
  else if (view === "tournaments") { show("tournaments"); await loadTournaments(); }
  else if (view === "audit") { show("audit"); await loadAudit(); }
  else if (view === "books") { show("books"); await loadBooks(); }
  else if (view === "nodes") { show("nodes"); await loadNodes(); }
  else { show("tables"); await refreshTables(); }
}

async function signIn(event) {
  event.preventDefault();
  const username = $("username").value.trim();
  $("auth-error").textContent = "";
  try {
    const { access_token: token } = await request("POST", "/auth/login", { username, password: $("password").value });
    state.token = token;
    state.name = username;
    state.role = null;
    sessionStorage.setItem("stud.console.token", token);
    sessionStorage.setItem("stud.console.name", username);
    $("password").value = "";
    await route();
  } catch (error) {
    $("auth-error").textContent = describe(error);
  }
}

function signedOut(message) {
  state.token = state.name = state.role = null;
  sessionStorage.removeItem("stud.console.token");
  sessionStorage.removeItem("stud.console.name");
  show("auth");
  $("auth-error").textContent = message || "";
}

async function signOut(message) {
  await request("POST", "/auth/logout", null, state.token).catch(() => {});
  signedOut(message);
}

// ------------------------------------------------------------------ the dialog

// Ask for the fields of one action, run it, and say how it went: the API's refusal stays in
// the dialog until the operator corrects it or gives up.
function ask({ title, fields, ok, run }) {
  const dialog = $("dialog");
  $("dialog-title").textContent = title;
  $("dialog-ok").textContent = ok;
  $("dialog-error").textContent = "";
  $("dialog-fields").replaceChildren(...fields.map(field));
  ask.run = run;
  dialog.showModal();
  $("dialog-fields").querySelector("input, textarea, select")?.focus();
}

function field({ name, label, type = "text", value = "", required = false, hint, options = [] }) {
  let input;
  if (type === "textarea") input = el("textarea", { name, rows: 8, text: value });
  else if (type === "select") input = el("select", { name }, ...options.map((o) => el("option", { value: o, text: o, selected: o === value })));
  else if (type === "checkbox") input = el("input", { name, type, checked: Boolean(value) });
  else input = el("input", { name, type, value, required, maxlength: type === "text" ? 500 : null, step: type === "number" ? "any" : null });
  return el("label", { class: type === "checkbox" ? "check" : null }, label, " ", input, hint ? el("small", { class: "muted", text: hint }) : null);
}

async function confirmDialog(event) {
  event.preventDefault();
  const values = {};
  for (const input of $("dialog-fields").querySelectorAll("[name]")) {
    values[input.name] = input.type === "checkbox" ? input.checked : input.value.trim();
  }
  $("dialog-ok").disabled = true;
  try {
    const message = await ask.run(values);
    $("dialog").close();
    notify(message);
    await route();
  } catch (error) {
    $("dialog-error").textContent = describe(error);
  } finally {
    $("dialog-ok").disabled = false;
  }
}

const REASON = { name: "reason", label: "Reason", required: true, hint: "kept in the audit log; the players see it" };

// ------------------------------------------------------------------ tables

async function refreshTables() {
  let tables;
  try {
    tables = await api("GET", `/admin/tables/live?${query({ stuck_after: $("stuck-after").value })}`);
  } catch (error) { fail(error); return; }
  $("table-rows").replaceChildren(...tables.map(tableRow));
  if (!tables.length) $("table-rows").append(el("tr", {}, el("td", { colspan: 9, class: "muted", text: "No open table." })));
  $("tables-updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function tableRow(t) {
  const paused = t.paused_by === "operator" ? `paused: ${t.pause_reason}`
    : t.paused_by === "database" ? "waiting for the database" : null;
  return el("tr", { dataTable: t.id, class: t.stuck ? "stuck" : null },
    el("td", { text: t.id }),
    el("td", {}, el("a", { href: handsOf({ table: t.id }), title: "this table's hands" }, el("strong", { class: "name", text: t.name })),
      el("div", { class: "muted", text: variantName(t.variant) }), rotationLine(t)),
    el("td", { class: "state" }, t.state + (t.node ? ` · node ${t.node}` : ""),
      paused ? el("div", { class: "badge warn paused", text: paused }) : null,
      t.stuck ? el("div", { class: "badge bad stuck-flag", text: "stuck" }) : null),
    el("td", { class: "hand" }, t.hand_number ? el("a", { href: handsOf({ table: t.id }), text: t.hand_number }) : "–"),
    el("td", { class: "street", text: t.in_hand ? t.street : "between hands" }),
    el("td", { class: "pot", text: t.pot }),
    el("td", {}, el("ul", { class: "seated" }, ...t.players.map((p) => el("li", { dataPlayer: p.player },
      `${p.seat + 1}. `, el("a", { href: `#/players/${encodeURIComponent(p.player)}`, text: p.player }), " ",
      el("span", { class: "stack", text: p.stack }),
      p.sitting_out ? el("span", { class: "muted", text: " sitting out" }) : null,
      p.in_hand ? null : el("span", { class: "muted", text: " not in hand" }))))),
    el("td", { class: "idle", text: t.seconds_since_action === null ? "–" : `${t.seconds_since_action.toFixed(1)} s` }),
    el("td", { class: "write ops" },
      t.paused_by === "operator"
        ? el("button", { type: "button", class: "resume", onclick: () => tableOp(t, "resume") }, "Resume")
        : el("button", { type: "button", class: "pause", onclick: () => tableOp(t, "pause") }, "Pause"),
      el("button", { type: "button", class: "void", onclick: () => tableOp(t, "void") }, "Void hand"),
      el("button", { type: "button", class: "edit", onclick: () => editTable(t) }, "Edit"),
      el("button", { type: "button", class: "rotation", onclick: () => editRotation(t) }, "Rotation"),
      el("button", { type: "button", class: "close danger", onclick: () => tableOp(t, "close") }, "Close")));
}

const TABLE_OPS = {
  pause: { ok: "Pause", done: (r) => (r.after_hand ? "Paused after the hand in progress" : "Paused") },
  resume: { ok: "Resume", done: () => "Resumed" },
  void: { ok: "Void the hand", done: (r) => `Hand #${r.hand} voided: ${Object.entries(r.stacks).map(([p, s]) => `${p} ${s}`).join(", ")}` },
  close: { ok: "Close the table", done: (r) => (r.after_hand ? "Closing after the hand in progress" : `Closed; cashed out: ${json(r.cashed_out)}`) },
};

function tableOp(t, op) {
  const { ok, done } = TABLE_OPS[op];
  const fields = [REASON];
  if (op === "close") fields.push({ name: "void", label: "Void the hand in progress and close now", type: "checkbox" });
  ask({
    title: `${ok}: ${t.name}`, fields, ok,
    run: async ({ reason, void: voidNow }) => {
      const suffix = voidNow ? "?void=true" : "";
      return `${t.name}: ${done(await api("POST", `/admin/tables/${t.id}/${op}${suffix}`, { reason }))}`;
    },
  });
}

const SETTINGS = [
  { name: "seats", label: "Seats", type: "number" },
  { name: "min_buy_in", label: "Minimum buy-in", type: "number" },
  { name: "max_buy_in", label: "Maximum buy-in", type: "number" },
  { name: "action_clock", label: "Action clock (s)", type: "number", hint: "empty: the server's default" },
  { name: "time_bank", label: "Time bank (s)", type: "number", hint: "empty: the server's default" },
  { name: "showdown_pause", label: "Pause after a showdown (s)", type: "number", hint: "time to read it; empty: the server's default" },
];

async function editTable(t) {
  let record;
  try {
    record = (await api("GET", "/admin/tables")).find((r) => r.id === t.id);
  } catch (error) { fail(error); return; }
  if (!record) { notify(`unknown_table: no table ${t.id}`, "fail"); return; }
  ask({
    title: `Edit ${record.name}`,
    ok: "Save",
    fields: [
      ...SETTINGS.map((s) => ({ ...s, value: record[s.name] ?? "" })),
      { name: "spectator_chat", label: "Spectators may chat", type: "checkbox", value: record.spectator_chat },
      { name: "config", label: "Rules", type: "textarea", value: JSON.stringify(record.config, null, 1), hint: "JSON; only the rules that differ are sent (GET /admin/table-config)" },
      { name: "reason", label: "Reason", hint: "optional, kept in the audit log" },
    ],
    run: async (values) => {
      const body = changedSettings(record, values);
      const answer = await api("PATCH", `/admin/tables/${record.id}`, body);
      return `${record.name}: settings saved${answer.after_hand ? ", from the next hand" : ""}`;
    },
  });
}

// Only what the operator changed: the API keeps the rest as it is.
function changedSettings(record, values) {
  const body = {};
  for (const { name } of SETTINGS) {
    if (values[name] !== "" && Number(values[name]) !== record[name]) body[name] = Number(values[name]);
  }
  if (values.spectator_chat !== record.spectator_chat) body.spectator_chat = values.spectator_chat;
  let rules;
  try { rules = JSON.parse(values.config || "{}"); } catch (error) {
    throw new Error(`Rules: not JSON (${error.message})`);
  }
  const config = Object.fromEntries(Object.entries(rules).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(record.config[k])));
  if (Object.keys(config).length) body.config = config;
  if (values.reason) body.reason = values.reason;
  return body;
}

function newTable() {
  ask({
    title: "New table",
    ok: "Open the table",
    fields: [
      { name: "name", label: "Name", required: true },
      { name: "config", label: "Rules", type: "textarea", value: JSON.stringify({ variant: "seven_card_stud" }, null, 1), hint: "JSON; a rule left out takes its default (GET /admin/table-config)" },
      ...SETTINGS.slice(0, 3),
    ],
    run: async (values) => {
      let config;
      try { config = JSON.parse(values.config || "{}"); } catch (error) {
        throw new Error(`Rules: not JSON (${error.message})`);
      }
      const body = { name: values.name, config };
      for (const { name } of SETTINGS.slice(0, 3)) if (values[name] !== "") body[name] = Number(values[name]);
      const table = await api("POST", "/admin/tables", body);
      return `Table ${table.id} opened: ${table.name}`;
    },
  });
}

// ------------------------------------------------------------------ players

let playersAsked = 0;  // the players' searches asked so far

async function searchPlayers() {
  const { prefix, offset } = state.search;
  $("prefix").value = prefix;
  const asked = ++playersAsked;  // a slower answer to an older search is dropped
  let page;
  try {
    page = await api("GET", `/admin/players?${query({ prefix, limit: PAGE, offset })}`);
  } catch (error) { if (asked === playersAsked) fail(error); return; }
  if (asked !== playersAsked) return;
  $("player-rows").replaceChildren(...page.players.map((p) => el("tr", { dataPlayer: p.username },
    el("td", {}, el("a", { href: `#/players/${encodeURIComponent(p.username)}`, text: p.username })),
    el("td", { text: p.role }),
    el("td", { text: when(p.created_at) }))));
  $("players-page").textContent = page.total
    ? `${offset + 1}–${offset + page.players.length} of ${page.total}` : "No player found.";
  $("players-prev").disabled = offset === 0;
  $("players-next").disabled = offset + page.players.length >= page.total;
}

function pagePlayers(step) {
  state.search.offset = Math.max(0, state.search.offset + step * PAGE);
  searchPlayers();
}

async function openPlayer(name) {
  let p;
  try {
    p = await api("GET", `/admin/players/${encodeURIComponent(name)}?${query({ entries: PAGE, hands_limit: PAGE })}`);
  } catch (error) { fail(error); return; }
  show("player");
  const username = p.account.username;
  state.player = { name: username, entriesBefore: p.next_entries_before, handsBefore: p.next_hands_before };
  $("player-name").textContent = username;
  $("player-role").textContent = p.account.role;
  $("player-balance").textContent = p.balance;
  const s = p.suspension;
  $("player-suspended").hidden = !s;
  $("player-suspended").textContent = s ? "suspended" : "";
  $("player-account").replaceChildren(
    ...fact("Id", p.account.id), ...fact("Since", when(p.account.created_at)),
    ...fact("Suspended", s ? `${when(s.suspended_at)} by ${s.suspended_by}: ${s.reason}` : "no"));
  $("suspend").hidden = Boolean(s);
  $("unsuspend").hidden = !s;
  $("player-seats").replaceChildren(...p.seats.map((seat) => el("tr", {},
    el("td", {}, el("a", { href: handsOf({ table: seat.table_id }), text: `${seat.table_name} (#${seat.table_id})` })),
    el("td", { text: seat.seat + 1 }),
    el("td", { text: seat.chips }),
    el("td", { class: "write" }, el("button", { type: "button", onclick: () => kick(username, seat) }, "Kick…")))));
  if (!p.seats.length) $("player-seats").append(el("tr", {}, el("td", { colspan: 4, class: "muted", text: "Not seated." })));
  $("player-ledger").replaceChildren(...p.entries.map(ledgerRow));
  $("player-hands").replaceChildren(...p.hands.map(handRow));
  $("player-all-hands").href = handsOf({ player: username });
  $("ledger-more").hidden = p.next_entries_before === null;
  $("hands-more").hidden = p.next_hands_before === null;
}

const fact = (name, value) => [el("dt", { text: name }), el("dd", { text: value })];

const ledgerRow = (e) => el("tr", {},
  el("td", { text: e.id }), el("td", { text: when(e.created_at) }), el("td", { text: e.kind }),
  el("td", { class: e.amount > 0 ? "plus" : "minus", text: e.amount > 0 ? `+${e.amount}` : e.amount }),
  el("td", { text: e.counterparty }), el("td", {}, referenceEl(e.reference)));

// A ledger reference naming a hand or a table links to it: "hand:12", "table:3 hand:7 …".
function referenceEl(reference) {
  if (!reference) return "";
  const hand = /^hand:(\d+)$/.exec(reference);
  if (hand) return el("a", { href: `#/hands/${hand[1]}`, class: "hand-link", text: reference });
  const table = /^table:(\d+)\b/.exec(reference);
  if (table) return el("a", { href: handsOf({ table: table[1] }), text: reference });
  return reference;
}

const handRow = (h) => el("tr", { class: h.cancelled ? "muted" : null, dataHandId: h.id },
  el("td", {}, el("a", { href: `#/hands/${h.id}?${query({ player: state.player?.name })}`, class: "hand-link", title: "replay this hand", text: `#${h.number}${h.cancelled ? " (void)" : ""}` })),
  el("td", {}, el("a", { href: handsOf({ table: h.table_id }), text: h.table_name })),
  el("td", { text: variantName(h.variant) }), el("td", { text: h.starting }), el("td", { text: h.ending }),
  el("td", { class: h.net > 0 ? "plus" : h.net < 0 ? "minus" : null, text: h.net }), el("td", { text: when(h.created_at) }));

async function morePlayer(kind) {
  const { name, entriesBefore, handsBefore } = state.player;
  const params = kind === "entries"
    ? { entries: PAGE, entries_before: entriesBefore, hands_limit: 1 }
    : { entries: 1, hands_limit: PAGE, hands_before: handsBefore };
  try {
    const p = await api("GET", `/admin/players/${encodeURIComponent(name)}?${query(params)}`);
    if (kind === "entries") {
      $("player-ledger").append(...p.entries.map(ledgerRow));
      state.player.entriesBefore = p.next_entries_before;
      $("ledger-more").hidden = p.next_entries_before === null;
    } else {
      $("player-hands").append(...p.hands.map(handRow));
      state.player.handsBefore = p.next_hands_before;
      $("hands-more").hidden = p.next_hands_before === null;
    }
  } catch (error) { fail(error); }
}

async function adjust(event) {
  event.preventDefault();
  const kind = event.submitter?.value === "debit" ? "debit" : "credit";
  const { name } = state.player;
  try {
    const done = await api("POST", `/admin/players/${encodeURIComponent(name)}/${kind}`, {
      amount: Number($("adjust-amount").value), reason: $("adjust-reason").value,
    });
    $("adjust-form").reset();
    notify(`${kind === "credit" ? "Credited" : "Debited"} ${Math.abs(done.amount)} ${kind === "credit" ? "to" : "from"} ${done.player}: ${done.balance_before} → ${done.balance_after}`);
    await openPlayer(name);
  } catch (error) { fail(error); }
}

function suspension(op) {
  const { name } = state.player;
  ask({
    title: `${op === "suspend" ? "Suspend" : "Unsuspend"} ${name}`,
    ok: op === "suspend" ? "Suspend" : "Unsuspend",
    fields: [{ ...REASON, hint: op === "suspend" ? "signed out at once, off every table after the hand" : "kept in the audit log" }],
    run: async ({ reason }) => {
      await api("POST", `/admin/players/${encodeURIComponent(name)}/${op}`, { reason });
      return `${name} ${op === "suspend" ? "suspended" : "unsuspended"}`;
    },
  });
}

function kick(name, seat) {
  ask({
    title: `Kick ${name} from ${seat.table_name}`,
    ok: "Kick",
    fields: [{ ...REASON, hint: "they leave after the hand in play, cashed out" }],
    run: async ({ reason }) => {
      const done = await api("POST", `/admin/tables/${seat.table_id}/kick`, { player: name, reason });
      return `${name} ${done.removal.after_hand ? "leaves after the hand in play" : "removed"}`;
    },
  });
}

// ------------------------------------------------------------------ audit log and books

async function loadAudit(more = false) {
  const params = { ...state.audit.filters, limit: 50, before: more ? state.audit.before : null };
  let page;
  try {
    page = await api("GET", `/admin/audit?${query(params)}`);
  } catch (error) { fail(error); return; }
  const rows = page.entries.map((e) => el("tr", { dataAction: e.action, dataAuditId: e.id },
    el("td", { text: e.id }), el("td", { text: when(e.created_at) }), el("td", { text: e.actor }),
    el("td", { class: "action", text: e.action }), el("td", {}, targetEl(e)),
    el("td", { class: "reason", text: e.reason ?? "" }),
    el("td", {}, el("code", { text: `${json(e.before)} → ${json(e.after)}` }))));
  if (more) $("audit-rows").append(...rows);
  else $("audit-rows").replaceChildren(...rows);
  state.audit.before = page.next_before;
  $("audit-more").hidden = page.next_before === null;
}

// An audit entry's target, a link to it: a player's page, a table's hands.
function targetEl(e) {
  const text = `${e.target_kind} ${e.target_id}`;
  if (e.target_kind === "player") return el("a", { href: `#/players/${encodeURIComponent(e.target_id)}`, text });
  if (e.target_kind === "table") return el("a", { href: handsOf({ table: e.target_id }), text });
  return text;
}

function filterAudit(event) {
  event.preventDefault();
  state.audit.filters = { actor: $("audit-actor").value.trim(), action: $("audit-action").value.trim(), target_id: $("audit-target").value.trim() };
  loadAudit();
}

async function loadBooks() {
  let books;
  try {
    books = await api("GET", "/admin/books");
  } catch (error) { fail(error); return; }
  $("books-balanced").textContent = books.balanced ? "balanced" : "NOT balanced";
  $("books-balanced").className = `badge ${books.balanced ? "good" : "bad"}`;
  $("books-totals").replaceChildren(...fact("Chips issued", books.granted), ...fact("Chips taken back", books.reclaimed),
    ...fact("Chips held", books.held), ...fact("House", books.house));
  $("books-mismatched").replaceChildren(...books.mismatched.map((m) => el("li", { text: m })));
  if (!books.mismatched.length) $("books-mismatched").append(el("li", { class: "muted", text: "none" }));
  $("books-tables").replaceChildren(...Object.entries(books.tables).map(([id, t]) => el("tr", { class: t.pool === t.seats ? null : "stuck" },
    el("td", {}, el("a", { href: handsOf({ table: id }), text: id })), el("td", { text: t.pool }), el("td", { text: t.seats }))));
}

// ------------------------------------------------------------------ hands

// The address of a search of hands (#/hands?player=…&table=…&since=…&until=…&offset=…).
const handsOf = (filters) => `#/hands?${query(filters)}`;

const FILTERS = ["player", "table", "since", "until"];

// A time as the datetime-local field shows it (this browser's time) and back (ISO, UTC).
// ------------------------------------------------------------------ nodes

async function loadNodes() {
  let nodes;
  try {
    nodes = await api("GET", "/admin/nodes");
  } catch (error) { fail(error); return; }
  $("node-rows").replaceChildren(...nodes.map(nodeRow));
  $("nodes-updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function nodeRow(n) {
  const stateText = n.drained ? "drained" : n.draining ? "draining" : "serving";
  const moving = Object.entries(n.moving).map(([table, node]) => `table ${table} → ${node}`).join(", ");
  return el("tr", { dataNode: n.node },
    el("td", {}, el("strong", { class: "name", text: n.node })),
    el("td", { class: "tables", text: n.tables }),
    el("td", { class: "busy", text: `${Math.round(n.busy * 100)} %` }),
    el("td", { class: "state" }, el("span", { class: `badge ${n.drained ? "good" : n.draining ? "warn" : ""}`, text: stateText })),
    el("td", { class: "moving", text: moving || "–" }),
    el("td", { class: "heard", text: n.heard_ago ? `${n.heard_ago.toFixed(1)} s ago` : "this node" }),
    el("td", { class: "write ops" }, n.draining
      ? el("button", { type: "button", class: "undrain", onclick: () => nodeOp(n, "undrain") }, "Undrain")
      : el("button", { type: "button", class: "drain", onclick: () => nodeOp(n, "drain") }, "Drain")));
}

function nodeOp(n, op) {
  const ok = op === "drain" ? "Drain" : "Undrain";
  ask({
    title: `${ok}: node ${n.node}`,
    fields: [{ name: "reason", label: "Reason", required: true, hint: "kept in the audit log" }],
    ok,
    run: async ({ reason }) => {
      const after = await api("POST", `/admin/nodes/${encodeURIComponent(n.node)}/${op}`, { reason });
      return after.draining ? `Node ${n.node} drains: its tables move to the others between hands` : `Node ${n.node} takes tables again`;
    },
  });
}

function localField(iso) {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
}
const isoOf = (local) => (local ? new Date(local).toISOString() : "");

// The hands meeting the address's filters, newest first, a page at a time (GET /admin/hands);
// with an id, that hand replayed over them.
async function findHands(params, id) {
  $("hands-player").value = params.get("player") || "";
  $("hands-table").value = params.get("table") || "";
  $("hands-since").value = params.get("since") ? localField(params.get("since")) : "";
  $("hands-until").value = params.get("until") ? localField(params.get("until")) : "";
  const filters = Object.fromEntries(FILTERS.map((f) => [f, params.get(f)]));
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  state.hands.filters = filters;
  const asked = ++state.hands.asked;  // a slower answer to an older search is dropped
  let page = null;
  try {
    page = await api("GET", `/admin/hands?${query({ ...filters, limit: PAGE, offset })}`);
  } catch (error) { fail(error); }
  if (asked !== state.hands.asked) return;
  if (page) {
    state.hands.rows = new Map(page.hands.map((h) => [h.id, h]));
    $("hand-rows").replaceChildren(...page.hands.map((h) => foundRow(h, filters)));
    if (!page.hands.length) $("hand-rows").append(el("tr", {}, el("td", { colspan: 7, class: "muted", text: "No hand found." })));
    $("hands-page").textContent = page.total ? `${offset + 1}–${offset + page.hands.length} of ${page.total}` : "";
    $("hands-prev").disabled = offset === 0;
    $("hands-next").disabled = page.next_offset === null;
    $("hands-prev").onclick = () => { location.hash = handsOf({ ...filters, offset: Math.max(0, offset - PAGE) || null }); };
    $("hands-next").onclick = () => { location.hash = handsOf({ ...filters, offset: page.next_offset }); };
  }
  if (id) await openReplayer(Number(id));
}

function foundRow(h, filters) {
  const replay = `#/hands/${h.id}?${query(filters)}`;
  return el("tr", { dataHandId: h.id, class: h.cancelled ? "muted" : null },
    el("td", {}, el("a", { href: replay, class: "hand-link", text: h.id })),
    el("td", { text: when(h.ended_at) }),
    el("td", {}, el("a", { href: handsOf({ table: h.table_id }), text: `${h.table_name} (#${h.table_id})` })),
    el("td", { text: `#${h.number}${h.cancelled ? " (void)" : ""}` }),
    el("td", {}, el("ul", { class: "seated" }, ...h.players.map((p) => el("li", { dataPlayer: p.player },
      `${p.seat + 1}. `, el("a", { href: `#/players/${encodeURIComponent(p.player)}`, text: p.player }),
      ` ${p.starting} → ${p.ending}`)))),
    el("td", { class: "pot", text: h.pot }),
    el("td", {}, el("a", { href: replay, class: "button replay" }, "Replay")));
}

function searchHands(event) {
  event.preventDefault();
  const filters = {
    player: $("hands-player").value.trim(), table: $("hands-table").value.trim(),
    since: isoOf($("hands-since").value), until: isoOf($("hands-until").value),
  };
  const target = handsOf(filters);
  if (location.hash === target) route(); else location.hash = target;
}

function openHandById(event) {
  event.preventDefault();
  const id = $("hand-id").value.trim();
  if (id) location.hash = `#/hands/${id}?${query(state.hands.filters || {})}`;
}

// A hand for the replayer, as an operator sees it: every card (seat null: nobody is "you").
async function staffHand(id) {
  const [record, log] = await Promise.all([api("GET", `/admin/hands/${id}`), api("GET", `/admin/hands/${id}/events`)]);
  const row = state.hands.rows.get(record.id);
  const started = record.events.find((e) => e.kind === "hand_started")?.data;
  const ended = record.events.find((e) => e.kind === "hand_ended")?.data;
  const names = {};
  for (const e of log.events) if (e.to !== null && e.to !== undefined) names[e.to] = e.audience;
  const after = Object.fromEntries((ended?.stacks || []).map((e) => [e.seat, e.stack]));
  const players = row ? row.players : (started?.seats || []).map((s) => ({
    seat: s.seat, player: names[s.seat] || `seat ${s.seat + 1}`, starting: s.stack, ending: after[s.seat] ?? s.stack }));
  return {
    id: record.id, table_id: record.table_id, number: record.number, seat: null,
    table_name: row?.table_name || await tableName(record.table_id),
    variant: started?.variant || "", created_at: record.created_at,
    players, result: record.result, events: record.events, phh_withheld: !record.phh,
  };
}

async function tableName(id) {
  if (!state.tableNames) {
    try {
      state.tableNames = new Map((await api("GET", "/admin/tables")).map((t) => [t.id, t.name]));
    } catch { return `table ${id}`; }
  }
  return state.tableNames.get(id) || `table ${id}`;
}

// ------------------------------------------------------------------ wiring

$("auth-form").addEventListener("submit", signIn);
$("logout").addEventListener("click", () => signOut(""));
$("dialog-form").addEventListener("submit", confirmDialog);
$("dialog-cancel").addEventListener("click", () => $("dialog").close());
$("new-table").addEventListener("click", newTable);
$("stuck-after").addEventListener("change", refreshTables);
$("search-form").addEventListener("submit", (event) => {
  event.preventDefault();
  state.search = { prefix: $("prefix").value.trim(), offset: 0 };
  if (location.hash === "#/players") searchPlayers(); else location.hash = "#/players";
});
$("players-prev").addEventListener("click", () => pagePlayers(-1));
$("players-next").addEventListener("click", () => pagePlayers(1));
$("adjust-form").addEventListener("submit", adjust);
$("suspend").addEventListener("click", () => suspension("suspend"));
$("unsuspend").addEventListener("click", () => suspension("unsuspend"));
$("ledger-more").addEventListener("click", () => morePlayer("entries"));
$("hands-more").addEventListener("click", () => morePlayer("hands"));
$("audit-form").addEventListener("submit", filterAudit);
$("hands-form").addEventListener("submit", searchHands);
$("hand-id-form").addEventListener("submit", openHandById);
$("audit-more").addEventListener("click", () => loadAudit(true));
$("books-refresh").addEventListener("click", loadBooks);
$("nodes-refresh").addEventListener("click", loadNodes);
$("refresh-seconds").textContent = REFRESH_SECONDS;
initReplayer({
  token: () => state.token,
  notify: (text) => notify(text, "fail"),
  load: staffHand,
  phhPath: (id) => `/admin/hands/${id}/phh`,
});
initTournaments({ api, ask, notify, fail, when, fact, reason: REASON });
initRotations({ api, ask, fail, settings: SETTINGS });
window.addEventListener("hashchange", () => { notify(""); route(); });
setInterval(() => {
  if ($("dialog").open) return;
  if (!$("tables-view").hidden) refreshTables();
  else if (!$("tournament-view").hidden && tournamentShown()) openTournament(tournamentShown());
}, REFRESH_SECONDS * 1000);
route();
