// The hand replayer: one of the player's own hands (GET /hands/{id}) street by street, as
// their seat saw it. The hand's record holds the events sent to everyone and to this seat
// only; they are folded one at a time through the live table's fold (protocol.js apply), so
// the replay shows what the table showed: others' down cards only where a showdown tabled
// them. Also the player's list of hands (GET /hands, a page at a time) and the download of
// a hand as PHH (GET /hands/{id}/phh).
import { $, el, request, variantName } from "./page.js";
import { apply, sidePots } from "./protocol.js";
import { cardEl } from "./cards.js";
import { OUT_OF_TIME, announcementText, withArticle, wonText } from "./dealer.js";

export const STREETS = {
  second: "2nd street", third: "3rd street", fourth: "4th street", fifth: "5th street",
  sixth: "6th street", seventh: "7th street", eighth: "8th street",
};
const PLAY_MS = 900;
// What the dealer does when the deck runs short (engine Deck.deal_round).
const PROCEDURES = {
  reshuffled_burns: "the deck is short: the burn cards are shuffled in",
  reshuffled_no_burn: "the deck is short: the burn cards are shuffled in, no burn",
  common_card: "not enough cards: one common card for everyone",
};

let options = {
  token: () => null,
  notify: () => {},
  load: (id) => request("GET", `/hands/${id}`, null, options.token()),
  phhPath: (id) => `/hands/${id}/phh`,
};

// token(): the bearer token; notify(text): a message for the player. The operators' console
// gives its own load(id) (the record with every card, seat null: no "you") and phhPath(id).
export function initReplayer(given) { options = { ...options, ...given }; }

// ------------------------------------------------------------------ what was said

// An action as the dealer says it: "raises to 30", "brings in for 2", "calls 3, all in".
export function actionSaid(data) {
  const words = {
    fold: "folds", check: "checks", call: `calls ${data.amount}`,
    bring_in: `brings in for ${data.amount}`, complete: `completes to ${data.to}`,
    bet: `bets ${data.amount}`, raise: `raises to ${data.to}`,
  }[data.action] || data.action;
  return `${words}${data.all_in ? ", all in" : ""}${data.timeout ? OUT_OF_TIME : ""}`;
}

export function handNames(data) {
  const parts = [];
  if (data.high) parts.push(`high: ${data.high}`);
  if (data.low) parts.push(`low: ${data.low}`);
  if ("low" in data && data.low === null && "high" in data) parts.push("no low");
  return parts.join(", ");
}

// Where a hand was played: its table, or a tournament's hand its tournament and table there.
export function handPlace(hand) {
  return hand.tournament_id ? `${hand.tournament_name}, table ${hand.tournament_table}` : hand.table_name;
}

// A tournament hand's level (" · level 3"); nothing for a cash hand.
const levelOf = (hand) => (hand.level ? ` · level ${hand.level}` : "");

// ------------------------------------------------------------------ the frames

