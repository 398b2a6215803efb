// Cards as the players' page draws them: the table (app.js) and the hand replayer
// (replayer.js). A card is its text ("Ts"); "??" or null is a card face down.
import { el } from "./page.js";

const SUITS = { s: "♠", h: "♥", d: "♦", c: "♣" };

export function cardText(card) { return card[0].replace("T", "10") + SUITS[card[1]]; }

export function cardEl(card, down = false) {
  if (!card || card === "??") return el("span", { class: "card back", title: "face down", dataCard: "??" });
  const red = card[1] === "h" || card[1] === "d";
  return el("span", { class: `card${red ? " red" : ""}${down ? " down" : ""}`, dataCard: card, title: down ? "down card" : "upcard" }, cardText(card));
}
