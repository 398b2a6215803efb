// The lobby (GET /tables): each table's game as players say it (a mixed table's rotation and
// the game in play), its stakes with ante and bring-in, who sits and waits, its average pot
// and hands per hour; filtered by game (a game alone, any mixed game, or one rotation) and by
// stakes; "Watch" (a spectator) or "Open" (to sit down). At phone width each row is a card
// (style.css), every column kept.
import { $, el } from "./page.js";
import { betsText, rotationText, stakesText, variantName } from "./games.js";

const MIXED = "mixed";  // the game filter's choice of every mixed table
// A table's game for the filter: its variant, or its rotation ("mix:razz,seven_card_stud/8").
const mixOf = (r) => `mix:${r.games.map((g) => g.variant).join(",")}/${r.unit === "hands" ? r.hands : r.unit}`;
const gameOf = (t) => (t.rotation ? mixOf(t.rotation) : t.variant);
const stakesOf = (t) => betsText(t.stakes, t.structure);
const titleOf = (t) => t.variant_title || variantName(t.variant);
const gameTitleOf = (t) => (t.rotation ? rotationText(t.rotation) : titleOf(t));
const gameShown = (t, game) => !game || gameOf(t) === game || (game === MIXED && Boolean(t.rotation));

// The options of a filter from the tables listed, the choice kept across refreshes.
function fillFilter(select, everything, entries) {
  const chosen = select.value;
  const options = [el("option", { value: "" }, everything),
    ...entries.map(([value, text]) => el("option", { value }, text))];
  select.replaceChildren(...options);
  select.value = entries.some(([value]) => value === chosen) ? chosen : "";
}

function playersText(t) {
  const seated = `${t.seats_taken}/${t.seats} seated`;
  return t.waiting ? `${seated} · ${t.waiting} waiting` : seated;
}

function row(t, { onOpen, onWatch }) {
  const cell = (cls, label, ...content) => el("td", { class: cls, dataLabel: label }, ...content);
  return el("tr", { dataTable: t.id, dataVariant: gameOf(t), dataStakes: stakesOf(t), dataMixed: t.rotation ? "true" : null },
    cell("table-name", "Table", el("strong", { text: t.name }), t.paused ? el("span", { class: "tag", text: "paused" }) : null),
    cell("game", "Game", gameTitleOf(t),
      t.rotation ? el("span", { class: "now muted", dataVariant: t.variant, text: ` · now ${titleOf(t)}` }) : null),
    cell("stakes", "Stakes", stakesText(t.stakes, t.structure)),
    cell("players", "Players", playersText(t)),
    cell("avg-pot", "Avg pot", String(t.average_pot)),
    cell("hands-hour", "Hands/h", String(t.hands_per_hour)),
    el("td", { class: "go" },
      el("button", { type: "button", class: "watch", title: `Watch ${t.name}`, onclick: () => onWatch(t) }, "Watch"),
      el("button", { type: "button", class: "open", title: `Open ${t.name} to sit down`, onclick: () => onOpen(t) }, "Open")));
}

// The lobby's rows for ``tables``, with the filters' choices applied.
export function renderLobby(tables, handlers) {
  const byTitle = (a, b) => a[1].localeCompare(b[1]);
  const single = tables.filter((t) => !t.rotation);
  const mixes = tables.filter((t) => t.rotation);
  const games = [...new Map(single.map((t) => [gameOf(t), titleOf(t)]))].sort(byTitle);
  if (mixes.length) games.push([MIXED, "Any mixed game"], ...[...new Map(mixes.map((t) => [gameOf(t), rotationText(t.rotation)]))].sort(byTitle));
  const stakes = [...new Map([...tables].sort((a, b) => a.stakes.big_bet - b.stakes.big_bet || a.structure.localeCompare(b.structure))
    .map((t) => [stakesOf(t), stakesOf(t)]))];
  fillFilter($("filter-game"), "All games", games);
  fillFilter($("filter-stakes"), "All stakes", stakes);
  const game = $("filter-game").value;
  const bets = $("filter-stakes").value;
  const shown = tables.filter((t) => gameShown(t, game) && (!bets || stakesOf(t) === bets));
  $("lobby-rows").replaceChildren(...shown.map((t) => row(t, handlers)));
  $("lobby-empty").hidden = shown.length > 0;
  $("lobby-empty").textContent = tables.length ? "No table matches these filters." : "No table is open.";
}

// Redraw when a filter changes (the tables as last fetched).
export function onFilterChange(redraw) {
  for (const id of ["filter-game", "filter-stakes"]) $(id).addEventListener("change", redraw);
}
