// Signing in to an OAuth-protected MCP server from the page (spec §16), the browser's side of oauth.mjs:
// where the storage worker keeps what the SDK's `auth()` saves, and how the sign-in window is driven.
//
// Keeping: the tokens, the client registration and the discovery state of each server, by the server's
// id, in a file of the origin private file system of their own (STORE_FILE, beside the archive's folder
// and the bearer tokens' file), written only here, never in the archive, an export, a sync message or a
// log; the PKCE verifier only in memory, for its sign-in. Sign out deletes the server's entry.
//
// The window: the page opens `oauth/callback.html#<nonce>` inside the user's click (a page may open a
// window only then), and asks the worker to sign in with that nonce. The worker's `redirect` posts the
// authorization URL on the origin's BroadcastChannel CHANNEL under the nonce; the window, Cowork's own
// page, goes there; the authorization server sends it back to the same page with the code and state,
// which posts that URL under the nonce and closes. The page posts `{nonce, closed: true}` when the window
// was closed before that. Without a nonce (a connection for the agent loop, a status check) there is no
// window: the sign-in is refused with a message naming Settings → Tools. A refresh needs no window.
import { keptFile } from './kept.mjs';

export const CHANNEL = 'cowork-mcp-oauth';
export const STORE_FILE = 'cowork-mcp-oauth.json';

/** How long a sign-in window may take (ms) before the sign-in is given up. */
const SIGN_IN_MS = 300_000;

const { read: readAll, update } = keptFile(STORE_FILE);

/** Forgets everything kept for server `id` (Sign out). */
export function signOut(id) {
  return update((all) => delete all[id]);
}

/**
 * The `oauth` option of `connect` for the server `store` (its id): what the SDK saves kept in
 * STORE_FILE, the sign-in through the window with `signIn` (a nonce), if any.
 */
export function browserOAuth({ store, signIn, clientName, clientMetadataUrl }) {
  let verifier;
  let failed;
  return {
    redirectUrl: new URL('oauth/callback.html', base()).href,
    clientMetadataUrl,
    clientName: clientName ?? 'Cowork',
    // The PKCE verifier lives only as long as its sign-in, in this connection: never written, and
    // never overwritten by another connection's attempt (a status check) while the window is open.
    load: async (key) => (key === 'verifier' ? verifier : (await readAll())[store]?.[key]),
    save: async (key, value) => {
      if (key === 'verifier') return void (verifier = value);
      return update((all) => {
        const entry = (all[store] ??= {});
        if (value === undefined) delete entry[key];
        else entry[key] = value;
      });
    },
    // One window, one sign-in: once it failed (closed, timed out), an attempt the connection makes again
    // (such as the 2025 handshake after the revision probe) fails the same way at once.
    redirect: signIn
      ? async (url) => {
          if (failed) throw failed;
          try {
            return await viaWindow(signIn, url);
          } catch (error) {
            throw (failed = error);
          }
        }
      : noWindow,
  };
}

// The app's address: the storage worker's script is beside its page.
const base = () => globalThis.location?.href ?? 'http://localhost/';

let document_; // the promise of clientDocument's answer, asked once

/**
 * The URL of Cowork's client metadata document when this deployment serves one (`oauth/client.json`,
 * written by the build for an https origin, `COWORK_ORIGIN`) and it names itself as its client id, as a
 * Client ID Metadata Document must; else undefined, and the client registers itself (DCR).
 */
export function clientDocument() {
  document_ ??= (async () => {
    const url = new URL('oauth/client.json', base()).href;
    if (!url.startsWith('https://')) return undefined;
    try {
      const response = await fetch(url, { cache: 'no-store' });
      return response.ok && (await response.json())?.client_id === url ? url : undefined;
    } catch {
      return undefined;
    }
  })();
  return document_;
}

async function noWindow() {
  throw new Error('this device is not signed in to the server: press "Sign in" for it in Settings → Tools.');
}

/** Sends the window under `nonce` to `authorizationUrl`; resolves with the URL it came back to. */
export function viaWindow(nonce, authorizationUrl, timeoutMs = SIGN_IN_MS) {
  return new Promise((resolve, reject) => {
    const channel = new BroadcastChannel(CHANNEL);
    const done = (settle, value) => {
      clearTimeout(timer);
      channel.close();
      settle(value);
    };
    const timer = setTimeout(() => done(reject, new Error('the sign-in window gave no answer in 5 minutes: press "Sign in" again.')), timeoutMs);
    const send = () => channel.postMessage({ nonce, authorize: authorizationUrl });
    channel.onmessage = ({ data }) => {
      if (data?.nonce !== nonce) return;
      if (data.ready) send();
      else if (typeof data.callback === 'string') done(resolve, data.callback);
      else if (data.closed) done(reject, new Error('the sign-in window was closed before the sign-in finished: press "Sign in" again.'));
    };
    send(); // the window may be there already; else it says `ready` when it is
  });
}