// The replay's steps: one per deal, action, show, muck and award. Each has what was said
// (lines of text and cards: {card, down}) and the picture of the hand after it.
export function framesOf(hand) {
  const names = Object.fromEntries(hand.players.map((p) => [p.seat, p.player]));
  const size = Math.max(hand.seat, ...hand.players.map((p) => p.seat)) + 1;
  const t = {
    id: hand.table_id, seq: 0, me: names[hand.seat], you: hand.seat, handNumber: hand.number,
    hand: null, clock: null, waiting: [],
    seats: Array.from({ length: size }, (_, n) => (n in names
      ? { seat: n, player: names[n], stack: 0, pending_chips: 0 } : { seat: n, player: null })),
  };
  const who = (n) => (n === hand.seat ? `${names[n]} (you)` : names[n] ?? `seat ${n + 1}`);
  const potCount = Math.max(hand.result?.pots?.length || 0,
    1 + Math.max(0, ...hand.events.filter((e) => e.kind === "pot_awarded").map((e) => e.data.pot)));
  const potName = (k) => (potCount === 1 ? "the pot" : k === 0 ? "the main pot"
    : potCount === 2 ? "the side pot" : `side pot ${k}`);
  const shown = {};
  const frames = [];
  let frame = null;
  let street = null;
  let known = {};  // seat -> down cards seen (the viewer's own; an operator's: everyone's), told just before their street is dealt
  let notes = [];  // the dealer's words on a short deck, told just before the street
  const open = (kind, group, ...line) => { frame = { kind, street: group, lines: [line] }; frames.push(frame); };
  for (const e of hand.events) {
    const d = e.data;
    t.seq += 1;
    apply(t, e.kind, d, e.to !== null && e.to !== undefined);
    switch (e.kind) {
      case "hand_started":
        open("start", "start", `Hand #${hand.number} at ${handPlace(hand)}${hand.level ? ` (level ${hand.level})` : ""}: ${variantName(d.variant)} `
          + `${d.small_bet}/${d.big_bet}, ante ${d.ante}, bring-in ${d.bring_in}`);
        frame.lines.push(["Seats: " + d.seats.map((s) => `${who(s.seat)} ${s.stack}`).join(", ")]);
        break;
      case "ante":
        frame?.lines.push([`${who(d.seat)} antes ${d.amount}${d.all_in ? ", all in" : ""}`]);
        break;
      case "down_cards": known[d.seat] = (known[d.seat] || []).concat(d.cards); break;
      case "street_dealt":
        street = d.street;
        open("street", street, `${STREETS[street] || street}`);
        for (const deal of d.deals) {
          const seen = known[deal.seat] || [];
          const down = seen.length ? seen.map((card) => ({ card, down: true }))
            : Array.from({ length: deal.down }, () => ({ card: null }));
          // Cards face down and unseen are said in words too: the log's text is never empty.
          const words = !seen.length && deal.down && !deal.up.length
            ? [deal.down === 1 ? "a card face down " : `${deal.down} cards face down `] : [];
          frame.lines.push([`${who(deal.seat)}: `, ...words, ...down, ...deal.up.map((card) => ({ card }))]);
        }
        known = {};
        frame.lines.push(...notes);
        notes = [];
        break;
      case "common_card":
        street = d.street;
        open("street", street, `${STREETS[street] || street}: a common card `, { card: d.card });
        frame.lines.push(...notes);
        notes = [];
        break;
      case "deck_procedure": notes.push([`Dealer: ${PROCEDURES[d.procedure] || d.procedure}`]); break;
      case "announcement": frame?.lines.push([`Dealer: ${announcementText(d, names[d.seat])}`]); break;
      case "action": open("action", street, `${who(d.seat)} ${actionSaid(d)}`); break;
      case "uncalled_returned": open("action", street, `${d.amount} uncalled, back to ${who(d.seat)}`); break;
      case "showdown":
        shown[d.seat] = d;
        open("showdown", "showdown", `${who(d.seat)} shows `, ...d.cards.map((card) => ({ card })),
          handNames(d) ? ` — ${handNames(d)}` : "");
        break;
      case "muck": open("showdown", "showdown", `${who(d.seat)} mucks`); break;
      case "pot_awarded": {
        // Both halves of a pot to one seat: a scoop, said on one line.
        const before = frames.at(-1)?.award;
        if (before && before.seat === d.seat && before.pot === d.pot && before.half === "high" && d.half === "low") {
          const s = shown[d.seat];
          const words = [s?.high && `high with ${withArticle(s.high)}`, s?.low && `low with ${s.low}`].filter(Boolean).join(" and ");
          frame.lines = [[`${who(d.seat)} scoops ${potName(d.pot)}: ${before.amount + d.amount}${words ? `, ${words}` : ""}`]];
          frame.award = null;
          break;
        }
        const half = d.half && d.half !== "whole" ? `the ${d.half} half of ` : "";
        const by = shown[d.seat] && (d.half === "low" ? shown[d.seat].low : shown[d.seat].high || shown[d.seat].low);
        open("award", "showdown", `${who(d.seat)} wins ${half}${potName(d.pot)}: ${d.amount}${by ? ` with ${by}` : ""}`);
        frame.award = d;
        break;
      }
      case "rake": open("award", "showdown", `The house takes ${d.amount} (rake)`); break;
      case "hand_ended":
        open("end", "showdown", "Hand over: " + hand.players.map((p) => {
          const net = p.ending - p.starting;
          return `${who(p.seat)} ${p.starting} → ${p.ending} (${net > 0 ? "+" : ""}${net})`;
        }).join(", "));
        break;
      case "hand_cancelled": {
        // Void: the picture as it stood, every chip back where it came from.
        const last = frames.at(-1)?.view;
        open("end", "showdown", d.reason === "operator_void" ? "Hand voided by an operator: every chip back"
          : `Hand cancelled (${d.reason.replaceAll("_", " ")}): every chip back`);
        if (last) frame.view = refunded(last, hand.players);
        break;
      }
      default: break;  // turns and the rest: folded into the picture only
    }
    if (frame && t.hand) frame.view = structuredClone(t.hand);
  }
  return frames.filter((f) => f.view);
}

