// Feeds frames to server/web/protocol.js's Connection as a websocket would, and prints the
// table it folded after each frame (what tests/web/test_protocol_fold.py compares with the
// engine's fold). Input on stdin: [{"me": name or null, "frames": [frame, ...]}, ...].
import { Connection, sidePots } from "../../server/web/protocol.js";

class FakeSocket {
  static OPEN = 1;
  static last = null;
  constructor() { this.readyState = FakeSocket.OPEN; this.sent = []; FakeSocket.last = this; }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() {}
}
globalThis.WebSocket = FakeSocket;
globalThis.location = { protocol: "http:", host: "test" };

const SEAT_FIELDS = ["stack", "bet", "in_pot", "up", "down", "down_count", "folded", "all_in", "shown", "hand"];

function picture(t) {
  if (t === null) return null;
  const seats = t.seats.map((s) => (s?.player
    ? { player: s.player, stack: s.stack, pending_chips: s.pending_chips || 0, sitting_out: !!s.sitting_out,
        sit_out_next_hand: !!s.sit_out_next_hand, leaving: !!s.leaving, removed: s.removed ?? null }
    : { player: null }));
  let hand = null;
  if (t.hand) {
    const h = t.hand;
    const handSeats = {};
    for (const [n, s] of Object.entries(h.seats)) {
      handSeats[n] = {};
      for (const k of SEAT_FIELDS) if (k in s) handSeats[n][k] = s[k];
    }
    hand = { viewer: h.viewer, variant: h.variant, street: h.street, pot: h.pot, common: h.common,
      seats: handSeats, to_act: h.to_act, legal: h.legal, announcements: h.announcements,
      awards: h.awards, over: h.over, pots: sidePots(h.seats) };
  }
  const rules = t.variant === undefined ? null : { variant: t.variant, stakes: t.stakes, buy_in: t.buyIn };
  return { you: t.you, hand_number: t.handNumber, waiting: t.waiting, seats, hand,
    operator_pause: t.operatorPause ?? null, closed: t.closed ?? null, rules, game: t.game ?? null,
    rotation: t.rotation ?? null };
}

let input = "";
for await (const chunk of process.stdin) input += chunk;
const out = [];
for (const { me, frames } of JSON.parse(input)) {
  const conn = new Connection({ token: "t" });
  conn.start();
  conn.player = me;
  const ws = FakeSocket.last;
  const states = [];
  for (const frame of frames) {
    if (frame.type === "reply" && frame.result?.type === "snapshot") {
      conn.tableId = frame.result.table;
      conn.awaitingSnapshot = true;
      conn.request({ type: "resync", table: conn.tableId }).catch(() => {});
      ws.onmessage({ data: JSON.stringify({ ...frame, id: conn.nextId - 1 }) });
    } else if (frame.type === "event") {
      ws.onmessage({ data: JSON.stringify(frame) });
    } else {
      continue;
    }
    states.push(picture(conn.table));
  }
  conn.stop();
  out.push(states);
}
process.stdout.write(JSON.stringify(out));
