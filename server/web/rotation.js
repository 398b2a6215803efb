// A mixed table on the players' page: the game now, the game next and the hands until the
// switch, drawn from the table's ``game`` (the ``game`` event, or a snapshot's rotation) and
// its ``rotation`` (a snapshot's, or an operator's new one: ``rotation_changed``), as
// protocol.js folds them; and the dealer's words for the log. A table of one game shows
// nothing here.
import { el } from "./page.js";
import { rotationText, variantName } from "./games.js";

// What comes after the game in play: its title and the hands of this game still to come
// after the hand told (null: until the level ends). An operator's rotation waiting for the
// switch (``from_hand`` after the hand told) deals its first game there.
export function upNext(t) {
  const game = t.game;
  const pending = t.rotation && game && t.rotation.from_hand > game.hand;
  if (pending) {
    const first = t.rotation.games[0];
    return {
      variant: first?.variant ?? null,
      title: first ? first.title || variantName(first.variant) : "the table's own game",
      left: t.rotation.from_hand - game.hand - 1,
    };
  }
  return { variant: game.next_variant, title: game.next_title, left: game.hands_left };
}

// "after 5 more hands", "after this hand", "at the next level".
export function countdownText(left) {
  if (left === null || left === undefined) return "at the next level";
  if (left === 0) return "after this hand";
  return left === 1 ? "after 1 more hand" : `after ${left} more hands`;
}

// The bar over the table: hidden at a table of one game.
export function renderRotation(t, bar) {
  const game = t.game;
  if (!t.rotation && !game) { bar.hidden = true; bar.replaceChildren(); return; }
  bar.hidden = false;
  const items = [];
  if (t.rotation?.games.length) items.push(el("span", { class: "rotation-text", text: rotationText(t.rotation) }));
  if (game) {
    const next = upNext(t);
    const count = game.game_hands ? `hand ${game.game_hand} of ${game.game_hands}` : `hand ${game.game_hand}`;
    items.push(
      el("span", { class: "now", dataHand: game.hand }, "Now ", el("strong", { class: "game-now", dataVariant: game.variant, text: game.title }), ` · ${count}`),
      el("span", { class: "next" }, "Next ", el("strong", { class: "game-next", dataVariant: next.variant ?? "", text: next.title }), " ",
        el("span", { class: "countdown", dataHandsLeft: next.left ?? "", text: countdownText(next.left) })));
  } else {
    const first = t.rotation.games[0];
    if (first) items.push(el("span", { class: "next" }, "First ", el("strong", { class: "game-next", dataVariant: first.variant, text: first.title || variantName(first.variant) })));
  }
  bar.replaceChildren(...items);
}

// The dealer's line for a mixed table's event (null: none): "Razz, hand 3 of 8".
export function rotationLogLine(kind, data) {
  if (kind === "game") return data.text;
  if (kind !== "rotation_changed") return null;
  if (!data.games.length) return `An operator ends the rotation: the table's own game from hand #${data.from_hand}`;
  const words = rotationText({ games: data.games.map((variant) => ({ variant })), unit: data.unit, hands: data.hands });
  return `An operator sets a new rotation from hand #${data.from_hand}: ${words}`;
}