function refunded(view, players) {
  const v = structuredClone(view);
  for (const p of players) if (v.seats[p.seat]) Object.assign(v.seats[p.seat], { stack: p.starting, bet: 0, in_pot: 0 });
  return { ...v, pot: 0, over: true, to_act: null, legal: null };
}

// The streets to jump to: the first frame of each.
function chapters(frames) {
  const marks = [];
  const tabled = frames.some((f) => f.kind === "showdown");
  frames.forEach((f, k) => {
    if (marks.at(-1)?.street === f.street) return;
    const name = f.street === "start" ? "Antes" : f.street === "showdown" ? (tabled ? "Showdown" : "Result")
      : STREETS[f.street] || f.street;
    marks.push({ street: f.street, name, frame: k });
  });
  return marks;
}

// ------------------------------------------------------------------ the dialog

const state = { hand: null, frames: [], at: 0, timer: null };

function dialog() {
  let box = $("replayer");
  if (box) return box;
  box = el("dialog", { id: "replayer", class: "replayer", "aria-label": "Hand replayer" });
  box.addEventListener("close", stop);
  box.addEventListener("keydown", (e) => {
    if (e.key === "ArrowRight") { e.preventDefault(); go(state.at + 1); }
    if (e.key === "ArrowLeft") { e.preventDefault(); go(state.at - 1); }
  });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && box.open) leaveAddress(); });
  document.body.append(box);
  return box;
}

// Closing a hand opened from its own address (#/hands/{id}, and the list's query after it)
// leaves the hands page's address.
// Done as the player closes it (the ✕, Escape), not in the dialog's close event: that event
// comes a task later, and would undo an address the player went to meanwhile.
function leaveAddress() {
  const opened = /^#\/hands\/\d+(\?.*)?$/.exec(location.hash);
  if (opened) history.replaceState(null, "", `#/hands${opened[1] || ""}`);
}

// Open the replayer on one of the player's hands.
export async function openReplayer(id) {
  let hand;
  try {
    hand = await options.load(id);
  } catch (error) { options.notify(error.message); return; }
  stop();
  state.hand = hand;
  state.frames = framesOf(hand);
  state.at = 0;
  const box = dialog();
  const stakes = hand.events.find((e) => e.kind === "hand_started")?.data;
  const when = new Date(hand.created_at).toLocaleString();
  box.replaceChildren(
    el("div", { class: "replay-head" },
      el("h2", { text: `Hand #${hand.number} · ${handPlace(hand)}` }),
      el("span", { class: "muted", text: `${variantName(hand.variant)}${stakes ? ` ${stakes.small_bet}/${stakes.big_bet}` : ""}${levelOf(hand)} · ${when}` }),
      el("button", { type: "button", class: "replay-close", "aria-label": "Close", onclick: () => { leaveAddress(); box.close(); } }, "✕")),
    el("nav", { class: "replay-streets" }, ...chapters(state.frames).map((c) => el("button", {
      type: "button", dataStreet: c.street, dataFrame: c.frame, onclick: () => { stop(); go(c.frame); },
    }, c.name))),
    el("div", { class: "replay-pot", id: "replay-pot" }),
    el("div", { class: "replay-seats", id: "replay-seats" }),
    el("div", { class: "replay-said", id: "replay-said", "aria-live": "polite" }),
    el("div", { class: "replay-controls" },
      el("button", { type: "button", id: "replay-first", title: "The hand's start", onclick: () => { stop(); go(0); } }, "|◀ Start"),
      el("button", { type: "button", id: "replay-back", title: "Back", onclick: () => { stop(); go(state.at - 1); } }, "◀ Back"),
      el("button", { type: "button", id: "replay-play", onclick: togglePlay }, "▶ Play"),
      el("button", { type: "button", id: "replay-forward", title: "Forward", onclick: () => { stop(); go(state.at + 1); } }, "Forward ▶"),
      el("button", { type: "button", id: "replay-last", title: "The hand's end", onclick: () => { stop(); go(state.frames.length - 1); } }, "End ▶|"),
      el("span", { class: "muted", id: "replay-step" }),
      hand.phh_withheld
        ? el("span", { class: "muted", text: "no PHH: the format has no code for this game" })
        : el("button", { type: "button", id: "replay-phh", class: "link", onclick: () => downloadPhh(hand) }, "Download PHH")),
    el("ol", { class: "replay-log", id: "replay-log" }),
  );
  if (!box.open) box.showModal();
  go(0);
}

