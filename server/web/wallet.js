// The wallet in the page's header (GET /wallet): the balance, and on demand its latest
// movements, newest first, older pages on request. Refreshed when the player's chips move:
// sitting down, adding chips, leaving, a hand's end.
import { $, el } from "./page.js";

const PAGE = 10;
const KINDS = {
  grant: "Chips from the house", buy_in: "Buy-in", cash_out: "Cash-out", hand_result: "Hand result",
  refund: "Refund", adjustment: "Adjustment", rake: "Rake", time_fee: "Table time",
};

const state = { request: null, tableName: (id) => `table ${id}`, balance: null, entries: [], next: null, timer: null };

const fmt = (n) => n.toLocaleString("en-US");

function where(entry) {
  const m = /^table:(\d+)$/.exec(entry.counterparty);
  if (m) return `${entry.amount > 0 ? "from" : "at"} ${state.tableName(Number(m[1]))}`;
  return entry.reference || "";
}

function entryEl(e) {
  const when = new Date(e.created_at);
  return el("li", { dataEntry: e.id, dataKind: e.kind, dataAmount: e.amount },
    el("span", { class: `amount ${e.amount >= 0 ? "plus" : "minus"}`, text: (e.amount >= 0 ? "+" : "−") + fmt(Math.abs(e.amount)) }),
    el("span", { class: "what" }, el("span", { text: KINDS[e.kind] || e.kind.replaceAll("_", " ") }), " ",
      el("span", { class: "muted", text: where(e) })),
    el("time", { class: "muted", datetime: e.created_at, text: when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) }));
}

function render() {
  $("wallet-balance").textContent = state.balance === null ? "–" : fmt(state.balance);
  $("wallet-balance").dataset.balance = state.balance ?? "";
  $("wallet-entries").replaceChildren(...state.entries.map(entryEl));
  $("wallet-more").hidden = state.next === null;
}

// The balance and the first page of movements, now.
export async function refreshWallet() {
  if (!state.request) return;
  try {
    const wallet = await state.request("GET", `/wallet?limit=${PAGE}`);
    state.balance = wallet.balance;
    state.entries = wallet.entries;
    state.next = wallet.next_before;
    render();
  } catch { /* kept as it was; the next refresh tries again */ }
}

// A refresh shortly after an event that moves chips (several in a row make one request).
export function walletSoon(delay = 400) {
  clearTimeout(state.timer);
  state.timer = setTimeout(refreshWallet, delay);
}

async function older() {
  if (state.next === null) return;
  try {
    const wallet = await state.request("GET", `/wallet?limit=${PAGE}&before=${state.next}`);
    state.entries = state.entries.concat(wallet.entries);
    state.next = wallet.next_before;
    render();
  } catch { /* the button stays */ }
}

function toggle(open) {
  const panel = $("wallet-panel");
  panel.hidden = !open;
  $("wallet-button").setAttribute("aria-expanded", String(open));
  if (open) refreshWallet();
}

// ``request(method, path)``: the page's signed-in REST call; ``tableName(id)``: a table's name.
export function initWallet(request, tableName) {
  state.request = request;
  if (tableName) state.tableName = tableName;
  $("wallet-button").addEventListener("click", (e) => { e.stopPropagation(); toggle($("wallet-panel").hidden); });
  $("wallet-more").addEventListener("click", (e) => { e.stopPropagation(); older(); });
  $("wallet-panel").addEventListener("click", (e) => e.stopPropagation());
  document.addEventListener("click", () => { if (!$("wallet-panel").hidden) toggle(false); });
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("wallet-panel").hidden) toggle(false); });
}

// Signed out: nothing of the last player's wallet stays on the page.
export function clearWallet() {
  Object.assign(state, { balance: null, entries: [], next: null });
  $("wallet-panel").hidden = true;
  render();
}

// After the table's events that move the player's chips between wallet and table (``t``: the
// table as protocol.js folds it; ``me``: the player's name), or end a hand they sit in.
export function walletOnEvent(kind, data, t, me) {
  const seated = t?.you !== null && t?.you !== undefined;
  if (["seat_taken", "seat_left"].includes(kind) && data.player === me) walletSoon();
  else if (kind === "chips_added" && seated && data.seat === t.you) walletSoon();
  else if (["hand_ended", "hand_cancelled"].includes(kind) && seated) walletSoon();
}
