// Runs server/web/replayer.js's framesOf on hand records as GET /hands/{id} gives them, and
// prints each record's frames (what tests/web/test_replay_frames.py checks). Input on
// stdin: [record, ...]; output: [[{kind, street, lines, view}, ...], ...], a line's cards as
// {card, down} (card null: face down), and the pots as the step shows them.
import { sidePots } from "../../server/web/protocol.js";
import { framesOf } from "../../server/web/replayer.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = JSON.parse(input).map((record) => framesOf(record).map((f) => ({
  kind: f.kind, street: f.street, view: f.view, pots: sidePots(f.view.seats),
  lines: f.lines.map((line) => line.map((part) => (typeof part === "string" ? part : { card: part.card ?? null, down: !!part.down }))),
})));
process.stdout.write(JSON.stringify(out));