function go(k) {
  const frames = state.frames;
  if (!frames.length) {
    $("replay-said").textContent = "This hand was cancelled before a card was dealt.";
    for (const id of ["replay-back", "replay-forward", "replay-play"]) $(id).disabled = true;
    return;
  }
  state.at = Math.max(0, Math.min(frames.length - 1, k));
  const frame = frames[state.at];
  const box = $("replayer");
  box.dataset.frame = state.at;
  box.dataset.street = frame.street;
  box.dataset.kind = frame.kind;
  $("replay-step").textContent = `${state.at + 1} / ${frames.length}`;
  $("replay-back").disabled = state.at === 0;
  $("replay-forward").disabled = state.at === frames.length - 1;
  for (const b of box.querySelectorAll(".replay-streets button")) {
    b.classList.toggle("current", b.dataset.street === frame.street);
  }
  renderPot(frame.view);
  renderSeats(frame.view);
  $("replay-said").replaceChildren(...frame.lines.map((line) => el("div", {}, ...lineEls(line))));
  renderLog();
}

function lineEls(line) {
  return line.map((part) => (typeof part === "string" ? part
    : el("span", { class: "cards small inline" }, cardEl(part.card, part.down))));
}

function renderPot(view) {
  const pots = sidePots(view.seats);
  const detail = pots.length > 1 ? pots.map((p, i) => `${i ? (pots.length > 2 ? `side ${i}` : "side") : "main"} ${p.amount}`).join(", ") : "";
  const box = $("replay-pot");
  box.dataset.pot = view.pot;
  box.dataset.pots = pots.map((p) => p.amount).join(",");
  box.replaceChildren("Pot ", el("strong", { text: view.pot }), detail ? ` (${detail})` : "");
}

function renderSeats(view) {
  const you = state.hand.seat;
  const names = Object.fromEntries(state.hand.players.map((p) => [p.seat, p.player]));
  $("replay-seats").replaceChildren(...Object.entries(view.seats).map(([key, s]) => {
    const n = Number(key);
    const hidden = Math.max(0, s.down_count - s.down.length);
    const wins = view.awards.filter((a) => a.seat === n);
    const status = [s.folded && "folded", s.all_in && "all in", s.mucked && "mucked"].filter(Boolean);
    const cls = ["replay-seat", n === you && "me", view.to_act === n && "to-act", s.folded && "folded", wins.length && "winner"];
    return el("div", { class: cls.filter(Boolean).join(" "), dataSeat: n, dataPlayer: names[n] },
      el("div", { class: "seat-top" },
        el("span", { class: "name", text: (names[n] ?? `seat ${n + 1}`) + (n === you ? " (you)" : "") }),
        el("span", { class: "stack", dataStack: s.stack, text: s.stack })),
      el("div", { class: "cards" }, ...s.down.map((c) => cardEl(c, true)),
        ...Array.from({ length: hidden }, () => cardEl(null)), ...s.up.map((c) => cardEl(c))),
      el("div", { class: "seat-foot" },
        s.bet && !view.over ? el("span", { class: "bet", dataBet: s.bet, text: `bet ${s.bet}` }) : null,
        status.length ? el("span", { class: "status", text: status.join(", ") }) : null),
      s.hand ? el("div", { class: "hand-name", text: handNames(s.hand) }) : null,
      wins.length ? el("div", { class: "won", text: wonText(wins) }) : null);
  }));
}

