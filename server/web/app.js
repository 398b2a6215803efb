// The web page: sign up / log in (REST), the lobby (GET /tables, lobby.js), the wallet in
// the header (wallet.js), one table at a time over the websocket protocol (protocol.js),
// played or only watched (#/watch/<id>), and the session's hand history (GET /hands), each
// finished hand checked against the seeds of its deck (fairness.js) and replayed, as are the
// player's older hands (#/hands), by replayer.js. Tournaments (#/tournaments, and at a
// tournament's table: tournaments.js).
import { $, el, request, variantName } from "./page.js";
import { gameAndStakes } from "./games.js";
import { onFilterChange, renderLobby } from "./lobby.js";
import { clearWallet, initWallet, refreshWallet, walletOnEvent } from "./wallet.js";
import { Connection, sidePots } from "./protocol.js";
import { checkHand, newClientSeed } from "./fairness.js";
import { cardEl, cardText } from "./cards.js";
import { initReplayer, openHandsPage, openReplayer } from "./replayer.js";
import { bettingControls, installShortcuts } from "./betting.js";
import { playAdvance, renderAdvance } from "./advance.js";
import { OUT_OF_TIME, announcementText, awardLines, wonText } from "./dealer.js";
import { renderRotation, rotationLogLine } from "./rotation.js";
import { mountSettings, turnOver, yourTurn } from "./settings.js";
import { atTournamentTable, initTournaments, onTournamentEvent, openTournament, openTournamentList,
  setTableTournament, takeState, tournamentHandEnded } from "./tournaments.js";

const STREETS = { third: "3rd street", fourth: "4th street", fifth: "5th street", sixth: "6th street", seventh: "7th street", second: "2nd street", eighth: "8th street" };

const session = {
  token: sessionStorage.getItem("stud.token"),
  name: sessionStorage.getItem("stud.name"),
  conn: null,
  tables: [],
  tableName: "",
  watching: false, // the table is only watched: no seat to pick, a "Sit" to play
  log: [], chat: [], history: [],
  current: null,   // the record of the hand being played, for the history
  seeds: new Map(), // "table/hand" -> { commitment, seed }: what this page gave each hand
  seeding: new Set(), // "table/hand": the hands this page sent a seed for (one each)
  actedOn: null,   // the turn we already answered
  awards: [],      // the hand's pot_awarded events not yet said: said as one line per winner
};

// ------------------------------------------------------------------ HTTP

async function http(method, path, body) {
  return request(method, path, body, session.token);
}

function notify(text) {
  const n = $("notice");
  n.textContent = text;
  n.hidden = !text;
  clearTimeout(notify.timer);
  if (text) notify.timer = setTimeout(() => { n.hidden = true; }, 5000);
}

// ------------------------------------------------------------------ views

function show(view) {
  for (const v of ["auth-view", "lobby-view", "table-view", "hands-view", "tournaments-view"]) $(v).hidden = v !== view;
  $("who").hidden = !session.token;
  $("me-name").textContent = session.name || "";
}

