// The dealer's words on the page: the engine's announcement (docs/protocol.md, "announcement")
// with the player's name put to it, and the winner lines that say which half of a split pot
// each player took and with what.

import { cardText } from "./cards.js";

const possessive = (name) => `${name}'s`;

// An announcement's words with the seat's name: "Bob brings it in with the 7♦", "Ann's pair of
// fours is high", "Bob's seven-six low", "Ann shows a possible flush".
export function announcementText(data, name) {
  const text = data.text || "";
  if (!name) return text;
  switch (data.kind) {
    case "bring_in":
      return /^[2-9TJQKA][shdc]$/.test(data.card || "")
        ? `${name} brings it in with the ${cardText(data.card)}` : `${name} brings it in`;
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
