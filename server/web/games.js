// The games and their stakes as players say them, for the lobby, the table's title and the
// hand history. The names are the engine's titles (engine/variants.py, also given by
// GET /tables as variant_title); tests/web/test_lobby_page.py checks that they agree.

export const VARIANT_TITLES = {
  seven_card_stud: "Seven-Card Stud",
  seven_card_stud_hi_lo: "Stud Hi-Lo (8 or better)",
  razz: "Razz",
  five_card_stud: "Five-Card Stud",
  five_card_stud_hi_lo: "Five-Card Stud Hi-Lo",
  six_card_stud: "Six-Card Stud",
  eight_card_stud: "Eight-Card Stud",
};

export const STRUCTURES = { fixed_limit: "Fixed limit", pot_limit: "Pot limit", no_limit: "No limit" };

export const variantName = (v) => VARIANT_TITLES[v] || (v || "").replaceAll("_", " ");

// The bets: "5/10" (small and big bet) at fixed limit; "Pot limit, min bet 10" otherwise.
export function betsText(stakes, structure) {
  if (!structure || structure === "fixed_limit") return `${stakes.small_bet}/${stakes.big_bet}`;
  return `${STRUCTURES[structure] || structure.replaceAll("_", " ")}, min bet ${stakes.small_bet}`;
}

// "5/10, ante 1, bring-in 2" in chips.
export function stakesText(stakes, structure) {
  const parts = [betsText(stakes, structure)];
  if (stakes.ante) parts.push(`ante ${stakes.ante}`);
  if (stakes.bring_in) parts.push(`bring-in ${stakes.bring_in}`);
  return parts.join(", ");
}

// A table's title line: "Seven-Card Stud · 5/10, ante 1, bring-in 2" (``stakes`` as the
// websocket's snapshot gives them, the structure among them).
export const gameAndStakes = (variant, stakes) => `${variantName(variant)} · ${stakesText(stakes, stakes.structure)}`;

// Short names, for a rotation of games on one line.
export const VARIANT_SHORT = {
  seven_card_stud: "Stud",
  seven_card_stud_hi_lo: "Stud Hi-Lo",
  razz: "Razz",
  five_card_stud: "5-Card Stud",
  five_card_stud_hi_lo: "5-Card Stud Hi-Lo",
  six_card_stud: "6-Card Stud",
  eight_card_stud: "8-Card Stud",
};

const shortName = (v) => VARIANT_SHORT[v] || variantName(v);

// How long each game of a rotation lasts: "8 hands each", "an orbit each", "a level each".
function turnText(rotation) {
  if (rotation.unit === "orbit") return "an orbit each";
  if (rotation.unit === "level") return "a level each";
  return rotation.hands === 1 ? "1 hand each" : `${rotation.hands} hands each`;
}

// A mixed table's rotation on one line, for the lobby and the table: "Stud mix: Stud / Razz /
// Stud Hi-Lo, 8 hands each" (``rotation`` as GET /tables and the snapshot give it: its games
// each with its variant, its unit and hands).
export function rotationText(rotation) {
  const games = rotation.games.map((g) => shortName(g.variant)).join(" / ");
  return `Stud mix: ${games}, ${turnText(rotation)}`;
}
