// Cowork's sign-in window for an MCP server's OAuth (web/mcp/signin.mjs says the whole flow). Opened by
// the app as callback.html#<nonce>: it keeps the nonce (in this window's sessionStorage, which outlives
// the trip to the authorization server), says it is ready on the origin's channel and goes to the
// authorization URL the storage worker posts under its nonce. Sent back here with ?code&state (or
// ?error), it posts this URL under the nonce, for the worker to check the state and exchange the code,
// and closes. Nothing is kept once it is back.
(() => {
  const CHANNEL = 'cowork-mcp-oauth';
  const KEY = 'cowork-mcp-oauth-nonce';
  const channel = new BroadcastChannel(CHANNEL);
  const status = (text) => {
    document.getElementById('status').textContent = text;
  };
  const params = new URLSearchParams(location.search);
  if (params.has('code') || params.has('error')) {
    const nonce = sessionStorage.getItem(KEY);
    sessionStorage.removeItem(KEY);
    if (!nonce) {
      status('This sign-in was not started here: close this window and press "Sign in" in Cowork again.');
      return;
    }
    channel.postMessage({ nonce, callback: location.href });
    history.replaceState(null, '', location.pathname); // the code leaves the address bar
    status('Signed in. This window closes now.');
    channel.close();
    window.close();
    return;
  }
  const nonce = location.hash.slice(1);
  if (!nonce) {
    status('Open this page from Cowork: Settings → Tools, "Sign in".');
    return;
  }
  sessionStorage.setItem(KEY, nonce);
  channel.onmessage = ({ data }) => {
    if (data?.nonce === nonce && typeof data.authorize === 'string' && /^https?:/.test(data.authorize)) {
      channel.close();
      status('Opening the sign-in page…');
      location.assign(data.authorize);
    }
  };
  channel.postMessage({ nonce, ready: true });
})();
