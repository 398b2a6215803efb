// The console's mixed tables: a new table made from a rotation of games (POST /admin/tables
// with ``rotation``), and a table's rotation edited (PUT /admin/tables/{id}/rotation): dealt
// from the next switch, or the next hand when the table is idle; none ends the rotation (the
// table's own rules from the switch). The rotation is typed as JSON, as the API takes it
// (docs/operators.md, "Mixed tables"); a refusal (bad_rotation) names the field at fault and
// stays in the dialog.
import { $, el } from "./page.js";
import { rotationText } from "./games.js";

let ctx = null;  // the console's calls: { api, ask, fail, settings }

// A rotation to start from: the stud mix, eight hands a game.
const STUD_MIX = {
  games: [{ variant: "seven_card_stud" }, { variant: "razz" }, { variant: "seven_card_stud_hi_lo" }],
  unit: "hands",
  hands: 8,
  stakes: { ante: 1, bring_in: 2, small_bet: 5, big_bet: 10 },
};

export function initRotations(context) {
  ctx = context;
  $("new-mixed-table").addEventListener("click", newMixedTable);
}

// The rotation the operator typed: null (none) for an empty field or "null".
function typed(text) {
  if (!text || text.trim() === "null") return null;
  try { return JSON.parse(text); } catch (error) {
    throw new Error(`Rotation: not JSON (${error.message})`);
  }
}

const rotationField = (value) => ({
  name: "rotation", label: "Rotation", type: "textarea", value: JSON.stringify(value, null, 1),
  hint: "JSON: games (each a variant, and its structure, stakes, rules), unit (hands or orbit), hands, stakes",
});

function newMixedTable() {
  const settings = ctx.settings.slice(0, 3);
  ctx.ask({
    title: "New mixed table",
    ok: "Open the table",
    fields: [{ name: "name", label: "Name", required: true }, rotationField(STUD_MIX), ...settings],
    run: async (values) => {
      const rotation = typed(values.rotation);
      if (rotation === null) throw new Error("Rotation: a mixed table needs its games");
      const body = { name: values.name, rotation };
      for (const { name } of settings) if (values[name] !== "") body[name] = Number(values[name]);
      const table = await ctx.api("POST", "/admin/tables", body);
      return `Table ${table.id} opened: ${table.name} (${rotationText(table.rotation.rotation)})`;
    },
  });
}

// The console's live row of a mixed table: its rotation under its name (null: one game).
export function rotationLine(t) {
  return t.rotation ? el("div", { class: "muted rotation-text", text: rotationText(t.rotation) }) : null;
}

export async function editRotation(t) {
  let record;
  try {
    record = (await ctx.api("GET", "/admin/tables")).find((r) => r.id === t.id);
  } catch (error) { ctx.fail(error); return; }
  if (!record) { ctx.fail(new Error(`unknown_table: no table ${t.id}`)); return; }
  const current = record.rotation?.rotation ?? null;
  ctx.ask({
    title: `Rotation of ${record.name}`,
    ok: "Save",
    fields: [
      { ...rotationField(current ?? STUD_MIX), hint: "JSON, as a new mixed table's; null ends the rotation. Dealt from the next switch" },
      { name: "reason", label: "Reason", hint: "optional, kept in the audit log" },
    ],
    run: async (values) => {
      const body = { rotation: typed(values.rotation) };
      if (values.reason) body.reason = values.reason;
      const answer = await ctx.api("PUT", `/admin/tables/${record.id}/rotation`, body);
      const from = answer.rotation.from_hand;
      const what = body.rotation ? "rotation saved" : "rotation ended";
      return `${record.name}: ${what}, from hand ${from}${answer.after_hand ? " (the game in play finishes its turn)" : ""}`;
    },
  });
}
