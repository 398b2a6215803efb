// The betting controls of the seat to act: a button a legal action, and for pot and no
// limit an amount with half-pot, pot and all-in presets and a slider, all inside the legal
// range the server sent (the turn's min_to and max_to; in pot limit max_to is the pot).
// Keyboard: F folds, C checks, calls or brings in, R bets, raises or completes (never while
// typing in a text box); each button shows its key.
import { el } from "./page.js";

const WAGERS = ["complete", "bet", "raise"];
const KEY_OF = { fold: "f", check: "c", call: "c", bring_in: "c" };
const WAGER_WORDS = { complete: "Complete to", bet: "Bet", raise: "Raise to" };

const clamp = (n, low, high) => Math.min(high, Math.max(low, n));

function text(kind, legal, amount) {
  switch (kind) {
    case "fold": return "Fold";
    case "check": return "Check";
    case "call": return `Call ${legal.call}`;
    case "bring_in": return `Bring in ${legal.bring_in}`;
    default: return `${WAGER_WORDS[kind] || kind} ${amount}`;
  }
}

function button(kind, label, amount, key, act) {
  return el("button", {
    type: "button", class: `act act-${kind}`, dataKind: kind, dataAmount: amount ?? "",
    dataKey: key || null, title: key ? `Shortcut: ${key.toUpperCase()}` : null,
    onclick: () => act(kind, amount),
  }, label, key ? el("kbd", { text: key.toUpperCase(), "aria-hidden": "true" }) : null);
}

// The street totals the presets stand for, before clamping: a pot-sized wager is the call
// plus the pot after calling (engine/betting.py's pot-limit maximum).
export function presetTotals(hand, you) {
  const seats = Object.values(hand.seats);
  const mine = hand.seats[you];
  const facing = Math.max(0, ...seats.map((s) => s.bet || 0));
  const call = facing - (mine.bet || 0);
  const potAfterCall = hand.pot + call;
  return {
    half: facing + Math.floor(potAfterCall / 2),
    pot: facing + potAfterCall,
    allIn: (mine.bet || 0) + mine.stack,
  };
}

// Pot and no limit: the amount (a number box and a slider that follow each other), the
// presets that set it, and the button that sends it.
function amountControls(kind, legal, hand, you, act) {
  const low = legal.min_to;
  const high = legal.max_to;
  const totals = presetTotals(hand, you);
  const number = el("input", { type: "number", id: "wager-amount", min: low, max: high, value: low, step: 1, "aria-label": `${kind} to` });
  const slider = el("input", { type: "range", id: "wager-slider", min: low, max: high, value: low, step: 1, "aria-label": `${kind} amount` });
  const send = button(kind, text(kind, legal, low), null, "r", () => act(kind, Number(number.value)));
  send.dataset.amount = String(low);
  const show = (value) => {
    send.firstChild.textContent = text(kind, legal, value);
    send.dataset.amount = String(value);
  };
  number.addEventListener("input", () => {
    if (number.value !== "") slider.value = clamp(Number(number.value), low, high);
    show(number.value);
  });
  number.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); send.click(); } });
  slider.addEventListener("input", () => { number.value = slider.value; show(slider.value); });
  const preset = (name, label, total) => el("button", {
    type: "button", class: "preset", dataPreset: name, dataTo: clamp(total, low, high),
    onclick: () => { const to = clamp(total, low, high); number.value = to; slider.value = to; show(to); },
  }, label);
  const presets = low === high ? [] : [
    preset("half", "½ pot", totals.half),
    preset("pot", "Pot", totals.pot),
    preset("all-in", totals.allIn <= high ? "All in" : "Max", totals.allIn),
  ];
  return el("span", { class: "wager" }, send,
    low === high ? null : number,
    low === high ? null : slider,
    ...presets,
    low === high ? null : el("small", { class: "muted range", text: `${low}–${high}` }));
}

// Every control of the turn, for the #actions box.
export function bettingControls(t, act) {
  const hand = t.hand;
  const legal = hand.legal;
  const items = [];
  for (const kind of legal.kinds) {
    if (!WAGERS.includes(kind)) {
      items.push(button(kind, text(kind, legal), null, KEY_OF[kind], act));
      continue;
    }
    const choices = legal.to_choices;
    if (choices && choices.length) {  // fixed limit: one button a total
      choices.forEach((to, i) => items.push(button(kind, text(kind, legal, to), to, i === 0 ? "r" : null, act)));
    } else {
      items.push(amountControls(kind, legal, hand, t.you, act));
    }
  }
  return items;
}

const TYPING = new Set(["text", "number", "password", "search", "email", "tel", "url"]);

function typing(target) {
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable || target.closest("textarea, select")) return true;
  return target.tagName === "INPUT" && TYPING.has(target.type);
}

// F, C and R press the button that shows the key, when it is the player's turn.
export function installShortcuts() {
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || typing(e.target)) return;
    const key = e.key.toLowerCase();
    if (key.length !== 1 || !"fcr".includes(key)) return;
    const target = document.querySelector(`#actions:not([hidden]) button[data-key="${key}"]:not([disabled])`);
    if (!target || target.offsetParent === null) return;  // the table is not on screen
    e.preventDefault();
    target.click();
  });
}
