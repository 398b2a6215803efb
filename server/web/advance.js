// Advance actions, as a PokerStars player knows them: while another seat acts, tick what to
// do when the turn comes, and the page plays it then (app.js asks playAdvance at the turn).
//   Check/Fold     the next turn: check if free, else fold.
//   Check          the next turn, while nothing is to call: a bet or raise clears it.
//   Call any       the next turn: call whatever it is by then (raises keep it), or check.
//   Fold to any bet  every turn of the hand: check if free, else fold.
// Nothing plays a forced bring-in (the player chooses it or the completion). A box ticked
// belongs to its hand: the next hand starts with none.
import { el } from "./page.js";

export const ADVANCE = [
  ["check_fold", "Check/Fold"],
  ["check", "Check"],
  ["call_any", "Call any"],
  ["fold_any", "Fold to any bet"],
];

let chosen = null; // { kind, table, hand }: the box ticked, and the hand it belongs to

const handKey = (t) => `${t.id}:${t.handNumber}`;

// What the seat would have to put in to call now (0: checking is free).
export function toCall(hand, seat) {
  const bets = Object.values(hand.seats).map((s) => s.bet || 0);
  return Math.max(0, Math.max(0, ...bets) - (hand.seats[seat]?.bet || 0));
}

// The seat of ``t.you`` is in the hand, still to decide something later.
function waiting(t) {
  const hand = t.hand;
  if (!hand || hand.over || t.you === null || t.you === undefined) return false;
  const mine = hand.seats[t.you];
  const seat = t.seats[t.you];
  if (seat?.sitting_out || seat?.leaving) return false;  // the table plays for it (sit out now)
  return !!mine && !mine.folded && !mine.all_in && hand.to_act !== t.you;
}

// The box still ticked, after what changed at the table (cleared when it no longer holds).
function current(t) {
  if (chosen === null) return null;
  if (chosen.hand !== handKey(t) || !t.hand || t.hand.over) { chosen = null; return null; }
  if (chosen.kind === "check" && toCall(t.hand, t.you) > 0) { chosen = null; return null; }
  return chosen.kind;
}

// The #advance box: one checkbox an advance action, while the turn is another seat's.
export function renderAdvance(t, box) {
  const kind = current(t);
  if (!waiting(t)) { box.hidden = true; box.replaceChildren(); box.dataset.drawn = ""; return; }
  const free = toCall(t.hand, t.you) === 0;
  const offered = ADVANCE.filter(([k]) => k !== "check" || free);
  // Drawn again only when what it shows changes: a click is never lost to a redraw.
  const drawn = `${handKey(t)}|${offered.map(([k]) => k).join()}|${kind}`;
  if (box.dataset.drawn === drawn) return;
  box.dataset.drawn = drawn;
  const items = offered.map(([k, label]) => {
    const input = el("input", { type: "checkbox", dataAdvance: k, checked: kind === k });
    input.addEventListener("change", () => {
      chosen = input.checked ? { kind: k, hand: handKey(t) } : null;
      for (const other of box.querySelectorAll("input[data-advance]")) if (other !== input) other.checked = false;
      box.dataset.drawn = `${handKey(t)}|${offered.map(([o]) => o).join()}|${chosen?.kind ?? null}`;
    });
    return el("label", { class: "advance-choice" }, input, ` ${label}`);
  });
  box.replaceChildren(el("span", { class: "muted", text: "In turn:" }), ...items);
  box.hidden = false;
}

// At the player's turn: the action the ticked box plays (null: the player decides). A box
// good for one turn is spent by it; "Fold to any bet" lasts the hand.
export function playAdvance(t) {
  const kind = current(t);
  if (kind === null) return null;
  const kinds = t.hand.legal?.kinds || [];
  if (kind !== "fold_any") chosen = null;
  if (kinds.includes("bring_in")) return null;
  switch (kind) {
    case "check": return kinds.includes("check") ? "check" : null;
    case "call_any": return kinds.includes("call") ? "call" : kinds.includes("check") ? "check" : null;
    default: return kinds.includes("check") ? "check" : kinds.includes("fold") ? "fold" : null;
  }
}
