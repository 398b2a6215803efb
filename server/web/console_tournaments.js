// The console's tournaments tab: the list (GET /tournaments), one tournament's details (its
// format, GET /tournaments/{id}; its standing, GET /admin/tournaments/{id}/results), making
// one from a shipped format, and an operator's requests to it: pause, resume, add time, move
// or disqualify a player (docs/tournaments.md, "Requests to a running tournament"), cancel
// before the start. Seats show from 1, as on the tables tab; the API counts them from 0.
import { $, el, variantName } from "./page.js";

const STATUSES = ["registering", "running", "finished", "cancelled"];
let ctx = null;       // the console's calls: { api, ask, notify, fail, when, fact, reason }
let shown = null;     // the tournament on show: { id, details, results }

export function initTournaments(context) {
  ctx = context;
  $("new-tournament").addEventListener("click", newTournament);
  $("tournament-status").addEventListener("change", () => loadTournaments());
  for (const op of ["pause", "resume", "add-time", "cancel"]) {
    $(`tournament-${op}`).addEventListener("click", () => tournamentOp(op));
  }
}

// ------------------------------------------------------------------ the list

export async function loadTournaments() {
  const wanted = $("tournament-status").value;
  const statuses = wanted ? [wanted] : STATUSES;
  let list;
  try {
    list = await ctx.api("GET", `/tournaments?${statuses.map((s) => `status=${s}`).join("&")}`);
  } catch (error) { ctx.fail(error); return; }
  $("tournament-rows").replaceChildren(...list.map((t) => el("tr", { dataTournament: t.id },
    el("td", { text: t.id }),
    el("td", {}, el("a", { href: `#/tournaments/${t.id}`, class: "name", text: t.name })),
    el("td", { text: `${variantName(t.variant)} · ${t.betting.replace("_", " ")}` }),
    el("td", { text: t.kind === "sit_and_go" ? "sit-and-go" : "scheduled" }),
    el("td", {}, statusBadge(t.status)),
    el("td", { class: "entrants", text: `${t.entrants} / ${t.max_entrants}` }),
    el("td", { text: `${t.buy_in} + ${t.fee}` }),
    el("td", { text: t.prize_pool }),
    el("td", { text: t.starts_at ? ctx.when(t.starts_at) : "when full" }))));
  if (!list.length) $("tournament-rows").append(el("tr", {}, el("td", { colspan: 9, class: "muted", text: "No tournament." })));
}

function statusBadge(status, paused = false) {
  const kind = { running: "good", registering: "", finished: "", cancelled: "bad" }[status] ?? "";
  return el("span", { class: `badge status ${paused ? "warn" : kind}`, text: paused ? "paused" : status });
}

async function newTournament() {
  let templates;
  try {
    templates = await ctx.api("GET", "/tournaments/templates");
  } catch (error) { ctx.fail(error); return; }
  const names = Object.keys(templates);
  ctx.ask({
    title: "New tournament",
    ok: "Create",
    fields: [
      { name: "name", label: "Name", required: true },
      { name: "template", label: "Format", type: "select", options: names, value: names[0], hint: "a shipped format (GET /tournaments/templates)" },
      { name: "starts_at", label: "Start", type: "datetime-local", hint: "scheduled formats only; a sit-and-go starts when it fills" },
    ],
    run: async ({ name, template, starts_at: startsAt }) => {
      const body = { name, template };
      if (startsAt) body.starts_at = new Date(startsAt).toISOString();
      const made = await ctx.api("POST", "/admin/tournaments", body);
      return `Tournament ${made.id} created: ${made.name}`;
    },
  });
}

// ------------------------------------------------------------------ one tournament