// Everything said up to this step, street by street; this step's lines marked.
function renderLog() {
  const items = [];
  state.frames.slice(0, state.at + 1).forEach((f, k) => {
    f.lines.forEach((line, i) => items.push(el("li", {
      class: [k === state.at && "current", f.kind === "street" && i === 0 && "street"].filter(Boolean).join(" ") || null,
      dataFrame: k,
    }, ...lineEls(line))));
  });
  const log = $("replay-log");
  log.replaceChildren(...items);
  log.scrollTop = log.scrollHeight;
}

function togglePlay() {
  if (state.timer) { stop(); return; }
  if (state.at >= state.frames.length - 1) go(0);
  $("replay-play").textContent = "❚❚ Pause";
  state.timer = setInterval(() => {
    if (state.at >= state.frames.length - 1) { stop(); return; }
    go(state.at + 1);
  }, PLAY_MS);
}

function stop() {
  clearInterval(state.timer);
  state.timer = null;
  const button = $("replay-play");
  if (button) button.textContent = "▶ Play";
}

// The hand as a PHH file, as this seat saw it (GET /hands/{id}/phh), saved by the browser.
async function downloadPhh(hand) {
  try {
    const response = await fetch(options.phhPath(hand.id), { headers: { Authorization: `Bearer ${options.token()}` } });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      throw new Error(body?.error?.message || `HTTP ${response.status}`);
    }
    const name = /filename="([^"]+)"/.exec(response.headers.get("Content-Disposition") || "")?.[1]
      || `hand-${hand.id}.phh`;
    const link = el("a", { href: URL.createObjectURL(await response.blob()), download: name });
    $("replayer").append(link);
    link.click();
    link.remove();
  } catch (error) { options.notify(error.message); }
}

// ------------------------------------------------------------------ the list of hands

// The player's hands, newest first, a page at a time: the page is in the address
// (#/hands?limit=20&before=123), so the browser's back button pages back. A tournament's
// hand names its tournament, its table there and its level.
export async function openHandsPage(query) {
  const limit = Math.max(1, Math.min(100, Number(query.get("limit")) || 20));
  const before = Number(query.get("before")) || null;
  const box = $("hands-view");
  let page;
  try {
    page = await request("GET", `/hands?limit=${limit}${before ? `&before=${before}` : ""}`, null, options.token());
  } catch (error) { options.notify(error.message); return; }
  const rows = page.hands.map((h) => el("tr", { dataHandId: h.id, dataTable: h.table_id, dataHandNumber: h.number },
    el("td", { text: new Date(h.created_at).toLocaleString() }),
    el("td", { text: handPlace(h) }),
    el("td", { text: `${variantName(h.variant)}${levelOf(h)}` }),
    el("td", { text: `#${h.number}` }),
    el("td", { class: h.net > 0 ? "net plus" : h.net < 0 ? "net minus" : "net", text: h.cancelled ? "cancelled" : h.net > 0 ? `+${h.net}` : `${h.net}` }),
    el("td", {}, el("button", { type: "button", class: "link replay", onclick: () => openReplayer(h.id) }, "Replay"))));
  box.replaceChildren(
    el("div", { class: "hands-head" },
      el("a", { href: "#/lobby", class: "button" }, "← Lobby"),
      el("h2", { text: "My hands" })),
    page.hands.length
      ? el("table", { class: "hands" },
        el("thead", {}, el("tr", {}, ...["When", "Table", "Game", "Hand", "Net", ""].map((t) => el("th", { text: t })))),
        el("tbody", { id: "hands-rows" }, ...rows))
      : el("p", { class: "muted", text: before ? "No older hands." : "No hands yet: sit down at a table." }),
    el("div", { class: "row hands-paging" },
      before ? el("a", { href: `#/hands?limit=${limit}`, class: "button", id: "hands-newest" }, "Newest") : null,
      page.next_before ? el("a", { href: `#/hands?limit=${limit}&before=${page.next_before}`, class: "button", id: "hands-older" }, "Older hands →") : null),
  );
}
