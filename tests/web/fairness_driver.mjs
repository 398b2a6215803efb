// Runs server/web/fairness.js under Node (WebCrypto as in the browser) on the cases read from
// stdin: [{hand, given}], printing [{fair, checks, order}] (order: stud-deck/2's deal order).
import { readFileSync } from "node:fs";
import { checkHand, dealOrder } from "../../server/web/fairness.js";

const cases = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const { hand, given } of cases) {
  const { fair, checks } = await checkHand(hand, given || {});
  const order = hand.fairness?.method === "stud-deck/2" ? await dealOrder(hand.fairness) : null;
  out.push({ fair, checks, order });
}
process.stdout.write(JSON.stringify(out));
