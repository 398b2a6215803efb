// The dealer's words on the page: the engine's announcement (docs/protocol.md, "announcement")
// with the player's name put to it, and the winner lines that say which half of a split pot
// each player took and with what.

import { cardText } from "./cards.js";

const possessive = (name) => `${name}'s`;

// How a turn played by the table for a player out of time is marked, live and in the replayer.
export const OUT_OF_TIME = " (out of time)";

// An announcement's words with the seat's name: "Bob to bring it in with the 7♦" (said as the
// card is dealt, before Bob acts: the act itself is the log's "Bob brings in for 2"), "Ann's
// pair of fours is high", "Bob's seven-six low", "Ann shows a possible flush".
export function announcementText(data, name) {
  const text = data.text || "";
  if (!name) return text;
  switch (data.kind) {
    case "bring_in":
      return /^[2-9TJQKA][shdc]$/.test(data.card || "")
        ? `${name} to bring it in with the ${cardText(data.card)}` : `${name} to bring it in`;
    case "high_board": case "low_board": case "pair":
      return `${possessive(name)} ${text}`;
    case "possible_flush": case "possible_straight":
      return `${name} shows a ${text}`;
    case "bring_in_all_in":
      return `${name} is ${text}`;
    default:
      return text;
  }
}

// A hand's words with the article a sentence wants: "a pair of aces", "a flush, king high";
// "two pair, …", "three of a kind, …" and lows ("7-6-4-2-A") as they are.
export function withArticle(words) {
  return /^(pair|straight|flush|full house|royal)/.test(words) ? `a ${words}` : words;
}

// What a winner won with: the hand for the half they took (the high hand for a whole pot,
// or the low where there is only a low, as in razz).
function wonWith(half, hand) {
  if (!hand) return "";
  if (half === "high") return hand.high || "";
  if (half === "low") return hand.low || "";
  return hand.high || hand.low || "";
}

// "Ann wins 8, high, with a pair of aces"; "Bob wins 8, low, with 7-6-4-2-A"; "Ann wins 16
// with a flush, king high"; "Ann wins 12 from side pot 1"; "Bob wins 5" (no showdown).
export function winnerLine(name, award, hand) {
  const pot = award.pot ? ` from side pot ${award.pot}` : "";
  const words = wonWith(award.half, hand);
  const split = award.half && award.half !== "whole";
  let line = `${name} wins ${award.amount}${pot}`;
  if (split) line += `, ${award.half}`;
  if (words) line += `${split ? "," : ""} with ${withArticle(words)}`;
  return line;
}

const total = (awards) => awards.reduce((sum, a) => sum + a.amount, 0);
const halfOf = (award) => award.half || "whole";

// A seat scooped when it took both halves of a split pot and, of every pot it won, all of it
// (both halves, or the whole where no low qualified there).
function scooped(won) {
  const halves = new Set(won.map(halfOf));
  if (!halves.has("high") || !halves.has("low")) return false;
  const pots = new Map();
  for (const a of won) pots.set(a.pot || 0, (pots.get(a.pot || 0) || new Set()).add(halfOf(a)));
  return [...pots.values()].every((h) => h.has("whole") || (h.has("high") && h.has("low")));
}

const onePot = (won) => {
  const pots = new Set(won.map((a) => a.pot || 0));
  return pots.size === 1 ? [...pots][0] : 0;
};

// "Ann scoops 24, high with a pair of aces and low with 7-6-4-2-A".
function scoopLine(name, won, hand) {
  const pot = onePot(won) ? ` from side pot ${onePot(won)}` : "";
  const high = hand?.high ? `high with ${withArticle(hand.high)}` : "";
  const low = hand?.low ? `low with ${hand.low}` : "";
  const words = [high, low].filter(Boolean).join(" and ");
  return `${name} scoops ${total(won)}${pot}${words ? `, ${words}` : ""}`;
}

// A hand's awards said once per winner (pot_awarded comes per pot and per half): a scoop is
// one line, and a half won in several pots is one line with their sum. nameOf(seat) and
// handOf(seat) (what the seat showed: {high, low}) give the words.
export function awardLines(awards, nameOf, handOf) {
  const bySeat = new Map();
  for (const a of awards) bySeat.set(a.seat, (bySeat.get(a.seat) || []).concat([a]));
  const lines = [];
  for (const [seat, won] of bySeat) {
    const name = nameOf(seat);
    const hand = handOf(seat);
    if (scooped(won)) { lines.push(scoopLine(name, won, hand)); continue; }
    for (const half of new Set(won.map(halfOf))) {
      const part = won.filter((a) => halfOf(a) === half);
      lines.push(winnerLine(name, { amount: total(part), half, pot: onePot(part) }, hand));
    }
  }
  return lines;
}

// What a seat's box says it won: "scoops 1111", "wins 556".
export function wonText(won) {
  return won.length ? `${scooped(won) ? "scoops" : "wins"} ${total(won)}` : "";
}
