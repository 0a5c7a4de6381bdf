#!/usr/bin/env node
// The client the official MCP conformance suite (@modelcontextprotocol/conformance, client mode) spawns:
// `driver.mjs <server URL>` with MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT) in the
// environment. It drives Cowork's own client, ../index.mjs — the module the storage worker loads — the
// way the worker does: connect, list, call. For the auth scenarios it plays the worker's part of the
// `oauth` option: a store in memory (the worker's is outside the archive), and a sign-in that follows
// the authorization URL with fetch (redirect: manual) and returns the callback URL, as the popup would.
// scripts/conformance.sh runs every client scenario through it.
import { connect } from '../index.mjs';

const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');

/** The client id document the CIMD scenarios expect a client to name (they serve it themselves). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const REDIRECT_URL = 'http://localhost:3000/callback';

// Arguments for a tool from its input schema: a value of each required (or given) property's type.
function argumentsFor(tool) {
  const props = tool.inputSchema?.properties ?? {};
  const sample = { number: 2, integer: 3, string: 'cowork', boolean: true, array: [], object: {} };
  return Object.fromEntries(Object.entries(props).map(([name, p]) => [name, p.default ?? sample[p.type] ?? null]));
}

// The worker's side of `oauth`: where the sign-in's state is kept, and the "popup".
function oauthFor({ preRegistered } = {}) {
  const kept = new Map();
  if (preRegistered) kept.set('client', preRegistered);
  return {
    redirectUrl: REDIRECT_URL,
    clientMetadataUrl: CLIENT_METADATA_URL,
    clientName: 'Cowork conformance driver',
    load: async (key) => kept.get(key),
    save: async (key, value) => (value === undefined ? kept.delete(key) : kept.set(key, value)),
    redirect: async (authorizationUrl) => {
      const response = await fetch(authorizationUrl, { redirect: 'manual' });
      const location = response.headers.get('location');
      if (!location) throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
      return new URL(location, authorizationUrl).href;
    },
  };
}

// Connects, lists what the server offers, calls every tool with arguments from its schema, closes.
async function session(options, { callTools = true } = {}) {
  const conn = await connect({ url, name: scenario, ...options });
  try {
    const tools = await conn.listTools();
    if (callTools) {
      for (const tool of tools) {
        const result = await conn.callTool(tool.name, argumentsFor(tool));
        console.error(`called ${tool.name}: ${JSON.stringify(result).slice(0, 200)}`);
      }
    }
  } finally {
    await conn.close();
  }
}

async function run() {
  if (scenario === 'initialize') return session({}, { callTools: false });
  if (scenario === 'tools_call' || scenario === 'sse-retry') return session({});
  if (scenario === 'elicitation-sep1034-client-defaults') {
    // The user accepts without touching a field: every default the schema gives is what is sent.
    return session({ onElicit: async () => ({ action: 'accept', content: {} }) });
  }
  if (scenario === 'auth/pre-registration') {
    const preRegistered = { client_id: context.client_id, client_secret: context.client_secret, redirect_uris: [REDIRECT_URL] };
    return session({ oauth: oauthFor({ preRegistered }) });
  }
  if (scenario === 'auth/client-credentials-basic') {
    return session({ oauth: { grant: { type: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret } } });
  }
  if (scenario === 'auth/client-credentials-jwt') {
    const grant = { type: 'private_key_jwt', clientId: context.client_id, privateKey: context.private_key_pem, algorithm: context.signing_algorithm };
    return session({ oauth: { grant } });
  }
  if (scenario === 'auth/cross-app-access-complete-flow') {
    const idp = { tokenEndpoint: context.idp_token_endpoint, clientId: context.idp_client_id, idToken: context.idp_id_token };
    return session({ oauth: { grant: { type: 'cross_app_access', clientId: context.client_id, clientSecret: context.client_secret, idp } } });
  }
  if (scenario.startsWith('auth/')) return session({ oauth: oauthFor() });
  throw new Error(`the driver does not know the scenario "${scenario}"`);
}

try {
  await run();
  process.exit(0);
} catch (error) {
  console.error(`scenario ${scenario}: ${error?.kind ?? ''} ${error?.message ?? error}`);
  process.exit(1);
}
