// An MCP server that requires OAuth, for the tests (scripts/mcp-servers.sh: MCP_OAUTH_URL), made of the
// official TypeScript SDK's server parts: its authorization-server router (RFC 8414 metadata, Dynamic
// Client Registration, /authorize with PKCE, /token with refresh, revocation), its protected-resource
// metadata (RFC 9728) and its bearer middleware, on one origin, with CORS for a browser page. What is
// ours is the provider behind them, kept in memory: /authorize approves at once (the sign-in a user
// would click through) and sends the browser back to the client's redirect URI with the code, and
// tokens last COWORK_MCP_OAUTH_TTL seconds (default 3600). For the tests, without waiting:
//   POST /test/expire   every access token issued so far expires now (the next call gets a 401)
//   GET  /test/stats    what the server did: registrations, codes, refreshes, revocations, calls
//   GET  /test/tokens   every access and refresh token it issued (for a test to look for them where
//                       they must never be, such as an export)
// Run: PORT=… node --import ./loopback.mjs oauth-server.mjs
import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { mcpAuthRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidGrantError, InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const port = Number(process.env.PORT);
const ttl = Number(process.env.COWORK_MCP_OAUTH_TTL ?? 3600);
const origin = `http://127.0.0.1:${port}`;
const mcpUrl = new URL('/mcp', origin);
const stats = { registrations: 0, authorizations: 0, codes: 0, refreshes: 0, revocations: 0, calls: 0, expired: 0 };

const clients = new Map();
const codes = new Map(); // code → {client_id, challenge, redirectUri, scopes, resource}
const tokens = new Map(); // access token → {client_id, scopes, expiresAt, resource}
const refreshTokens = new Map(); // refresh token → {client_id, scopes, resource}
const issued = []; // every token issued, access and refresh

function issue(client_id, scopes, resource) {
  const access = randomUUID();
  const refresh = randomUUID();
  tokens.set(access, { client_id, scopes, resource, expiresAt: Date.now() + ttl * 1000 });
  refreshTokens.set(refresh, { client_id, scopes, resource });
  issued.push(access, refresh);
  return { access_token: access, token_type: 'bearer', expires_in: ttl, refresh_token: refresh, scope: scopes.join(' ') };
}

const provider = {
  clientsStore: {
    getClient: async (id) => clients.get(id),
    registerClient: async (client) => {
      stats.registrations++;
      const full = { ...client, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) };
      clients.set(full.client_id, full);
      return full;
    },
  },
  async authorize(client, params, res) {
    stats.authorizations++;
    const code = randomUUID();
    codes.set(code, { client_id: client.client_id, challenge: params.codeChallenge, redirectUri: params.redirectUri, scopes: params.scopes ?? [], resource: params.resource });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  },
  async challengeForAuthorizationCode(_client, code) {
    const data = codes.get(code);
    if (!data) throw new InvalidGrantError('unknown authorization code');
    return data.challenge;
  },
  async exchangeAuthorizationCode(client, code) {
    const data = codes.get(code);
    if (!data || data.client_id !== client.client_id) throw new InvalidGrantError('unknown authorization code');
    codes.delete(code);
    stats.codes++;
    return issue(client.client_id, data.scopes, data.resource);
  },
  async exchangeRefreshToken(client, refreshToken) {
    const data = refreshTokens.get(refreshToken);
    if (!data || data.client_id !== client.client_id) throw new InvalidGrantError('unknown refresh token');
    refreshTokens.delete(refreshToken);
    stats.refreshes++;
    return issue(client.client_id, data.scopes, data.resource);
  },
  async verifyAccessToken(token) {
    const data = tokens.get(token);
    if (!data || data.expiresAt <= Date.now()) throw new InvalidTokenError('the access token is unknown or expired');
    return { token, clientId: data.client_id, scopes: data.scopes, expiresAt: Math.floor(data.expiresAt / 1000) };
  },
  async revokeToken(_client, { token }) {
    stats.revocations++;
    tokens.delete(token);
    refreshTokens.delete(token);
  },
};

function mcpServer() {
  const server = new McpServer({ name: 'cowork-test-oauth', version: '1.0.0' });
  server.registerTool('whoami', { description: 'Says which OAuth client called it', annotations: { readOnlyHint: true } }, async (extra) => {
    stats.calls++;
    return { content: [{ type: 'text', text: `signed in as client ${extra.authInfo?.clientId}` }] };
  });
  return server;
}

const app = express();
app.use(cors({ origin: '*', exposedHeaders: ['mcp-session-id', 'mcp-protocol-version', 'www-authenticate'] }));
app.use(
  mcpAuthRouter({
    provider,
    issuerUrl: new URL(origin),
    resourceServerUrl: mcpUrl,
    scopesSupported: ['mcp:tools'],
    resourceName: 'Cowork test server (OAuth)',
    authorizationOptions: { rateLimit: false },
    clientRegistrationOptions: { rateLimit: false },
    tokenOptions: { rateLimit: false },
    revocationOptions: { rateLimit: false },
  }),
);
app.post('/test/expire', (_req, res) => {
  for (const data of tokens.values()) data.expiresAt = 0;
  stats.expired++;
  res.json(stats);
});
app.get('/test/stats', (_req, res) => res.json(stats));
app.get('/test/tokens', (_req, res) => res.json(issued));

const bearer = requireBearerAuth({ verifier: provider, resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) });
const sessions = new Map();
app.all('/mcp', express.json(), bearer, async (req, res) => {
  let transport = sessions.get(req.headers['mcp-session-id']);
  if (!transport) {
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, transport) });
    await mcpServer().connect(transport);
  }
  await transport.handleRequest(req, res, req.body);
});

app.listen(port, '127.0.0.1', () => console.log(`OAuth MCP server listening on port ${port}`));
