// Tournaments on the players' page: the list (GET /tournaments, #/tournaments), one
// tournament (GET /tournaments/{id}, #/tournaments/{id}) with its structure sheet (each level's
// game, stakes and length: a mixed tournament switches game by level), prizes and entrants,
// entering and taking the entry back (POST / DELETE /tournaments/{id}/register); and, over the
// websocket, the tournament followed (subscribe_tournament: its tournament_state, then its
// events, docs/protocol.md "Tournament events"): at a tournament's table, a bar with the level,
// the next level in m:s, the players left, the average stack and your place; the page goes to
// your table when you are seated or moved; your place and prize when you are out; the results.
import { $, el } from "./page.js";
import { STRUCTURES, variantName } from "./games.js";

const ORDINAL = (n) => {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : { 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th";
  return `${n}${suffix}`;
};
const fmt = (n) => Number(n).toLocaleString("en-US");
// The games a tournament plays: one, or a mixed tournament's ("Mixed: Seven-Card Stud, Razz").
const gamesOf = (t) => (t.games && t.games.length > 1 ? `Mixed: ${t.games.map(variantName).join(", ")}` : variantName(t.variant));

const my = {
  http: null,        // (method, path, body) the page's signed-in REST call
  connection: null,  // () the page's websocket Connection, signed in
  notify: null,      // (text) news for the player
  name: () => null,  // the player's name
  goTable: null,     // (table id) open a table
  followed: null,    // the tournament followed: its id
  state: null,       // its last tournament_state, with the events folded in
  seen: new Set(),   // the keys of the events taken (a director taken over says some again)
  levelEndsAt: null, // Date.now() at which the level ends (a level in minutes)
  result: null,      // { tournament, place, prize, tied } once you are out (or won)
};

export function initTournaments({ http, connection, notify, name, goTable }) {
  Object.assign(my, { http, connection, notify, name, goTable });
  setInterval(renderBar, 1000);
}

// ------------------------------------------------------------------ the list

const STATUS = { registering: "Registering", running: "Running", finished: "Finished", cancelled: "Cancelled" };

export async function openTournamentList() {
  let list = [];
  try {
    list = await my.http("GET", "/tournaments?status=registering&status=running&status=finished");
  } catch (error) { my.notify(error.message); }
  $("tournament-rows").replaceChildren(...list.map((t) => el("tr", { dataTournament: t.id, dataStatus: t.status },
    el("td", { class: "table-name", dataLabel: "Tournament" }, el("strong", { text: t.name })),
    el("td", { dataLabel: "Game" }, `${gamesOf(t)} · ${STRUCTURES[t.betting] || t.betting}`),
    el("td", { dataLabel: "Buy-in" }, `${fmt(t.buy_in)} + ${fmt(t.fee)}`),
    el("td", { dataLabel: "Starts" }, t.starts_at ? new Date(t.starts_at).toLocaleString() : "when full"),
    el("td", { class: "entrants", dataLabel: "Entrants" }, `${t.entrants}/${t.max_entrants}`),
    el("td", { dataLabel: "Prize pool" }, fmt(t.prize_pool)),
    el("td", { class: "status", dataLabel: "Status" }, STATUS[t.status] || t.status),
    el("td", { class: "go" }, el("button", { type: "button", class: "open-tournament",
      onclick: () => { location.hash = `#/tournaments/${t.id}`; } }, "Open")))));
  $("tournaments-empty").hidden = list.length > 0;
}

// ------------------------------------------------------------------ one tournament

export async function openTournament(id) {
  let details;
  try {
    details = await my.http("GET", `/tournaments/${id}`);
  } catch (error) { my.notify(error.message); return; }
  renderDetails(details);
  await follow(id);
}

// The structure sheet (GET /tournaments/{id}: "sheet"); a mixed tournament's levels say
// their game.
function levelsOf(t) {
  const mixed = t.games && t.games.length > 1;
  return t.sheet.map((e) => {
    const length = e.minutes ? `${e.minutes} min` : `${e.hands} hands`;
    if (e.kind === "break") return el("li", { class: "break", text: `Break · ${length}` });
    const game = mixed ? ` ${e.title}` : "";
    return el("li", { dataGame: e.game, text: `Level ${e.level}:${game} ${e.small_bet}/${e.big_bet}, ante ${e.ante}, bring-in ${e.bring_in} · ${length}` });
  });
}

function renderDetails(t) {
  const me = my.name();
  const mine = t.entries.filter((e) => e.player === me);
  const registered = mine.some((e) => e.status === "registered");
  const box = $("tournament-detail");
  box.dataset.tournament = t.id;
  box.dataset.status = t.status;
  const buttons = [];
  if (t.status === "registering" && !registered) {
    buttons.push(el("button", { type: "button", id: "tournament-register", onclick: () => register(t.id) },
      `Register (${fmt(t.buy_in + t.fee)})`));
  }
  if (t.status === "registering" && registered) {
    buttons.push(el("span", { class: "registered", text: "You are registered" }),
      el("button", { type: "button", id: "tournament-unregister", onclick: () => unregister(t.id) }, "Unregister"));
  }
  const playing = mine.find((e) => e.status === "playing");
  if (playing && my.state?.you?.table) {
    buttons.push(el("button", { type: "button", id: "tournament-my-table", onclick: () => my.goTable(my.state.you.table) }, "Go to my table"));
  }
  const entries = [...t.entries].filter((e) => !["unregistered", "refunded"].includes(e.status))
    .sort((a, b) => (a.place ?? 1e9) - (b.place ?? 1e9) || a.player.localeCompare(b.player));
  // Once it has started, the field is every entry that played; once over, the prizes paid.
  const field = t.status === "registering" ? t.entrants : entries.length;
  const prizes = t.status === "finished" ? entries.filter((e) => e.prize).map((e) => e.prize) : t.payouts;
  const pool = t.status === "finished" ? `prizes paid ${fmt(prizes.reduce((a, b) => a + b, 0))}` : `prize pool ${fmt(t.prize_pool)}`;
  box.replaceChildren(
    el("h2", { text: t.name }),
    el("p", { class: "muted", text: `${gamesOf(t)} · ${STRUCTURES[t.betting] || t.betting} · ${t.kind === "sit_and_go" ? "Sit & Go" : "Scheduled"} · ${STATUS[t.status] || t.status}` }),
    el("p", {}, `Buy-in ${fmt(t.buy_in)} + ${fmt(t.fee)} fee · `, el("span", { class: "entrants", text: `${field}/${t.max_entrants} entrants` }),
      ` · ${pool} · starting chips ${fmt(t.spec.structure.starting_chips)}`),
    el("div", { class: "row" }, ...buttons),
    resultEl(t.id),
    el("div", { class: "panels" },
      el("section", { class: "panel" }, el("h3", { text: "Levels" }), el("ol", { class: "levels" }, ...levelsOf(t))),
      el("section", { class: "panel" }, el("h3", { text: "Prizes" }),
        prizes.length ? el("ol", { class: "payouts" }, ...prizes.map((p, i) => el("li", { text: `${ORDINAL(i + 1)}: ${fmt(p)}` })))
          : el("p", { class: "muted", text: "Paid out once two have entered" })),
      el("section", { class: "panel" }, el("h3", { text: t.status === "finished" ? "Results" : "Entrants" }),
        el("ol", { class: "entries", id: "tournament-entries" }, ...entries.map((e) => el("li", { dataPlayer: e.player, dataPlace: e.place ?? "", dataPrize: e.prize ?? "" },
          e.place ? `${ORDINAL(e.place)} ${e.player}${e.prize ? ` · ${fmt(e.prize)}` : ""}` : `${e.player}${e.status === "playing" ? " · playing" : ""}`))))));
}

async function register(id) {
  try {
    await my.http("POST", `/tournaments/${id}/register`, { request_id: `web-${crypto.randomUUID ? crypto.randomUUID() : Date.now()}` });
  } catch (error) { my.notify(`${error.code}: ${error.message}`); }
  if (location.hash === `#/tournaments/${id}`) await openTournament(id);
}

async function unregister(id) {
  try {
    await my.http("DELETE", `/tournaments/${id}/register`);
  } catch (error) { my.notify(`${error.code}: ${error.message}`); }
  if (location.hash === `#/tournaments/${id}`) await openTournament(id);
}

// ------------------------------------------------------------------ following it

// Subscribe (again) to the tournament: its state now, its events from now on.
export async function follow(id) {
  let conn;
  try {
    conn = await my.connection();
    const state = await conn.subscribeTournament(id);
    takeState(state);
  } catch (error) { my.notify(error.message); }
}

// The state from a subscribe (or a reconnect's): everything before it is in it.
export function takeState(state) {
  if (my.followed !== state.tournament) my.seen = new Set();
  my.followed = state.tournament;
  my.state = state;
  my.levelEndsAt = typeof state.seconds_left === "number" ? Date.now() + state.seconds_left * 1000 : null;
  const you = state.you;
  if (you && ["out", "winner"].includes(you.status)) {
    my.result = { tournament: state.tournament, place: you.place, prize: you.prize, tied: you.tied };
  }
  renderBar();
  renderResult();
  // Playing, and not at your table (the start or a move while away): go there.
  if (you?.status === "playing" && you.table && !atTable(you.table) && location.hash === `#/tournaments/${state.tournament}`) {
    my.goTable(you.table);
  }
}

const atTable = (id) => location.hash === `#/table/${id}`;

// A tournament event (protocol.js): the player's own ones come whatever is followed.
export function onTournamentEvent(frame) {
  if (my.seen.has(`${frame.tournament}/${frame.key}`)) return;
  my.seen.add(`${frame.tournament}/${frame.key}`);
  const followed = my.state && my.state.tournament === frame.tournament;
  if (followed && frame.fact < my.state.fact) return;  // the state has it already
  const d = frame.data;
  const me = my.name();
  if (followed) {
    my.state.fact = Math.max(my.state.fact, frame.fact);
    if ("players_left" in d) Object.assign(my.state, { players_left: d.players_left, average_stack: d.average_stack, tables: d.tables });
    if (["level_up", "break", "break_over", "started"].includes(frame.kind)) {
      Object.assign(my.state, { level: d.level, next_level: d.next_level, on_break: d.on_break, paused: d.paused, seconds_left: d.seconds_left, hands_left: d.hands_left });
      my.levelEndsAt = typeof d.seconds_left === "number" ? Date.now() + d.seconds_left * 1000 : null;
    }
    if (frame.kind === "hand_for_hand") my.state.hand_for_hand = d.on;
    if (["registered", "unregistered"].includes(frame.kind)) my.state.entrants = d.entrants;
  }
  switch (frame.kind) {
    case "seated":
    case "moved":
      if (followed && my.state.you) Object.assign(my.state.you, { table: d.table, seat: d.seat });
      follow(frame.tournament);  // your stack and place with it
      my.notify(frame.kind === "moved" ? `You move to table ${d.table_number}${d.final_table ? " (the final table)" : ""}` : `Your tournament starts: table ${d.table_number}`);
      my.goTable(d.table);
      break;
    case "started":
      if (!followed) follow(frame.tournament);
      break;
    case "eliminated":
      if (d.player === me) {
        my.result = { tournament: frame.tournament, place: d.place, prize: d.prize, tied: d.tied };
        if (followed) my.state.you = { status: "out", place: d.place, prize: d.prize, tied: d.tied };
        my.notify(`You finished ${ORDINAL(d.place)}${d.prize ? `: you win ${fmt(d.prize)}` : ""}`);
      }
      break;
    case "disqualified":
      if (d.player === me) {
        if (followed) my.state.you = { status: "disqualified", chips_removed: d.chips_removed };
        my.notify("You are disqualified from the tournament: your chips are out of play");
      }
      break;
    case "finished": {
      const mine = d.results.find((r) => r.player === me);
      if (mine) my.result = { tournament: frame.tournament, place: mine.place, prize: mine.prize, tied: mine.tied };
      if (mine && followed) my.state.you = { status: mine.place === 1 ? "winner" : "out", ...mine };
      if (followed) Object.assign(my.state, { results: d.results, status: "finished" });
      break;
    }
    case "registered":
    case "unregistered":
      if (location.hash === `#/tournaments/${frame.tournament}`) openTournament(frame.tournament);
      break;
    case "deal_offered": {
      const share = d.shares.find((x) => x.player === me);
      if (share) my.notify(`A deal is offered (${d.method === "icm" ? "ICM" : "chip chop"}): ${fmt(share.amount)} to you`);
      break;
    }
    case "deal_made": {
      const share = d.shares.find((x) => x.player === me);
      if (share) my.notify(`Deal made: you are paid ${fmt(share.amount)}; play goes on`);
      break;
    }
    case "deal_withdrawn":
      if (followed) my.notify(`The deal was withdrawn (${d.reason}); play goes on`);
      break;
    default: break;
  }
  renderBar();
  renderResult();
}

// At a table (its snapshot): a tournament's table follows its tournament.
export function atTournamentTable(tournamentId) {
  if (!tournamentId) { $("tournament-bar").hidden = true; return; }
  if (my.followed !== tournamentId || !my.state) follow(tournamentId);
  else renderBar();
}

// A hand ended at the table: the stacks moved, so your place among the players left too.
let refreshing = null;
export function tournamentHandEnded() {
  if (my.followed === null) return;
  clearTimeout(refreshing);
  refreshing = setTimeout(() => follow(my.followed), 300);
}

function clockText(s) {
  if (s.paused) return "paused";
  if (my.levelEndsAt !== null) {
    const left = Math.max(0, Math.round((my.levelEndsAt - Date.now()) / 1000));
    return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  }
  if (typeof s.hands_left === "number") return `in ${s.hands_left} hand${s.hands_left === 1 ? "" : "s"}`;
  return "–";
}

// A mixed tournament's level names its game (the events' "game"); one game's levels do not.
const gameOf = (level) => (level.game ? ` ${variantName(level.game)}` : "");

function renderBar() {
  const bar = $("tournament-bar");
  const s = my.state;
  const table = $("table-view").hidden ? null : my.tableTournament?.();
  if (!bar || !s || s.tournament !== table) { if (bar) bar.hidden = true; return; }
  const level = s.level;
  const next = s.next_level;
  const you = s.you;
  const place = you?.status === "playing" ? `${ORDINAL(you.rank)} of ${s.players_left}`
    : you?.place ? `finished ${ORDINAL(you.place)}` : you?.status === "disqualified" ? "disqualified" : "–";
  if (s.status === "finished") {
    const first = (s.results || []).find((r) => r.place === 1);
    bar.replaceChildren(el("strong", { text: s.name }),
      el("span", { id: "t-level", text: `Finished${first ? `: ${first.player} wins ${fmt(first.prize)}` : ""}` }),
      el("span", { id: "t-place", text: `you: ${place}` }));
    bar.hidden = false;
    return;
  }
  bar.replaceChildren(
    el("strong", { text: s.name }),
    el("span", { id: "t-level", dataLevel: level?.number ?? "", text: s.on_break ? "Break" : level ? `Level ${level.number}:${gameOf(level)} ${level.small_bet}/${level.big_bet}, ante ${level.ante}` : "–" }),
    el("span", { id: "t-next", text: next ? `Next${gameOf(next)} ${next.small_bet}/${next.big_bet} ${clockText(s)}` : "Last level" }),
    el("span", { id: "t-left", dataLeft: s.players_left ?? "", text: `${s.players_left ?? "–"} left` }),
    el("span", { id: "t-average", dataAverage: s.average_stack ?? "", text: `avg ${fmt(s.average_stack ?? 0)}` }),
    el("span", { id: "t-place", text: `you: ${place}` }),
    ...(s.hand_for_hand ? [el("span", { class: "tag", text: "hand for hand" })] : []));
  bar.hidden = false;
}

function resultEl(tournamentId) {
  const r = my.result;
  const box = el("p", { class: "tournament-result", id: "tournament-detail-result" });
  if (!r || r.tournament !== tournamentId) { box.hidden = true; return box; }
  box.dataset.place = r.place;
  box.dataset.prize = r.prize;
  box.textContent = `You finished ${ORDINAL(r.place)}${r.tied > 1 ? ` (tied with ${r.tied - 1} more)` : ""} · prize ${fmt(r.prize)}`;
  return box;
}

function renderResult() {
  const box = $("tournament-result");
  const r = my.result;
  const show = r && !$("table-view").hidden && my.tableTournament?.() === r.tournament;
  box.hidden = !show;
  if (!show) return;
  box.dataset.place = r.place;
  box.dataset.prize = r.prize;
  box.replaceChildren(
    `You finished ${ORDINAL(r.place)}${r.tied > 1 ? ` (tied with ${r.tied - 1} more)` : ""} · prize ${fmt(r.prize)} `,
    el("a", { href: `#/tournaments/${r.tournament}`, class: "button", text: "Results" }));
}

// ``tableTournament()``: the tournament of the table shown, or null.
export function setTableTournament(fn) { my.tableTournament = fn; }
