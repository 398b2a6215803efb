// Runs server/web/protocol.js's Connection against fake websockets: one server that answers
// every ping, one that falls silent once signed in (a frozen node). Prints what happened as
// JSON (tests/web/test_heartbeat.py reads it).
import { Connection } from "../../server/web/protocol.js";

const sockets = [];
let answering = true;  // whether the fake server answers pings

class FakeSocket {
  static OPEN = 1;
  constructor() {
    this.readyState = FakeSocket.OPEN;
    this.sent = [];
    this.closed = false;
    sockets.push(this);
    setTimeout(() => this.deliver({ type: "hello", protocol: 1 }), 1);
  }
  deliver(frame) { if (!this.closed) this.onmessage?.({ data: JSON.stringify({ v: 1, ...frame }) }); }
  send(text) {
    const frame = JSON.parse(text);
    this.sent.push(frame.type);
    if (frame.type === "auth") setTimeout(() => this.deliver({ type: "reply", id: frame.id, result: { player: "ann" } }), 1);
    if (frame.type === "ping" && answering) setTimeout(() => this.deliver({ type: "pong", id: null }), 1);
  }
  close() { this.closed = true; }
}
globalThis.WebSocket = FakeSocket;
globalThis.location = { protocol: "http:", host: "test" };

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const statuses = [];
const conn = new Connection({ token: "t", onStatus: (s) => statuses.push(s), heartbeatMs: 20, silentMs: 60 });
await conn.start();
await sleep(300);
const whileAnswered = { sockets: sockets.length, pings: sockets[0].sent.filter((t) => t === "ping").length };
answering = false;
await sleep(800);  // silence found out within ~80 ms; the first reconnect waits 250 ms
answering = true;
await sleep(300);
conn.stop();
console.log(JSON.stringify({
  whileAnswered,
  sockets: sockets.length,
  firstClosed: sockets[0].closed,
  statuses,
}));
process.exit(0);