async function route() {
  if (!session.token) { show("auth-view"); return; }
  refreshWallet();
  const m = location.hash.match(/^#\/(table|watch)\/(\d+)$/);
  const hands = location.hash.match(/^#\/hands(?:\/(\d+))?(?:\?(.*))?$/);
  const tournaments = location.hash.match(/^#\/tournaments(?:\/(\d+))?$/);
  if (m) await openTable(Number(m[2]), m[1] === "watch");
  else if (hands) await openHands(hands[1], hands[2]);
  else if (tournaments) await openTournaments(tournaments[1]);
  else await openLobby();
}

// ------------------------------------------------------------------ auth

async function signIn(register) {
  const username = $("username").value.trim();
  const password = $("password").value;
  $("auth-error").textContent = "";
  try {
    if (register) await http("POST", "/auth/register", { username, password });
    const { access_token: token } = await http("POST", "/auth/login", { username, password });
    session.token = token;
    session.name = username;
    sessionStorage.setItem("stud.token", token);
    sessionStorage.setItem("stud.name", username);
    $("password").value = "";
    location.hash = "#/lobby";
    await route();
  } catch (error) {
    $("auth-error").textContent = error.message;
  }
}

async function logOut() {
  await http("POST", "/auth/logout").catch(() => {});
  session.conn?.stop();
  session.conn = null;
  session.token = null;
  session.name = null;
  sessionStorage.removeItem("stud.token");
  sessionStorage.removeItem("stud.name");
  clearWallet();
  location.hash = "";
  show("auth-view");
}

async function connection() {
  if (!session.conn) {
    session.conn = new Connection({
      token: session.token,
      onTable: renderTable,
      onEvent: (kind, data, t, isPrivate) => {
        onTableEvent(kind, data, t, isPrivate);
        walletOnEvent(kind, data, t, session.name);
      },
      onStatus: notify,
      onTournament: onTournamentEvent,
      onTournamentState: takeState,
    });
    try {
      await session.conn.start();
    } catch (error) {
      session.conn.stop();
      session.conn = null;
      if (["bad_token", "token_expired", "token_revoked"].includes(error.code)) await logOut();
      throw error;
    }
  }
  await session.conn.ready;
  return session.conn;
}

// ------------------------------------------------------------------ lobby

async function openLobby() {
  if (session.conn?.tableId != null) await session.conn.unwatch();
  show("lobby-view");
  await refreshLobby();
}

async function refreshLobby() {
  try {
    session.tables = await http("GET", "/tables");
  } catch (error) { notify(error.message); return; }
  drawLobby();
}

function drawLobby() {
  renderLobby(session.tables, {
    onOpen: (t) => { location.hash = `#/table/${t.id}`; },
    onWatch: (t) => { location.hash = `#/watch/${t.id}`; },
  });
}

setInterval(() => { if (!$("lobby-view").hidden) refreshLobby(); }, 5000);

// The player's hands (#/hands, paged in the address), one of them replayed (#/hands/{id}).
async function openHands(id, query) {
  if (session.conn?.tableId != null) await session.conn.unwatch();
  show("hands-view");
  await openHandsPage(new URLSearchParams(query || ""));
  if (id) await openReplayer(Number(id));
}

// The tournaments' list, or one of them (tournaments.js).
async function openTournaments(id) {
  if (session.conn?.tableId != null) await session.conn.unwatch();
  show("tournaments-view");
  $("tournament-list").hidden = Boolean(id);
  $("tournament-detail").hidden = !id;
  if (id) await openTournament(Number(id));
  else await openTournamentList();
}

// ------------------------------------------------------------------ the table

async function openTable(id, watching = false) {
  show("table-view");
  session.watching = watching;
  if (session.conn?.tableId === id && session.conn.table) { renderTable(session.conn.table); return; }
  session.log = []; session.chat = []; session.current = null; session.awards = [];
  $("log").replaceChildren(); $("chat").replaceChildren();
  if (!session.tables.length) session.tables = await http("GET", "/tables").catch(() => []);
  const info = session.tables.find((t) => t.id === id);
  session.tableName = info ? info.name : `Table ${id}`;
  $("table-name").textContent = session.tableName;
  try {
    const conn = await connection();
    if (conn.tableId !== null && conn.tableId !== id) await conn.unwatch();  // moved on
    await conn.watch(id);
  } catch (error) { notify(error.message); }
}

const nameAt = (t, seat) => t.seats[seat]?.player || `seat ${seat + 1}`;
const ACTION_WORDS = { fold: "folds", check: "checks", call: "calls", bring_in: "brings in for", complete: "completes to", bet: "bets", raise: "raises to" };

function addLog(text, cls) {
  session.log.push({ text, cls });
  const li = el("li", { class: cls, text });
  const log = $("log");
  log.append(li);
  while (log.children.length > 200) log.firstChild.remove();
  log.scrollTop = log.scrollHeight;
}

function onTableEvent(kind, data, t, isPrivate) {
  if (kind !== "pot_awarded" && session.awards.length) sayAwards(t);
  const rotationLine = rotationLogLine(kind, data);  // a mixed table's game, and its rotation
  if (rotationLine) addLog(`Dealer: ${rotationLine}`, "dealer game");
  switch (kind) {
    case "snapshot":
      $("table-game").textContent = gameAndStakes(t.variant, t.stakes);
      if (session.current && (session.current.number !== t.handNumber || !t.hand)) session.current = null;
      seedCommitted(t);  // a commitment published before this snapshot (a reconnect)
      atTournamentTable(t.tournamentId);
      break;
    case "deck_committed":
      seedCommitted(t);
      break;
    case "hand_started":
      // Only a hand this player is dealt goes to "hands this session" (not one sat out).
      session.current = { table: t.id, tableName: session.tableName, number: t.handNumber,
        seat: data.seats.some((e) => e.seat === t.you) ? t.you : null,
        given: session.seeds.get(`${t.id}/${t.handNumber}`) || {},
        start: Object.fromEntries(data.seats.map((e) => [e.seat, e.stack])),
        names: Object.fromEntries(data.seats.map((e) => [e.seat, nameAt(t, e.seat)])),
        shows: [], awards: [] };
      addLog(`Hand #${t.handNumber}: ${variantName(data.variant)}`, "hand");
      break;
    case "street_dealt":
      addLog(`${STREETS[data.street] || data.street}: ` + (data.deals.filter((d) => d.up.length)
        .map((d) => `${nameAt(t, d.seat)} ${d.up.map(cardText).join(" ")}`).join(", ") || "dealt down"), "street");
      break;
    case "announcement":
      addLog(`Dealer: ${announcementText(data, nameAt(t, data.seat))}`, "dealer");
      break;
    case "action": {
      const amount = ["bring_in", "call", "bet"].includes(data.action) ? ` ${data.amount}`
        : ["complete", "raise"].includes(data.action) ? ` ${data.to}` : "";
      addLog(`${nameAt(t, data.seat)} ${ACTION_WORDS[data.action] || data.action}${amount}${data.all_in ? " (all in)" : ""}${data.timeout ? OUT_OF_TIME : ""}`);
      break;
    }
    case "showdown": {
      const names = handNames(data);
      session.current?.shows.push({ seat: data.seat, cards: data.cards, names, high: data.high, low: data.low });
      addLog(`${nameAt(t, data.seat)} shows ${data.cards.map(cardText).join(" ")}${names ? " — " + names : ""}`, "showdown");
      break;
    }
    case "muck":
      addLog(`${nameAt(t, data.seat)} mucks`);
      break;
    case "pot_awarded":
      session.current?.awards.push({ seat: data.seat, amount: data.amount, half: data.half, pot: data.pot });
      session.awards.push(data);
      break;
    case "rake":
      addLog(`The house takes ${data.amount} from the pot (rake)`, "dealer");
      break;
    case "hand_ended":
      finishHand(t, data);
      if (t.tournamentId) tournamentHandEnded();
      break;
    case "hand_cancelled":
      addLog(data.reason === "operator_void"
        ? `Hand #${data.hand} voided by an operator (${data.detail}): every chip back`
        : `Hand #${data.hand} cancelled (${data.reason}): every chip back`, "dealer");
      session.current = null;
      break;
    case "table_paused": addLog("The table is paused: the cardroom's database does not answer", "dealer"); break;
    case "table_unpaused": addLog(`Play resumes after ${data.seconds} s`, "dealer"); break;
    case "operator_paused":
      addLog(`An operator paused the table${data.after_hand ? " after this hand" : ""}: ${data.reason}`, "dealer"); break;
    case "operator_resumed": addLog(`An operator resumed the table: ${data.reason}`, "dealer"); break;
    case "operator_closed":
      addLog(`An operator ${data.after_hand ? "closes the table after this hand" : "closed the table"}: ${data.reason}`, "dealer"); break;
    case "table_settings":
      $("table-game").textContent = gameAndStakes(t.variant, t.stakes);
      addLog(`New table settings: ${variantName(data.variant)} ${data.stakes.small_bet}/${data.stakes.big_bet}, ${data.seats} seats, buy-in ${data.buy_in.min}–${data.buy_in.max}`, "dealer"); break;
    case "seat_taken":
      addLog(`${data.player} sits down with ${data.stack}`);
      seedCommitted(t);  // sat down after the next hand's commitment: that hand gets a seed
      break;
    case "seat_left": addLog(`${data.player} leaves`); break;
    case "sat_out": addLog(`${nameAt(t, data.seat)} sits out${data.busted ? " (out of chips)" : ""}`); break;
    case "sat_in": addLog(`${nameAt(t, data.seat)} is back`); break;
    case "time_collected": addLog(`${nameAt(t, data.seat)} pays ${data.amount} for table time`, "dealer"); break;
    case "chat": {
      const li = el("li", {}, el("b", { text: data.player + ": " }), data.text);
      $("chat").append(li);
      $("chat").scrollTop = $("chat").scrollHeight;
      break;
    }
    default: break;
  }
}

// The awards of the hand, said once they are all in: a scoop on one line.
function sayAwards(t) {
  const awards = session.awards;
  session.awards = [];
  for (const line of awardLines(awards, (n) => nameAt(t, n), (n) => t.hand?.seats[n]?.hand)) addLog(line, "win");
}

// A fresh random seed for the committed next hand (docs/fairness.md); refused (too late, no
// seat) or lost, the hand is dealt without it.
// The committed next hand gets one seed from this page while it is seated.
function seedCommitted(t) {
  const committed = t.committed;
  if (!committed || t.you === null || t.you === undefined) return;
  const key = `${t.id}/${committed.hand}`;
  if (session.seeding.has(key)) return;
  session.seeding.add(key);
  giveSeed(t.id, committed.hand, committed.commitment);
}

async function giveSeed(table, hand, commitment) {
  const seed = newClientSeed();
  try {
    const reply = await session.conn.command("client_seed", { hand, seed });
    // Too late for that hand, it went to the next one, whose commitment is not this one.
    if (reply?.hand === hand) session.seeds.set(`${table}/${hand}`, { commitment, seed });
    while (session.seeds.size > 64) session.seeds.delete(session.seeds.keys().next().value);
  } catch {  // the hand is dealt without this page's seed (a snapshot after a drop tries again)
    session.seeding.delete(`${table}/${hand}`);
  }
  while (session.seeding.size > 64) session.seeding.delete(session.seeding.keys().next().value);
}

function handNames(data) {
  const parts = [];
  if (data.high) parts.push(`high: ${data.high}`);
  if (data.low) parts.push(`low: ${data.low}`);
  if ("low" in data && data.low === null && "high" in data) parts.push("no low");
  return parts.join(", ");
}

function finishHand(t, data) {
  const record = session.current;
  session.current = null;
  if (!record || record.seat === null || record.seat === undefined) return;
  const mine = t.hand?.seats[record.seat];
  const end = data.stacks.find((e) => e.seat === record.seat)?.stack;
  const entry = {
    ...record,
    down: mine ? mine.down.slice() : [],
    up: mine ? mine.up.slice() : [],
    net: end !== undefined && record.start[record.seat] !== undefined ? end - record.start[record.seat] : null,
    id: null,
  };
  session.history.unshift(entry);
  renderHistory();
  setTimeout(matchHandIds, 400);
}

async function matchHandIds() {
  try {
    const page = await http("GET", "/hands?limit=50");
    for (const line of page.hands) {
      const entry = session.history.find((h) => h.table === line.table_id && h.number === line.number);
      if (entry) { entry.id = line.id; entry.net = line.net; }
    }
    renderHistory();
  } catch { /* shown without links */ }
}

function renderHistory() {
  $("history").replaceChildren(...session.history.map((h) => {
    const winners = [...new Set(h.awards.map((a) => h.names[a.seat] || `seat ${a.seat + 1}`))];
    const won = awardLines(h.awards, (n) => h.names[n] || `seat ${n + 1}`, (n) => h.shows.find((s) => s.seat === n));
    return el("li", { dataHandNumber: h.number, dataTable: h.table, dataHandId: h.id ?? "", dataMyDown: h.down.join(" "), dataMyUp: h.up.join(" "), dataWinners: winners.join(","), dataNet: h.net ?? "" },
      el("div", { class: "history-head" },
        el("strong", { text: `#${h.number}` }), el("span", { class: "history-table", text: h.tableName }),
        el("span", { class: "cards small" }, ...h.down.map((c) => cardEl(c, true)), ...h.up.map((c) => cardEl(c))),
        h.net === null ? null : el("span", { class: h.net > 0 ? "net plus" : h.net < 0 ? "net minus" : "net", text: h.net > 0 ? `+${h.net}` : `${h.net}` }),
        h.id ? el("button", { type: "button", class: "link replay", onclick: () => openReplayer(h.id) }, "replay") : null,
        h.id ? el("button", { type: "button", class: "verify", onclick: () => verifyHand(h) }, "verify") : null),
      el("div", { class: "history-won", text: won.join("; ") || "no winner recorded" }));
  }));
}

// The hand's deal checked here (commitment, this page's seed, the order of your cards), and
// the history to download for stud-verify, which checks every card (docs/fairness.md).
async function verifyHand(h) {
  const pre = $("hand-detail");
  try {
    const hand = await http("GET", `/hands/${h.id}`);
    const { fair, checks } = await checkHand(hand, h.given);
    const lines = [`Hand #${hand.number}: ${fair ? "fair" : "NOT FAIR"}`,
      ...checks.map(([what, ok]) => `${ok ? "✓" : "✗"} ${what}`)];
    if (hand.fairness) lines.push(`${hand.fairness.method}, commitment ${hand.fairness.commitment}`);
    if (hand.fairness?.server_seed) lines.push(`server seed ${hand.fairness.server_seed}`);
    const blob = new Blob([JSON.stringify(hand, null, 1)], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `hand-${hand.id}.json`, class: "download" },
      "Download this hand for stud-verify");
    pre.replaceChildren(lines.join("\n") + "\n", link);
    pre.dataset.fair = String(fair);
    pre.hidden = false;
  } catch (error) { notify(error.message); }
}

// ------------------------------------------------------------------ rendering

function renderTable(t) {
  const hand = t.hand;
  $("hand-number").textContent = t.handNumber ?? "–";
  $("street").textContent = hand?.street ? (STREETS[hand.street] || hand.street) : "waiting";
  $("pot").textContent = hand ? hand.pot : 0;
  const pots = hand ? sidePots(hand.seats) : [];
  $("side-pots").textContent = pots.length > 1
    ? "(" + pots.map((p, i) => `${i ? "side" : "main"} ${p.amount}`).join(", ") + ")" : "";
  // The bring-in is said until it is made: then the log has the act.
  let last = hand?.announcements.at(-1);
  if (last?.kind === "bring_in" && hand.to_act !== last.seat) last = null;
  $("announce").textContent = hand?.over ? winnersText(t) : last ? announcementText(last, nameAt(t, last.seat)) : "";
  renderPauseBanner(t);
  renderRotation(t, $("rotation-bar"));
  if (t.game) $("table-game").textContent = gameAndStakes(t.variant, t.stakes);  // each hand's

  // Too few cards left for every player's last card: one common card, face up, everyone's.
  const common = hand?.common ?? [];
  $("common").hidden = !common.length;
  $("common").replaceChildren(...(common.length
    ? [el("span", { text: "Common card" }), el("span", { class: "cards" }, ...common.map((c) => cardEl(c)))]
    : []));
  $("seats").replaceChildren(...t.seats.map((s) => seatEl(t, s)));
  renderActions(t);
  renderAdvance(t, $("advance"));
  renderSeatControls(t);
  tick();
}

function winnersText(t) {
  return awardLines(t.hand.awards, (n) => nameAt(t, n), (n) => t.hand.seats[n]?.hand).join(" · ");
}

// An operator's pause, said at the top of the table while it lasts (operator_pause in the
// snapshot, operator_paused / operator_resumed events).
function renderPauseBanner(t) {
  const banner = $("pause-banner");
  const reason = t.operatorPause;
  banner.hidden = !reason || Boolean(t.closed);
  banner.textContent = !reason ? "" : t.hand && !t.hand.over
    ? `An operator pauses the table after this hand: ${reason}`
    : `Paused by an operator: ${reason}. No new hand until the table resumes.`;
}

function seatEl(t, s) {
  const n = s.seat;
  if (!s.player) {
    const canSit = t.you === null && !session.watching && !t.tournamentId;
    return el("div", { class: "seat empty", dataSeat: n },
      el("div", { class: "seat-top" }, el("span", { class: "name", text: `Seat ${n + 1}` })),
      canSit ? el("button", { type: "button", class: "sit", dataSeat: n, onclick: () => sit(n) }, "Sit here") : el("span", { class: "muted", text: "empty" }));
  }
  const h = t.hand?.seats[n];
  const toAct = t.hand && !t.hand.over && t.hand.to_act === n;
  const awards = t.hand?.awards.filter((a) => a.seat === n) || [];
  const cls = ["seat", n === t.you && "me", toAct && "to-act", h?.folded && "folded", awards.length && "winner", s.sitting_out && "out"].filter(Boolean).join(" ");
  const stack = h ? h.stack : s.stack;
  let cards = [];
  if (h) {
    const shownDown = h.down.length ? h.down : [];
    const hidden = Math.max(0, h.down_count - shownDown.length);
    cards = [...shownDown.map((c) => cardEl(c, true)), ...Array.from({ length: hidden }, () => cardEl(null)), ...h.up.map((c) => cardEl(c))];
  }
  const status = [];
  if (h?.folded) status.push("folded");
  if (h?.all_in) status.push("all in");
  if (h?.mucked) status.push("mucked");
  if (s.sitting_out) status.push("sitting out");
  else if (s.sit_out_next_hand) status.push("sits out next hand");
  if (s.leaving) status.push("leaving");
  if (s.connected === false) status.push("away");
  return el("div", { class: cls, dataSeat: n, dataPlayer: s.player },
    el("div", { class: "seat-top" },
      el("span", { class: "name", title: s.player, text: s.player + (n === t.you ? " (you)" : "") }),
      el("span", { class: "stack", title: "stack", dataStack: stack, text: stack })),
    el("div", { class: "cards" }, ...cards),
    el("div", { class: "seat-foot" },
      h && h.bet && !t.hand.over ? el("span", { class: "bet", dataBet: h.bet, text: `bet ${h.bet}` }) : null,
      status.length ? el("span", { class: "status", text: status.join(", ") }) : null,
      toAct ? el("span", { class: "clock", dataClockSeat: n }) : null,
      // What is left of the time bank; nothing once it is spent.
      !(s.time_bank >= 0.5) ? null : el("span", { class: "bank muted", dataBank: s.time_bank, text: `bank ${Math.round(s.time_bank)}s` })),
    h?.hand ? el("div", { class: "hand-name", text: handNames(h.hand) }) : null,
    awards.length ? el("div", { class: "won", text: wonText(awards) }) : null);
}

function tick() {
  const t = session.conn?.table;
  for (const node of document.querySelectorAll("[data-clock-seat]")) {
    if (!t?.clock || t.clock.seat !== Number(node.dataset.clockSeat)) { node.textContent = ""; continue; }
    const left = Math.max(0, (t.clock.end - Date.now()) / 1000);
    const action = Math.max(0, left - t.clock.bank);
    node.textContent = action > 0 ? `${action.toFixed(0)}s to act` : `time bank: ${left.toFixed(0)}s`;
    node.classList.toggle("urgent", action <= 0 || action < 5);
  }
}
setInterval(tick, 250);

function renderActions(t) {
  const box = $("actions");
  const hand = t.hand;
  const legal = hand?.legal;
  const mine = hand && !hand.over && legal && t.you !== null && hand.to_act === t.you;
  const turnKey = mine ? `${t.handNumber}:${hand.turnSeq}` : null;
  if (!mine) { box.hidden = true; box.replaceChildren(); box.dataset.turn = ""; turnOver(); return; }
  if (box.dataset.turn === turnKey) return;  // keep what the player typed
  box.dataset.turn = turnKey;
  box.replaceChildren(el("span", { class: "your-turn", text: "Your turn" }), ...bettingControls(t, act));
  box.hidden = false;
  // An advance action ticked while others acted plays now (advance.js); else it is up to you.
  const advance = playAdvance(t);
  if (advance) act(advance);
  else yourTurn();
}

const newId = () => (crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`);

async function act(kind, amount) {
  const conn = session.conn;
  const box = $("actions");
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  const fields = { action_id: newId(), kind };
  if (amount !== null && amount !== undefined && ["complete", "bet", "raise"].includes(kind)) fields.amount = amount;
  try {
    await conn.command("act", fields);
  } catch (error) {
    notify(`${error.code}: ${error.message}`);
    for (const b of box.querySelectorAll("button")) b.disabled = false;
  }
}

function defaultBuyIn(t) {
  const { min, max } = t.buyIn;
  return Math.max(min, Math.min(max, 50 * t.stakes.big_bet));
}

let freeCheck = null; // the "check when free" box, kept while the page lives

function renderSeatControls(t) {
  const box = $("seat-controls");
  const me = t.you !== null ? t.seats[t.you] : null;
  const items = [];
  if (t.tournamentId) {  // the director seats and moves; a player may only sit out and in
    if (me?.sitting_out) items.push(el("button", { type: "button", id: "sit-in", onclick: () => command("sit_in") }, "Sit in"));
    else if (me) items.push(...sitOutControls(t, me));
    else items.push(el("span", { class: "muted", text: "A tournament's table" }));
  } else if (!me && session.watching) {
    items.push(el("span", { class: "muted", text: "Watching" }),
      el("button", { type: "button", id: "sit-down", onclick: () => { location.hash = `#/table/${t.id}`; } }, "Sit"));
  } else if (!me) {
    const input = $("buy-in") || el("input", { id: "buy-in", type: "number", step: 1 });
    input.min = t.buyIn.min; input.max = t.buyIn.max;
    if (!input.value && document.activeElement !== input) input.value = defaultBuyIn(t);
    items.push(el("label", {}, `Buy-in (${t.buyIn.min}–${t.buyIn.max}) `, input));
    if (t.seats.every((s) => s.player)) {
      items.push(t.waiting.includes(session.name)
        ? el("span", { text: `On the waiting list (${t.waiting.indexOf(session.name) + 1})` })
        : el("button", { type: "button", onclick: () => command("join_waiting_list") }, "Join waiting list"));
    } else {
      items.push(el("span", { class: "muted", text: "Pick a seat to sit down" }));
    }
  } else {
    if (me.sitting_out) items.push(el("button", { type: "button", id: "sit-in", onclick: () => sitIn(t) }, "Sit in"));
    else items.push(...sitOutControls(t, me));
    items.push(...addChipsControls(t, me));
    if (!me.leaving) items.push(el("button", { type: "button", id: "leave", onclick: () => command("leave") }, "Leave seat"));
  }
  // The controls are drawn again on every table event: whoever is typing in one of them
  // (the buy-in) keeps the focus.
  const typing = box.contains(document.activeElement) ? document.activeElement : null;
  box.replaceChildren(...items);
  if (typing && box.contains(typing) && document.activeElement !== typing) typing.focus();
}

// "Sit out next hand" (the hand in progress plays on; between hands, out at once) and, during
// one's hand, "Sit out now": the table then folds it at one's turn, at once (a free check
// instead, if asked), never waiting for the clock.
function sitOutControls(t, me) {
  const next = el("input", { id: "sit-out-next", type: "checkbox", checked: me.sit_out_next_hand });
  next.addEventListener("change", () => command(next.checked ? "sit_out" : "sit_in", next.checked ? { next_hand: true } : {}));
  const items = [el("label", { title: "the hand in progress plays on; you sit out when it ends" }, next, " Sit out next hand")];
  const mine = t.hand && !t.hand.over ? t.hand.seats[t.you] : null;
  if (mine && !mine.folded) {
    freeCheck ||= el("input", { id: "check-when-free", type: "checkbox" });
    items.push(el("button", { type: "button", id: "sit-out-now", title: "your hand is folded at your turn",
      onclick: () => command("sit_out", { next_hand: false, check_when_free: freeCheck.checked }) }, "Sit out now"),
    el("label", { title: "sitting out now: check where it costs nothing instead of folding" }, freeCheck, " check when free"));
  }
  return items;
}

// Add chips while seated, up to the maximum buy-in on the table: at once between hands, when
// the hand ends during one (the chips waiting are shown).
function addChipsControls(t, me) {
  const pending = me.pending_chips || 0;
  const room = t.buyIn.max - me.stack - pending;
  const items = [];
  if (pending) items.push(el("span", { id: "chips-pending", class: "muted", text: `+${pending} after this hand` }));
  if (room <= 0) return items;
  const input = $("add-chips-amount") || el("input", { id: "add-chips-amount", type: "number", step: 1, min: 1 });
  input.max = room;
  const add = async () => {
    const amount = Number(input.value);
    if (await command("add_chips", { amount }) !== null) input.value = "";
  };
  input.onkeydown = (e) => { if (e.key === "Enter") { e.preventDefault(); add(); } };
  items.push(el("label", { title: `at most ${t.buyIn.max} on the table` }, `Add chips (up to ${room}) `, input),
    el("button", { type: "button", id: "add-chips", onclick: add }, "Add chips"));
  return items;
}

async function sitIn(t) {
  const me = t.seats[t.you];
  const needed = t.stakes.ante + t.stakes.bring_in;
  if (me.stack + (me.pending_chips || 0) < Math.max(needed, 1)) {
    const target = defaultBuyIn(t);
    await command("add_chips", { amount: Math.min(t.buyIn.max, target) - me.stack - (me.pending_chips || 0) });
  }
  await command("sit_in");
}

async function command(type, fields = {}) {
  try { return await session.conn.command(type, fields); } catch (error) { notify(`${error.code}: ${error.message}`); return null; }
}

async function sit(seat) {
  const amount = Number($("buy-in")?.value) || defaultBuyIn(session.conn.table);
  await command("sit", { seat, buy_in: amount });
}

// ------------------------------------------------------------------ wiring

$("auth-form").addEventListener("submit", (e) => { e.preventDefault(); signIn(false); });
$("signup").addEventListener("click", () => { if ($("auth-form").reportValidity()) signIn(true); });
$("logout").addEventListener("click", logOut);
$("back").addEventListener("click", () => { location.hash = "#/lobby"; });
$("home").addEventListener("click", (e) => { e.preventDefault(); location.hash = session.token ? "#/lobby" : ""; });
$("chat-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = $("chat-text").value.trim();
  if (!text) return;
  if (await command("chat", { text }) !== null) $("chat-text").value = "";
});
onFilterChange(drawLobby);
initTournaments({ http, connection, notify, name: () => session.name,
  goTable: (id) => { if (location.hash !== `#/table/${id}`) location.hash = `#/table/${id}`; } });
setTableTournament(() => session.conn?.table?.tournamentId ?? null);
initWallet(http, (id) => session.tables.find((t) => t.id === id)?.name || `table ${id}`);
initReplayer({ token: () => session.token, notify });
window.addEventListener("hashchange", route);
installShortcuts();
mountSettings($("table-prefs"));
route();
