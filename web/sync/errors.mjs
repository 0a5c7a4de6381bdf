// The sync transport's failures (web/sync/index.mjs): the one error type, SyncError, whose `kind` the
// worker reads, and how the NATS clients' errors become one, each with what to do about it.

/** Any failure of this module. `kind` says what went wrong; the message says what to do about it. */
export class SyncError extends Error {
  constructor(kind, message, { cause, ...details } = {}) {
    super(message, { cause });
    this.name = 'SyncError';
    this.kind = kind;
    Object.assign(this, details);
  }
}

export const invalid = (message) => new SyncError('invalid', message);

// Turns a client or server error into a SyncError. `ctx`: who is connected (`who`, `secret`), to
// which `url`, and the `space` and `action` being attempted, for the message.
export function classify(err, ctx = {}) {
  if (err instanceof SyncError) return err;
  const chain = [];
  for (let e = err; e && chain.length < 8; e = e.cause) chain.push(e);
  const find = (...names) => chain.find((e) => names.includes(e?.name));
  const who = ctx.who ?? 'this connection';
  const doing = ctx.action ?? 'do that';
  if (find('AuthorizationError', 'UserAuthenticationExpiredError')) {
    return new SyncError('auth', `The sync server refused ${who}: check the ${ctx.secret ?? 'credentials'}.`, { cause: err });
  }
  const denied = find('PermissionViolationError');
  if (denied) {
    const message = ctx.space
      ? `The sync server does not let ${who} use space "${ctx.space}": check the space name, or ask the server's administrator for access.`
      : `The sync server does not let ${who} ${denied.operation === 'publish' ? 'publish to' : 'subscribe to'} ${denied.subject}: ask its administrator to allow it.`;
    return new SyncError('permission', message, { cause: err });
  }
  const off = find('JetStreamNotEnabled');
  if (off) {
    // The client says "not enabled" for a JetStream request nobody answered too: what a cluster does for
    // a few seconds while its nodes choose a new leader.
    if (off.cause?.isNoResponders?.()) {
      return new SyncError('server', `The sync server's JetStream did not answer ${who} (a cluster does not while it chooses a new leader, for a few seconds): Cowork tries again by itself; if this lasts, ask the server's administrator whether JetStream is on.`, { cause: err });
    }
    return new SyncError('server', `The sync server has JetStream turned off for ${who}: ask its administrator to enable it.`, { cause: err });
  }
  const api = find('JetStreamApiError', 'StreamNotFoundError', 'ConsumerNotFoundError', 'JetStreamError', 'JetStreamStatusError');
  if (api) return new SyncError('server', `The sync server could not ${doing}: ${api.message}.`, { cause: err });
  if (find('TimeoutError', 'ConnectionError', 'ClosedConnectionError', 'DrainingConnectionError', 'RequestError', 'NoResponders')) {
    const where = ctx.url ? ` at ${ctx.url}` : '';
    return new SyncError('unreachable', `Cannot reach the sync server${where} to ${doing}: check its address and the network.`, { cause: err });
  }
  return new SyncError('server', `The sync server could not ${doing}: ${err?.message ?? err}.`, { cause: err });
}

/** Whether `err` (or what caused it) is a request nobody answered. */
export function noResponders(err) {
  for (let e = err, i = 0; e && i < 8; e = e.cause, i++) {
    if (e instanceof SyncError) return false;
    if (e.isNoResponders?.() || e.code === 503 || e.status === 503 || /no responders/i.test(e.message ?? '')) return true;
  }
  return false;
}

export function checkSeq(seq) {
  if (!Number.isSafeInteger(seq) || seq < 0) throw invalid(`A stream sequence is a whole number ≥ 0, not "${seq}".`);
}
