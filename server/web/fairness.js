// Provably fair decks, checked in the browser (WebCrypto): the method of docs/fairness.md
// ("stud-deck/1"), the same as engine/fair.py. The page checks a finished hand's commitment,
// the seed this page gave it, and the order of its own cards in the derived deck; stud-verify
// (on the downloaded history) checks every card, event for event.

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

function context(fairness) {
  const lines = ["stud-deck/1", `table=${fairness.table_id}`, `hand=${fairness.hand}`,
    ...fairness.client_seeds.map((c) => `seat=${c.seat} seed=${c.seed}`)];
  return new TextEncoder().encode(lines.join("\n") + "\n");
}

// The deck, top card first, as card texts.
export async function deckOrder(fairness) {
  const key = await crypto.subtle.importKey("raw", fromHex(fairness.server_seed),
    { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const prefix = context(fairness);
  const blocks = [];
  for (let counter = 0; counter < 8; counter++) { // 256 bytes: far more than one deck takes
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
  const cards = CARDS.slice();
  for (let i = 0; i < cards.length - 1; i++) {
    const j = i + below(cards.length - i);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

// What the page can check of a downloaded hand (GET /hands/{id}); ``given``: the commitment
// announced before the deal and the seed this page sent, if it saw them. Each check is
// [what, true/false].
export async function checkHand(hand, given = {}) {
  const f = hand.fairness;
  if (!f) return { fair: false, checks: [["the hand has a fairness record", false]] };
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
  const streets = new Map(); // street -> your cards dealt on it
  for (const e of hand.events) {
    const cards = e.kind === "down_cards" ? e.data.cards
      : e.kind === "street_dealt" ? (e.data.deals.find((d) => d.seat === hand.seat)?.up || []) : [];
    if (cards.length) streets.set(e.data.street, [...(streets.get(e.data.street) || []), ...cards]);
  }
  // Dealt from the top, street by street: each street's cards of yours come off the derived
  // deck after the last street's (the burn cards scrambled back in on a short deck excepted:
  // stud-verify checks those).
  if (!hand.events.some((e) => e.kind === "deck_procedure")) {
    let last = -1;
    let inOrder = true;
    let count = 0;
    for (const cards of streets.values()) {
      const positions = cards.map((c) => deck.indexOf(c));
      count += cards.length;
      if (positions.some((p) => p <= last)) inOrder = false;
      last = Math.max(last, ...positions);
    }
    checks.push([`your ${count} cards come off the derived deck street by street`, inOrder]);
  }
  return { fair: checks.every(([, ok]) => ok), checks, deck };
}
