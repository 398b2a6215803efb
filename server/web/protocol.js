// The websocket protocol v1 (docs/protocol.md): one connection, replies by id, and one
// watched table whose picture is folded from its snapshot and events, the way
// engine/table_view.py (TablePicture) folds a table and engine/views.py a hand; tests/web
// checks the two folds agree. Public events must come in seq order: a gap means resync.
// Tournament events (the player's own, and those of the tournament followed) go to
// onTournament as they come; tournaments.js folds them.
import { variantName } from "./games.js";

export class ProtocolError extends Error {
  constructor(code, message) { super(message); this.code = code; }
}

export class Connection {
  // heartbeatMs: a ping this often; silentMs: how long a ping may go unanswered (not a frame
  // since) before the server is taken for frozen.
  constructor({ token, onTable, onEvent, onStatus, onTournament, onTournamentState, heartbeatMs = 5000, silentMs = 12000 }) {
    this.token = token;
    this.heartbeatMs = heartbeatMs;
    this.silentMs = silentMs;
    this.onTable = onTable;    // (table state) after a snapshot or any event
    this.onEvent = onEvent;    // (kind, data, table state, private)
    this.onStatus = onStatus;  // (text) connection news for people
    this.onTournament = onTournament;            // (frame) a tournament_event
    this.onTournamentState = onTournamentState;  // (state) after a reconnect's subscribe
    this.tournamentId = null;  // the tournament followed, or null
    this.nextId = 1;
    this.pending = new Map();
    this.table = null;         // the watched table's state, or null
    this.tableId = null;
    this.awaitingSnapshot = false;
    this.closed = false;
    this.ready = null;
    this.retry = 0;
  }