export async function openTournament(id) {
  let details;
  let results;
  try {
    [details, results] = await Promise.all([
      ctx.api("GET", `/tournaments/${id}`),
      ctx.api("GET", `/admin/tournaments/${id}/results`),
    ]);
  } catch (error) { ctx.fail(error); return false; }
  shown = { id, details, results };
  const clock = results.clock;
  $("tournament-name").textContent = details.name;
  $("tournament-state").replaceChildren(statusBadge(details.status, clock?.paused));
  const running = details.status === "running";
  $("tournament-pause").hidden = !running || Boolean(clock?.paused);
  $("tournament-resume").hidden = !running || !clock?.paused;
  $("tournament-add-time").hidden = !running;
  $("tournament-cancel").hidden = details.status !== "registering";
  $("tournament-clock").replaceChildren(...clockFacts(clock, details));
  $("tournament-totals").replaceChildren(
    ...ctx.fact("Entries", `${results.entries} (${results.players} players)`),
    ...ctx.fact("Players left", results.players_left),
    ...ctx.fact("Prize pool", results.prize_pool),
    ...ctx.fact("Prizes paid", results.prizes_paid),
    ...ctx.fact("Payouts", results.payouts.join(" / ") || "–"),
    ...ctx.fact("Chips", `${results.chips.issued} issued · ${results.chips.in_play} in play · ${results.chips.removed} removed`),
    ...ctx.fact("Waiting", waitingText(results.waiting)));
  $("tournament-levels").replaceChildren(...levelRows(details.spec.structure, clock));
  $("tournament-tables").replaceChildren(...results.tables.map(tableBlock));
  if (!results.tables.length) $("tournament-tables").append(el("p", { class: "muted", text: running ? "No table." : "No table runs." }));
  $("tournament-standings").replaceChildren(...results.standings.map(standingRow));
  return true;
}

function clockFacts(clock, details) {
  if (!clock) return ctx.fact("Clock", details.status === "registering" ? "not started" : "stopped");
  const stakes = (s) => (s ? `${s.ante} ante · ${s.bring_in} bring-in · ${s.small_bet}/${s.big_bet}` : "–");
  const seconds = Math.round(clock.seconds_left ?? 0);
  const left = clock.seconds_left !== null
    ? `${Math.floor(seconds / 60)} min ${seconds % 60} s`
    : clock.hands_left !== null ? `${clock.hands_left} hands` : "to the end";
  return [
    ...ctx.fact("Level", clock.on_break ? `break after level ${clock.level}` : `${clock.level}`),
    ...ctx.fact("Stakes", stakes(clock.stakes)),
    ...ctx.fact("Left", clock.paused ? `${left} (paused)` : left),
    ...ctx.fact("Next", stakes(clock.next_stakes)),
    ...ctx.fact("Hand for hand", clock.hand_for_hand ? "yes" : "no"),
  ];
}

function levelRows(structure, clock) {
  let level = 0;
  return structure.entries.map((entry) => {
    const isBreak = entry.kind === "break";
    if (!isBreak) level += 1;
    const current = clock && !isBreak && !clock.on_break && clock.level === level;
    const length = entry.hands ? `${entry.hands} hands` : `${entry.minutes} min`;
    return el("tr", { class: current ? "current" : null },
      el("td", { text: isBreak ? "break" : level }),
      el("td", { text: isBreak ? "–" : entry.ante }), el("td", { text: isBreak ? "–" : entry.bring_in }),
      el("td", { text: isBreak ? "–" : `${entry.small_bet}/${entry.big_bet}` }), el("td", { text: length }));
  });
}

function waitingText(waiting) {
  const moves = waiting.moves.map((m) => `${m.player} → ${m.table ? `table ${m.table}` : "the director's pick"}`);
  const out = waiting.disqualifications.map((p) => `${p} disqualified`);
  return [...moves, ...out].join(", ") || "nothing";
}

function tableBlock(table) {
  return el("section", { class: "panel tournament-table", dataTableNumber: table.number },
    el("h4", {}, `Table ${table.number}`, table.table_id ? el("span", { class: "muted", text: ` #${table.table_id}` }) : null,
      " ", el("span", { class: `badge ${table.dealing ? "good" : ""}`, text: table.dealing ? "dealing" : "between hands" })),
    el("table", { class: "grid" }, el("tbody", {}, ...table.players.map((p) => el("tr", { dataPlayer: p.player },
      el("td", { text: p.seat + 1 }),
      el("td", {}, el("a", { href: `#/players/${encodeURIComponent(p.player)}`, text: p.player })),
      el("td", { class: "stack", text: p.chips }),
      el("td", { class: "write ops" },
        el("button", { type: "button", class: "move", onclick: () => movePlayer(p, table) }, "Move…"),
        el("button", { type: "button", class: "disqualify danger", onclick: () => disqualify(p) }, "Disqualify…")))))));
}

