// The sign-in window's side of signin.mjs, over a real BroadcastChannel (as the window, Cowork's
// oauth/callback.js, speaks it): the worker's redirect sends the window under its nonce to the
// authorization URL, answers a window that says it is ready late, takes the URL the window came back
// to, ignores another sign-in's window, and ends with a clear message when the window was closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CHANNEL, viaWindow } from '../signin.mjs';

/** A window of the origin on the channel: its messages, and a way to post. */
function windowSide() {
  const channel = new BroadcastChannel(CHANNEL);
  const seen = [];
  let notify;
  channel.onmessage = ({ data }) => {
    seen.push(data);
    notify?.();
  };
  const next = () => new Promise((r) => (notify = r));
  return { channel, seen, next, post: (m) => channel.postMessage(m) };
}

test('the window is sent to the authorization URL under its nonce and its return URL is taken', async () => {
  const w = windowSide();
  try {
    const first = w.next();
    const signIn = viaWindow('n-1', 'http://127.0.0.1:9/authorize?state=s1');
    await first;
    assert.deepEqual(w.seen.at(-1), { nonce: 'n-1', authorize: 'http://127.0.0.1:9/authorize?state=s1' });
    // A window that opened after the first message says it is ready, and is told again.
    const again = w.next();
    w.post({ nonce: 'n-1', ready: true });
    await again;
    assert.deepEqual(w.seen.at(-1), { nonce: 'n-1', authorize: 'http://127.0.0.1:9/authorize?state=s1' });
    // Another sign-in's window is not this one's answer.
    w.post({ nonce: 'other', callback: 'http://127.0.0.1:8/oauth/callback.html?code=theirs&state=x' });
    w.post({ nonce: 'n-1', callback: 'http://127.0.0.1:8/oauth/callback.html?code=c1&state=s1' });
    assert.equal(await signIn, 'http://127.0.0.1:8/oauth/callback.html?code=c1&state=s1');
  } finally {
    w.channel.close();
  }
});

test('a window closed before the end: the sign-in fails with a message saying so', async () => {
  const w = windowSide();
  try {
    const first = w.next();
    const signIn = viaWindow('n-2', 'http://127.0.0.1:9/authorize');
    await first;
    w.post({ nonce: 'n-2', closed: true });
    await assert.rejects(signIn, /sign-in window was closed before the sign-in finished/);
  } finally {
    w.channel.close();
  }
});

test('a window that never answers: the sign-in gives up after its time', async () => {
  await assert.rejects(viaWindow('n-3', 'http://127.0.0.1:9/authorize', 50), /gave no answer/);
});
