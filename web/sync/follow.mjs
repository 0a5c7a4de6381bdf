// Following a space by push (`space.follow`): an ordered consumer of the space's stream from a cursor,
// whose messages the server sends as they are stored (a pull kept open, so a new message arrives within
// milliseconds, not at the next poll). They are decoded as they come and held until the archive takes
// them, in stream order, each once. The follower checks that every stream sequence follows the one before
// (the stream deletes nothing, so a jump means something was missed): after a jump, a reconnection or
// an error it stops and says why (`broken`), and the caller reads from its own cursor with `fetch`
// before following again. What it holds is bounded: delivery waits while `HOLD` messages wait to be taken.

import { classify } from './errors.mjs';

const PULL = 256; // messages asked for at a time (asked again as they are read)
const HOLD = 1024; // decoded messages held for the archive at most
const EXPIRES = 10_000; // how long one open pull waits on the server …
const HEARTBEAT = 2_000; // … sending a heartbeat this often: two missed, and the delivery has stalled
// What the client reports when the delivery stalls (a cluster's new consumer that does not answer its
// first pull yet, a consumer gone, heartbeats missed): it would wait for heartbeats to resume it; the
// caller fetches instead, at once, and follows again.
const STALLED = new Set(['no_responders', 'heartbeats_missed', 'consumer_not_found', 'consumer_deleted', 'stream_not_found']);

/** A space followed from a stream sequence: made by `space.follow(afterSeq)`. */
export class Follower {
  #after; // the stream sequence the next `take` continues from
  #readTo; // the last stream sequence delivered (set-up messages and chunks included)
  #streamLast; // the stream's last sequence, as the last delivery told
  #held = []; // decoded messages after #after, in stream order
  #broken = null;
  #stopped = false;
  #wakers = new Set(); // the pending waits' resolvers (something arrived, or the follower broke)
  #room = null; // resolves the delivery loop's wait for room in #held
  #messages = null;
  #consumer = null;
  #unsubscribe;
  done;

  /**
   * Follows `stream` of `connection` after `afterSeq`; `decode(m, partial)` turns a delivered message into
   * the changes it gives ({ seq, id, body } or { seq, id, sealed, error }): one, a pack's, or none (the
   * set-up message, a chunk before the last).
   */
  constructor(connection, stream, afterSeq, decode, ctx) {
    this.#after = afterSeq;
    this.#readTo = afterSeq;
    this.#streamLast = afterSeq;
    // A reconnection may have lost what was on its way: the caller reads again from its cursor.
    this.#unsubscribe = connection.onStatus(({ status }) => status !== 'online' && this.#break('reconnect', `the connection went ${status}`));
    this.done = this.#run(connection, stream, decode).catch((err) => this.#break('error', classify(err, ctx).message));
  }

  async #run(connection, stream, decode) {
    const ended = () => this.#stopped || this.#broken;
    this.#consumer = await connection.js.consumers.get(stream, { opt_start_seq: this.#after + 1 });
    if (ended()) return this.#finish();
    this.#messages = await this.#consumer.consume({ max_messages: PULL, expires: EXPIRES, idle_heartbeat: HEARTBEAT });
    if (ended()) return this.#finish();
    (async () => {
      for await (const s of this.#messages.status()) {
        if (STALLED.has(s.type)) this.#break('error', `the server's delivery stalled (${s.type.replaceAll('_', ' ')})`);
      }
    })().catch(() => {});
    const partial = new Map();
    for await (const m of this.#messages) {
      if (ended()) break;
      if (m.seq !== this.#readTo + 1) {
        this.#break('gap', `the stream went from sequence ${this.#readTo} to ${m.seq}`);
        break;
      }
      const changes = await decode(m, partial);
      if (ended()) break;
      this.#readTo = m.seq;
      this.#streamLast = Math.max(this.#streamLast, m.seq + (m.info.pending ?? 0));
      this.#held.push(...changes);
      this.#signal();
      while (this.#held.length >= HOLD && !ended()) await new Promise((ok) => { this.#room = ok; });
    }
    this.#break('error', 'the server ended the delivery');
  }

  /** Why following stopped ({ kind: "gap" | "reconnect" | "error", message }), or null while it goes on. */
  get broken() {
    return this.#broken;
  }

  /**
   * What arrived since the last take, at most `max` changes and the rest of a pack they end inside of:
   * `{ after, messages, lastSeq, streamLast }` (`after`: the sequence these continue from, the last
   * take's `lastSeq`; `lastSeq`: the sequence read up to), or null once the follower is broken (read
   * from your cursor with `fetch`, then follow again).
   */
  take(max = HOLD) {
    if (this.#broken) return null;
    let n = Math.min(Math.max(1, max), this.#held.length);
    while (n > 0 && n < this.#held.length && this.#held[n].seq === this.#held[n - 1].seq) n++;
    const messages = this.#held.splice(0, n);
    const after = this.#after;
    const lastSeq = this.#held.length ? messages[messages.length - 1].seq : this.#readTo;
    this.#after = lastSeq;
    this.#room?.();
    this.#room = null;
    return { after, messages, lastSeq, streamLast: Math.max(this.#streamLast, lastSeq) };
  }

  /** Resolves when there is something to take (or the follower broke), or after `ms` at the latest. */
  wait(ms) {
    if (this.#held.length || this.#broken) return Promise.resolve(true);
    return new Promise((ok) => {
      const wake = (arrived) => {
        clearTimeout(timer);
        this.#wakers.delete(wake);
        ok(arrived);
      };
      const timer = setTimeout(() => wake(false), ms);
      this.#wakers.add(wake);
    });
  }

  /** Stops following (deleting the consumer on the server); resolves when it has stopped. */
  async stop() {
    this.#stopped = true;
    this.#finish();
    await this.done;
  }

  #signal() {
    for (const wake of [...this.#wakers]) wake(true);
  }

  #break(kind, message) {
    if (this.#broken || this.#stopped) return;
    this.#broken = { kind, message };
    this.#held = [];
    this.#finish();
    this.#signal();
  }

  #finish() {
    this.#unsubscribe();
    this.#room?.();
    this.#messages?.stop();
    this.#consumer?.delete().catch(() => {});
  }
}