  start() {
    this.closed = false;
    this.ready = new Promise((resolve, reject) => {
      const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws`);
      this.ws = ws;
      this.heardAt = Date.now();
      this.pingedAt = null;
      ws.onmessage = (m) => {
        this.heardAt = Date.now();
        this.#receive(JSON.parse(m.data), resolve, reject);
      };
      ws.onclose = () => this.#lost(ws, reject);
      clearInterval(this.pinger);
      // A server that keeps the socket open but answers no ping (frozen, or stalled) is
      // left: another connection (through the same address, to a live node) replaces it.
      this.pinger = setInterval(() => {
        if (this.pingedAt !== null && this.heardAt < this.pingedAt && Date.now() - this.pingedAt > this.silentMs) {
          this.onStatus?.("The server is not answering: reconnecting…");
          this.#lost(ws, reject);
          return;
        }
        if (this.heardAt >= (this.pingedAt ?? 0)) this.pingedAt = Date.now();
        this.#send({ type: "ping" });
      }, this.heartbeatMs);
    });
    this.ready.catch(() => {});
    return this.ready;
  }

  #lost(ws, rejectReady) {
    if (ws.lost) return;  // told once, whether by its close or by its silence
    ws.lost = true;
    ws.onclose = ws.onmessage = null;
    try { ws.close(); } catch { /* already closing */ }
    if (this.ws !== ws) return;
    for (const { reject: r } of this.pending.values()) r(new ProtocolError("closed", "connection lost"));
    this.pending.clear();
    clearInterval(this.pinger);
    rejectReady(new ProtocolError("closed", "connection lost"));
    if (!this.closed) this.#reconnect();
  }

  stop() {
    this.closed = true;
    clearInterval(this.pinger);
    if (this.ws) this.ws.close();
  }

  #reconnect() {
    this.onStatus?.("Connection lost: reconnecting…");
    const wait = Math.min(5000, 250 * 2 ** this.retry++);
    setTimeout(async () => {
      try {
        await this.start();
        this.retry = 0;
        if (this.tableId !== null) await this.watch(this.tableId);
        if (this.tournamentId !== null) this.onTournamentState?.(await this.subscribeTournament(this.tournamentId));
        this.onStatus?.("");
      } catch { /* onclose schedules the next try */ }
    }, wait);
  }

  #send(frame) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ v: 1, ...frame }));
  }

  request(frame) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.#send({ ...frame, id });
    });
  }

  async #receive(frame, resolveReady, rejectReady) {
    if (frame.type === "hello") {
      try {
        const { player } = await this.request({ type: "auth", token: this.token });
        this.player = player;
        resolveReady();
      } catch (error) { rejectReady(error); }
      return;
    }
    if (frame.type === "reply" || frame.type === "error") {
      const waiter = this.pending.get(frame.id);
      if (!waiter) return;
      this.pending.delete(frame.id);
      if (frame.type === "error") { waiter.reject(new ProtocolError(frame.code, frame.message)); return; }
      if (frame.result?.type === "snapshot") this.#snapshot(frame.result);
      waiter.resolve(frame.result);
      return;
    }
    if (frame.type === "event") this.#event(frame);
    else if (frame.type === "tournament_event") this.onTournament?.(frame);
  }

  // Follow a tournament: the answer is its tournament_state, its events come from now on.
  subscribeTournament(tournamentId) {
    this.tournamentId = tournamentId;
    return this.request({ type: "subscribe_tournament", tournament: tournamentId });
  }

  // ------------------------------------------------------------------ the table

  async watch(tableId) {
    this.tableId = tableId;
    this.table = null;
    this.awaitingSnapshot = true;
    return this.request({ type: "watch", table: tableId });
  }

  async unwatch() {
    const id = this.tableId;
    this.tableId = null;
    this.table = null;
    if (id !== null) await this.request({ type: "unwatch", table: id }).catch(() => {});
  }

  resync() {
    if (this.awaitingSnapshot || this.tableId === null) return;
    this.awaitingSnapshot = true;
    this.request({ type: "resync", table: this.tableId }).catch(() => { this.awaitingSnapshot = false; });
  }

  command(type, fields = {}) {
    return this.request({ type, table: this.tableId, ...fields });
  }

  #snapshot(snap) {
    if (snap.table !== this.tableId) return;
    this.awaitingSnapshot = false;
    const table = {
      id: snap.table, seq: snap.seq, me: this.player, variant: snap.variant, stakes: snap.stakes,
      buyIn: snap.buy_in, you: snap.you, handNumber: snap.hand_number, waiting: snap.waiting,
      tournamentId: snap.tournament_id ?? null,
      seats: snap.seats.map((s) => ({ ...s })),
      hand: snap.hand ? normalHand(snap.hand, snap.seq) : null,
      clock: null, operatorPause: snap.operator_pause ?? null, closed: null,
      // The next hand's commitment, published and not yet dealt: a seat gives it a seed.
      committed: snap.deck_committed ?? null,
      // A mixed table (null: one game): its games in turn, and the game of the hand in
      // progress or last dealt as the ``game`` event told it (server/table/mixed.py).
      rotation: snap.rotation ? rotationOf(snap.rotation) : null,
      game: snap.rotation?.game ?? null,
    };
    if (snap.clock) {
      const bank = table.seats[snap.clock.seat]?.time_bank ?? 0;
      table.clock = { seat: snap.clock.seat, end: Date.now() + snap.clock.remaining * 1000, bank: Math.min(bank, snap.clock.remaining) };
    }
    this.table = table;
    this.onEvent?.("snapshot", snap, table, false);
    this.onTable?.(table);
  }

  #event(frame) {
    const table = this.table;
    if (frame.table !== this.tableId || table === null || this.awaitingSnapshot) return;
    if (frame.private) {
      // Carries the seq of the public event it comes just before; not counted.
      if (frame.seq <= table.seq) return;
    } else {
      if (frame.seq <= table.seq) return;  // already in the snapshot
      if (frame.seq !== table.seq + 1) { this.resync(); return; }
      table.seq = frame.seq;
    }
    const restart = apply(table, frame.kind, frame.data, frame.private);
    this.onEvent?.(frame.kind, frame.data, table, !!frame.private);
    this.onTable?.(table);
    if (restart) this.resync();
  }
}

// The main pot and side pots as the chips stand: a side pot only at the level of a seat still
// in that is all in; a seat still in with chips behind is eligible for every pot (it may yet
// call). engine/pots.py's pots_in_play (through engine/views.py's pots_of), in JS.
export function sidePots(seats) {
  const entries = Object.entries(seats).map(([n, s]) => [Number(n), s]);
  const live = entries.filter(([, s]) => !s.folded);
  const levels = [...new Set(live.filter(([, s]) => s.all_in && s.in_pot > 0)
    .map(([, s]) => s.in_pot))].sort((a, b) => a - b);
  const pots = [];
  const add = (amount, eligible) => {
    const last = pots.at(-1);
    if (last && last.eligible.join() === eligible.join()) last.amount += amount;
    else pots.push({ amount, eligible });
  };
  let previous = 0;
  for (const level of levels) {
    let amount = 0;
    for (const [, s] of entries) amount += Math.min(s.in_pot, level) - Math.min(s.in_pot, previous);
    add(amount, live.filter(([, s]) => s.in_pot >= level || !s.all_in).map(([n]) => n));
    previous = level;
  }
  const rest = entries.reduce((sum, [, s]) => sum + Math.max(s.in_pot - previous, 0), 0);
  if (rest) {
    const openTo = live.filter(([, s]) => !s.all_in).map(([n]) => n);
    if (!openTo.length && pots.length) pots.at(-1).amount += rest;
    else add(rest, openTo);
  }
  return pots;
}

// A snapshot's rotation without its game (the table's ``game``, kept apart).
function rotationOf({ games, unit, hands, from_hand: fromHand }) {
  return { games, unit, hands, from_hand: fromHand };
}

function normalHand(hand, seq) {
  const seats = {};
  for (const [k, v] of Object.entries(hand.seats)) seats[Number(k)] = { ...v };
  return { ...hand, seats, announcements: [...hand.announcements], awards: [...hand.awards], turnSeq: seq };
}

function handSeat(stack) {
  return { stack, bet: 0, in_pot: 0, up: [], down: [], down_count: 0, folded: false, all_in: false, shown: false };
}

// A hand is over: its stacks, chips added meanwhile, sit-outs asked for (as the table
// settles it; leavers and the broke follow as events).
function settle(t, stacks) {
  t.seats.forEach((s, n) => {
    if (!s?.player) return;
    if (n in stacks) s.stack = stacks[n];
    s.stack += s.pending_chips || 0;
    s.pending_chips = 0;
    if (s.sit_out_next_hand) { s.sitting_out = true; s.sit_out_next_hand = false; }
  });
}

function offList(t, player) {
  if (t.waiting?.includes(player)) t.waiting = t.waiting.filter((p) => p !== player);
}

// Fold one event into the table; true when the table must be resynced.
export function apply(t, kind, data, isPrivate) {
  const hand = t.hand;
  const seat = (n) => t.seats[n];
  switch (kind) {
    case "seat_taken":
      if (data.player === t.me) t.you = data.seat;
      t.seats[data.seat] = { seat: data.seat, player: data.player, stack: data.stack, pending_chips: 0,
        sitting_out: false, sit_out_next_hand: false, leaving: false, connected: true, time_bank: undefined };
      offList(t, data.player);
      break;
    case "seat_left":
      if (t.you === data.seat) t.you = null;
      t.seats[data.seat] = { seat: data.seat, player: null };
      break;
    case "chips_added":
      if (data.after_hand) seat(data.seat).pending_chips += data.amount;
      else seat(data.seat).stack += data.amount;
      break;
    case "time_collected": seat(data.seat).stack = data.stack; break;
    case "sat_out":
      if (data.after_hand) seat(data.seat).sit_out_next_hand = true;
      else seat(data.seat).sitting_out = true;
      break;
    case "sat_in": seat(data.seat).sitting_out = false; seat(data.seat).sit_out_next_hand = false; break;
    case "leaving":
      seat(data.seat).leaving = true;
      if (data.removed) seat(data.seat).removed = data.removed; // an operator removes them: why
      break;
    case "waiting_list": t.waiting = data.waiting; break;
    case "seat_offer_expired": offList(t, data.player); break;
    case "hand_number":
      t.handNumber = data.hand; t.hand = null;
      if (t.committed && t.committed.hand <= data.hand) t.committed = null;
      break;
    case "game":  // a mixed table's next hand: its game, and where the rotation stands
      t.game = data; t.variant = data.variant;
      break;
    case "rotation_changed":  // an operator's new rotation, dealt from hand from_hand
      t.rotation = { games: data.games.map((variant) => ({ variant, title: variantName(variant) })),
        unit: data.unit, hands: data.hands, from_hand: data.from_hand };
      break;
    case "deck_committed": t.committed = { hand: data.hand, commitment: data.commitment }; break;
    case "clock":
      t.clock = { seat: data.seat, end: Date.now() + (data.action_clock + data.time_bank) * 1000, bank: data.time_bank };
      if (seat(data.seat)) seat(data.seat).time_bank = data.time_bank;
      break;
    case "time_bank": if (seat(data.seat)) seat(data.seat).time_bank = data.time_bank; break;
    case "hand_cancelled":
      settle(t, data.stacks || {});
      t.hand = null; t.clock = null;
      break;
    case "table_restarted":
      return true;
    case "operator_paused": t.operatorPause = data.reason; break;
    case "operator_resumed": t.operatorPause = null; break;
    case "operator_closed": if (!data.after_hand) t.closed = data.reason; break;
    case "table_settings":
      // Only empty seats go (the table refuses otherwise); new ones come empty.
      t.seats = t.seats.slice(0, data.seats);
      for (let n = t.seats.length; n < data.seats; n++) t.seats.push({ seat: n, player: null });
      t.variant = data.variant; t.stakes = data.stakes; t.buyIn = data.buy_in;
      break;
    case "hand_started": {
      const seats = {};
      for (const e of data.seats) seats[e.seat] = handSeat(e.stack);
      t.hand = { viewer: t.you !== null && t.you in seats ? t.you : null, variant: data.variant, street: null, pot: 0, common: [], seats,
        to_act: null, legal: null, announcements: [], awards: [], over: false };
      t.clock = null;
      if (t.game) {  // a mixed table: each hand has its game, and its stakes
        t.variant = data.variant;
        t.stakes = { ante: data.ante, bring_in: data.bring_in, small_bet: data.small_bet, big_bet: data.big_bet, structure: data.structure };
      }
      break;
    }
    default:
      if (hand) applyHand(t, hand, kind, data, isPrivate);
  }
  return false;
}

function applyHand(t, hand, kind, data, isPrivate) {
  const s = hand.seats[data.seat];
  switch (kind) {
    case "down_cards":
      if (isPrivate && s) s.down = s.down.concat(data.cards);
      break;
    case "ante":
      s.stack -= data.amount; s.in_pot += data.amount; s.all_in = data.all_in; hand.pot += data.amount;
      break;
    case "street_dealt":
      hand.street = data.street;
      for (const x of Object.values(hand.seats)) x.bet = 0;
      for (const deal of data.deals) {
        const d = hand.seats[deal.seat];
        d.up = d.up.concat(deal.up);
        d.down_count += deal.down;
      }
      break;
    case "common_card":
      hand.street = data.street;
      hand.common = hand.common.concat([data.card]);
      for (const x of Object.values(hand.seats)) x.bet = 0;
      break;
    case "turn":
      hand.to_act = data.seat; hand.legal = data; hand.turnSeq = t.seq;
      break;
    case "action": {
      const paid = data.amount || 0;
      s.stack -= paid; s.in_pot += paid; s.bet = data.to; hand.pot += paid;
      if (data.action === "fold") s.folded = true;
      if (data.all_in) s.all_in = true;
      hand.to_act = null; hand.legal = null; t.clock = null;
      break;
    }
    case "uncalled_returned":
      s.stack += data.amount; s.in_pot -= data.amount; s.bet -= data.amount; hand.pot -= data.amount;
      break;
    case "announcement":
      hand.announcements = hand.announcements.concat([data]);
      break;
    case "showdown":
      s.down = data.cards.filter((c) => !s.up.includes(c));
      s.shown = true;
      s.hand = {};
      for (const k of ["high", "low"]) if (k in data) s.hand[k] = data[k];
      break;
    case "muck":
      if (s) s.mucked = true;
      break;
    case "pot_awarded":
      s.stack += data.amount;
      hand.awards = hand.awards.concat([data]);
      break;
    case "hand_ended":
      hand.over = true; hand.to_act = null; hand.legal = null; t.clock = null;
      settle(t, Object.fromEntries(data.stacks.map((e) => [e.seat, e.stack])));
      break;
    default:
      break;
  }
}