function standingRow(s) {
  return el("tr", { dataPlayer: s.player, class: s.status === "disqualified" ? "muted" : null },
    el("td", { text: s.place ?? "–" }), el("td", { text: s.player }), el("td", { text: s.entry }),
    el("td", { class: "status", text: s.status }), el("td", { class: "stack", text: s.chips }),
    el("td", { text: s.prize ?? "–" }), el("td", { text: s.chips_removed ?? "" }));
}

// ------------------------------------------------------------------ an operator's requests

// What the director did with a request: done now, or waiting for a hand (or the director).
function outcome(request, done) {
  if (request.status === "waiting") return `${request.kind}: filed; its director has not taken it yet (request ${request.id})`;
  const o = request.outcome || {};
  if (o.after_hand_at) return `${done}: when the hand at table ${o.after_hand_at} ends`;
  return done + (o.table ? `: table ${o.table}, seat ${o.seat + 1}, ${o.chips} chips` : "")
    + (o.chips_removed !== undefined ? `: ${o.chips_removed} chips out of play` : "");
}

function tournamentOp(op) {
  const { id, details } = shown;
  const titles = { pause: "Pause", resume: "Resume", "add-time": "Add time", cancel: "Cancel the tournament" };
  const fields = [{ ...ctx.reason, hint: "kept in the audit log" }];
  if (op === "add-time") fields.unshift({ name: "minutes", label: "Minutes", type: "number", required: true, value: "5", hint: "added to the level (or break) in play" });
  ctx.ask({
    title: `${titles[op]}: ${details.name}`,
    ok: titles[op],
    fields,
    run: async ({ reason, minutes }) => {
      const body = { reason };
      if (op === "add-time") body.minutes = Number(minutes);
      const answer = await ctx.api("POST", `/admin/tournaments/${id}/${op}`, body);
      if (op === "cancel") return `${details.name}: cancelled, ${answer.entries.filter((e) => e.status === "refunded").length} entries refunded`;
      const done = { pause: "Paused", resume: "Resumed", "add-time": `${minutes} min added` }[op];
      return `${details.name}: ${outcome(answer, done)}`;
    },
  });
}

function movePlayer(player, table) {
  const seats = shown.details.spec.seats_per_table;
  ctx.ask({
    title: `Move ${player.player} from table ${table.number}`,
    ok: "Move",
    fields: [
      { name: "table", label: "To table", type: "number", hint: "empty: the table with the fewest players" },
      { name: "seat", label: "Seat", type: "number", hint: `1 to ${seats}; empty: the table's last seat to open` },
      { ...ctx.reason, hint: "kept in the audit log" },
    ],
    run: async ({ table: to, seat, reason }) => {
      const body = { player: player.player, reason };
      if (to) body.table = Number(to);
      if (seat) body.seat = Number(seat) - 1;
      const answer = await ctx.api("POST", `/admin/tournaments/${shown.id}/move`, body);
      return `${player.player}: ${outcome(answer, "moved")}`;
    },
  });
}

function disqualify(player) {
  ctx.ask({
    title: `Disqualify ${player.player}`,
    ok: "Disqualify",
    fields: [{ ...ctx.reason, hint: "their chips leave play; no place, no prize; kept in the audit log" }],
    run: async ({ reason }) => {
      const answer = await ctx.api("POST", `/admin/tournaments/${shown.id}/disqualify`, { player: player.player, reason });
      return `${player.player}: ${outcome(answer, "disqualified")}`;
    },
  });
}

export const tournamentShown = () => shown?.id ?? null;
