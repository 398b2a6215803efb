// Provably fair decks, checked in the browser (WebCrypto): the methods of docs/fairness.md,
// "stud-deck/2" (engine/fair2.py) and, for older hands, "stud-deck/1" (engine/fair.py). The
// page checks a finished hand from its own history: the commitment, the seed this page gave
// it, every opening it was sent against the commitment, and where its own cards sit in the
// deal order; stud-verify (on the downloaded history) checks every card, event for event.

const RANKS = "23456789TJQKA";
const SUITS = "cdhs";
export const CARDS = [...RANKS].flatMap((r) => [...SUITS].map((s) => r + s)); // 0 = 2c ... 51 = As

const hex = (bytes) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
const fromHex = (text) => new Uint8Array(text.match(/../g).map((h) => parseInt(h, 16)));

// A fresh client seed: 16 random bytes in hex (the server accepts A-Z a-z 0-9 _ -).
export function newClientSeed() {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

export async function commitmentOf(serverSeedHex) {
  return hex(await crypto.subtle.digest("SHA-256", fromHex(serverSeedHex)));
}

function context(fairness, method = "stud-deck/1") {
  const lines = [method, `table=${fairness.table_id}`, `hand=${fairness.hand}`,
    ...fairness.client_seeds.map((c) => `seat=${c.seat} seed=${c.seed}`)];
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

// The shuffle of ``items`` by the HMAC-SHA256 stream of ``keyHex`` over ``prefix``.
async function shuffled(keyHex, prefix, items) {
  const key = await crypto.subtle.importKey("raw", fromHex(keyHex),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const blocks = [];
  for (let counter = 0; counter < 16; counter++) { // 512 bytes: far more than one deck takes
    const message = new Uint8Array(prefix.length + 8);
    message.set(prefix);
    new DataView(message.buffer).setBigUint64(prefix.length, BigInt(counter));
    blocks.push(new Uint8Array(await crypto.subtle.sign("HMAC", key, message)));
  }
  const stream = blocks.flatMap((b) => [...b]);
  let at = 0;
  const below = (n) => {
    for (;;) {
      if (at >= stream.length) throw new Error("the stream ran out");
      const byte = stream[at++];
      if (byte < 256 - (256 % n)) return byte % n;
    }
  };
  const cards = items.slice();
  for (let i = 0; i < cards.length - 1; i++) {
    const j = i + below(cards.length - i);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

// stud-deck/1: the deck, top card first, as card texts.
export async function deckOrder(fairness) {
  return shuffled(fairness.server_seed, context(fairness), CARDS);
}

// stud-deck/2: the deal order, the committed position of each draw, top first.
export async function dealOrder(fairness) {
  const positions = [...Array(52).keys()];
  return shuffled(fairness.commitment, context(fairness, "stud-deck/2"), positions);
}

const sha256 = async (bytes) => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
const joined = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) { out.set(part, at); at += part.length; }
  return out;
};

// Whether a card's opening (card, position, salt, proof) leads to the root ``commitment``.
export async function opens(opening, commitment) {
  const card = CARDS.indexOf(opening.card);
  let index = opening.position;
  if (card < 0 || !(index >= 0 && index < 52) || !/^[0-9a-f]{64}$/.test(opening.salt)) return false;
  let node = await sha256(joined(new Uint8Array([0, index, card]), fromHex(opening.salt)));
  const path = [...opening.proof];
  for (let size = 52; size > 1; size = Math.ceil(size / 2), index = Math.floor(index / 2)) {
    if ((index ^ 1) >= size) continue;
    const sibling = path.shift();
    if (!sibling || !/^[0-9a-f]{64}$/.test(sibling)) return false;
    const pair = index % 2 === 0 ? [node, fromHex(sibling)] : [fromHex(sibling), node];
    node = await sha256(joined(new Uint8Array([1]), ...pair));
  }
  return path.length === 0 && hex(node) === commitment;
}

// Your cards street by street, from the hand's events (down cards and your upcards).
function yourStreets(hand) {
  const streets = new Map();
  for (const e of hand.events) {
    const cards = e.kind === "down_cards" ? e.data.cards
      : e.kind === "street_dealt" ? (e.data.deals.find((d) => d.seat === hand.seat)?.up || []) : [];
    if (cards.length) streets.set(e.data.street, [...(streets.get(e.data.street) || []), ...cards]);
  }
  return streets;
}

// Whether each street's cards sit after the last street's, by ``indexOf`` (the burn cards
// scrambled back in on a short deck excepted: stud-verify checks those).
function inOrder(streets, indexOf) {
  let last = -1;
  let ok = true;
  for (const cards of streets.values()) {
    const at = cards.map(indexOf);
    if (at.some((k) => k <= last)) ok = false;
    last = Math.max(last, ...at);
  }
  return ok;
}

async function checkOpenings(hand, given) {
  const f = hand.fairness;
  const checks = [];
  const started = hand.events.find((e) => e.kind === "hand_started");
  checks.push(["the commitment is the one published at the deal",
    started?.data.commitment === f.commitment && started?.data.method === "stud-deck/2"]);
  if (given.commitment) checks.push(["the commitment is the one announced before the deal", given.commitment === f.commitment]);
  if (given.seed) {
    const mine = f.client_seeds.find((c) => c.seat === hand.seat);
    checks.push(["your client seed went into the deck", mine?.seed === given.seed]);
  }
  const openings = hand.events.filter((e) => e.kind === "cards_opened").flatMap((e) => e.data.cards);
  const results = await Promise.all(openings.map((o) => opens(o, f.commitment)));
  checks.push([`every opening you were sent (${openings.length}) leads to the commitment`,
    openings.length > 0 && results.every(Boolean)]);
  const position = new Map(openings.map((o) => [o.card, o.position]));
  const streets = yourStreets(hand);
  const yours = [...streets.values()].flat();
  checks.push([`each of your ${yours.length} cards came with its opening`, yours.every((c) => position.has(c))]);
  if (!hand.events.some((e) => e.kind === "deck_procedure")) {
    const order = await dealOrder(f);
    checks.push([`your ${yours.length} cards sit in the deal order street by street`,
      inOrder(streets, (c) => order.indexOf(position.get(c)))]);
  }
  return { fair: checks.every(([, ok]) => ok), checks };
}

// What the page can check of a downloaded hand (GET /hands/{id}); ``given``: the commitment
// announced before the deal and the seed this page sent, if it saw them. Each check is
// [what, true/false].
export async function checkHand(hand, given = {}) {
  const f = hand.fairness;
  if (!f) return { fair: false, checks: [["the hand has a fairness record", false]] };
  if (f.method === "stud-deck/2") return checkOpenings(hand, given);
  const checks = [];
  checks.push(["the server seed hashes to the commitment", (await commitmentOf(f.server_seed)) === f.commitment]);
  const started = hand.events.find((e) => e.kind === "hand_started");
  checks.push(["the commitment is the one published at the deal", started?.data.commitment === f.commitment]);
  if (given.commitment) checks.push(["the commitment is the one announced before the deal", given.commitment === f.commitment]);
  if (given.seed) {
    const mine = f.client_seeds.find((c) => c.seat === hand.seat);
    checks.push(["your client seed went into the deck", mine?.seed === given.seed]);
  }
  const deck = await deckOrder(f);
  const streets = yourStreets(hand);
  // Dealt from the top, street by street: each street's cards of yours come off the derived
  // deck after the last street's.
  if (!hand.events.some((e) => e.kind === "deck_procedure")) {
    const count = [...streets.values()].flat().length;
    checks.push([`your ${count} cards come off the derived deck street by street`,
      inOrder(streets, (c) => deck.indexOf(c))]);
  }
  return { fair: checks.every(([, ok]) => ok), checks, deck };
}
