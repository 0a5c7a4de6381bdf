// OAuth 2.1 for an MCP server, as the specification's authorization section says, done by the SDK's
// `auth()`: protected-resource metadata (RFC 9728) from the `WWW-Authenticate` challenge or the
// well-known paths, authorization-server metadata (RFC 8414 / OpenID discovery), PKCE S256, a Client ID
// Metadata Document as the client id when the server supports them (else Dynamic Client Registration,
// RFC 7591), the resource indicator (RFC 8707), refresh. What is Cowork's here is only where things are
// kept and how the user is sent to sign in: the worker's callbacks.
//
//   oauth = {
//     redirectUrl,            // the page of Cowork's origin the sign-in returns to
//     clientMetadataUrl,      // Cowork's client metadata document (served from its origin; used when https)
//     clientName,
//     scope,                  // optional: asked for when the server names none
//     load(key) → Promise<value | undefined>, save(key, value | undefined),
//     redirect(authorizationUrl) → Promise<callbackUrl>,   // the popup; rejects when the user gives up
//   }
//
// Keys: "tokens", "client" (the registration), "verifier" (PKCE), "discovery". The worker keeps them out of
// the archive, exports, sync and logs; nothing here logs or returns them.
//
// A server an organisation runs for machines may instead take a grant without a user (the authorization
// extensions): `oauth.grant` = {type: "client_credentials", clientId, clientSecret} |
// {type: "private_key_jwt", clientId, privateKey, algorithm} | {type: "cross_app_access", clientId,
// clientSecret, idp: {tokenEndpoint, clientId, clientSecret?, idToken}} (an enterprise IdP's ID token
// exchanged for an ID-JAG, RFC 8693, then for an access token, RFC 7523). The SDK's providers do these;
// their tokens live in the connection only.
import {
  auth,
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  extractWWWAuthenticateParams,
  IssuerMismatchError,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { failure } from './errors.mjs';

/** The SDK's provider for `grant`, a grant without a user. */
export function grantProvider(grant, clientName = 'Cowork') {
  switch (grant?.type) {
    case 'client_credentials':
      return new ClientCredentialsProvider({ clientId: grant.clientId, clientSecret: grant.clientSecret, clientName, scope: grant.scope });
    case 'private_key_jwt':
      return new PrivateKeyJwtProvider({ clientId: grant.clientId, privateKey: grant.privateKey, algorithm: grant.algorithm ?? 'ES256', clientName });
    case 'cross_app_access':
      return new CrossAppAccessProvider({
        clientId: grant.clientId,
        clientSecret: grant.clientSecret,
        clientName,
        assertion: async (ctx) =>
          (
            await requestJwtAuthorizationGrant({
              tokenEndpoint: grant.idp.tokenEndpoint,
              audience: ctx.authorizationServerUrl,
              resource: ctx.resourceUrl,
              idToken: grant.idp.idToken,
              clientId: grant.idp.clientId,
              clientSecret: grant.idp.clientSecret,
              scope: ctx.scope,
              fetchFn: ctx.fetchFn,
            })
          ).jwtAuthGrant,
      });
    default:
      throw failure('protocol', `oauth.grant: unknown type ${JSON.stringify(grant?.type)}`);
  }
}

/** The SDK's `OAuthClientProvider`, over the worker's callbacks. */
export class CoworkOAuthProvider {
  constructor(options) {
    for (const f of ['load', 'save', 'redirect']) {
      if (typeof options[f] !== 'function') throw failure('protocol', `oauth.${f} must be a function`);
    }
    this.options = options;
    this.callback = undefined; // the URL the last sign-in returned to
    this.expectedState = undefined;
  }

  get redirectUrl() {
    return this.options.redirectUrl;
  }

  // A client id metadata document must be served over https (the SDK refuses any other URL): on an http
  // origin (a development server on loopback) the client registers itself instead (DCR).
  get clientMetadataUrl() {
    const url = this.options.clientMetadataUrl;
    return typeof url === 'string' && url.startsWith('https://') ? url : undefined;
  }

  get clientMetadata() {
    return {
      client_name: this.options.clientName ?? 'Cowork',
      redirect_uris: [String(this.options.redirectUrl)],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...(this.options.scope ? { scope: this.options.scope } : {}),
    };
  }

  state() {
    this.expectedState = crypto.randomUUID();
    return this.expectedState;
  }

  clientInformation() {
    return this.options.load('client');
  }

  saveClientInformation(info) {
    return this.options.save('client', info);
  }

  tokens() {
    return this.options.load('tokens');
  }

  saveTokens(tokens) {
    return this.options.save('tokens', tokens);
  }

  saveCodeVerifier(verifier) {
    return this.options.save('verifier', verifier);
  }

  async codeVerifier() {
    const verifier = await this.options.load('verifier');
    if (!verifier) throw failure('unauthorized', 'The sign-in has no PKCE verifier kept: sign in again.');
    return verifier;
  }

  saveDiscoveryState(state) {
    return this.options.save('discovery', state);
  }

  discoveryState() {
    return this.options.load('discovery');
  }

  async invalidateCredentials(scope) {
    const keys = { all: ['tokens', 'client', 'verifier', 'discovery'], client: ['client'], tokens: ['tokens'], verifier: ['verifier'], discovery: ['discovery'] };
    for (const key of keys[scope] ?? []) await this.options.save(key, undefined);
  }

  async redirectToAuthorization(authorizationUrl) {
    let callback;
    try {
      callback = await this.options.redirect(String(authorizationUrl));
    } catch (error) {
      throw failure('unauthorized', `The sign-in did not finish: ${error?.message ?? error}`, 401);
    }
    this.callback = new URL(String(callback));
  }

  /** The code (and issuer) the last sign-in returned with, checked against the state it was sent with. */
  takeCallback() {
    const url = this.callback;
    this.callback = undefined;
    if (!url) throw failure('unauthorized', 'The sign-in returned nothing.', 401);
    const params = url.searchParams;
    if (params.get('error')) {
      throw failure('unauthorized', `The authorization server refused the sign-in: ${params.get('error')} ${params.get('error_description') ?? ''}`.trim(), 401);
    }
    if (this.expectedState && params.get('state') !== this.expectedState) {
      throw failure('unauthorized', 'The sign-in returned with a state this client did not send: ignored.', 401);
    }
    const code = params.get('code');
    if (!code) throw failure('unauthorized', 'The sign-in returned without an authorization code.', 401);
    return { authorizationCode: code, iss: params.get('iss') ?? undefined };
  }
}

// How many times one request may sign in (or refresh), and how many sign-ins in a row may fail to
// satisfy the server before the connection stops trying: a server that answers 403 to every token (a
// scope it never grants) must not loop the user through sign-ins. A sign-in that works resets the count,
// so a long connection refreshes its token as often as it expires.
const ATTEMPTS_PER_REQUEST = 1;
const ATTEMPTS_PER_CONNECTION = 3;

/**
 * A fetch middleware for the transports: the bearer token on every request; on a 401 (or a 403 with
 * `insufficient_scope`), the SDK's `auth()` — a refresh when it can, else a sign-in through
 * `provider.redirectToAuthorization` and the code exchanged — then the request once more.
 */
export function withOAuth(provider, serverUrl, next) {
  let attempts = 0;
  // A 2025-03-26 server without protected-resource metadata has its authorization server at its own
  // origin, whose metadata may name an issuer on a path of that origin (RFC 8414 §3.3 wants them equal).
  // Only there, where the issuer is the server's own origin either way, is that mismatch accepted.
  let sameOriginIssuer = false;
  const authorize = async (options) => {
    try {
      return await auth(provider, { ...options, skipIssuerMetadataValidation: sameOriginIssuer });
    } catch (error) {
      const origin = new URL(serverUrl).origin;
      const onOrigin = (u) => { try { return new URL(u).origin === origin; } catch { return false; } };
      if (!sameOriginIssuer && error instanceof IssuerMismatchError && error.kind === 'metadata' && onOrigin(error.expected) && onOrigin(error.received)) {
        sameOriginIssuer = true;
        return auth(provider, { ...options, skipIssuerMetadataValidation: true });
      }
      throw error;
    }
  };
  const wrapped = async (input, init) => {
    const send = async () => {
      const headers = new Headers(init?.headers);
      const tokens = await provider.tokens();
      if (tokens?.access_token) headers.set('Authorization', `Bearer ${tokens.access_token}`);
      return next(input, { ...init, headers });
    };
    let response = await send();
    for (let tries = 0; tries < ATTEMPTS_PER_REQUEST && needsAuth(response); tries++) {
      if (attempts >= ATTEMPTS_PER_CONNECTION) break;
      attempts++;
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response);
      // A 403 asks for more scope than the token has: a refresh cannot widen it (RFC 6749 §6).
      const forceReauthorization = response.status === 403;
      const options = { serverUrl, resourceMetadataUrl, scope, fetchFn: next, forceReauthorization };
      let result;
      try {
        result = await authorize(options);
        if (result === 'REDIRECT') result = await authorize({ ...options, ...provider.takeCallback() });
      } catch (error) {
        // Kept for the caller: a sign-in that failed (a window closed, a forged state) is not tried again
        // by a second handshake (index.mjs).
        wrapped.signInFailure = error?.kind ? error : new UnauthorizedError(`The sign-in failed: ${error?.message ?? error}`);
        throw wrapped.signInFailure;
      }
      if (result !== 'AUTHORIZED') throw new UnauthorizedError(`The sign-in ended as ${result}`);
      response = await send();
      if (!needsAuth(response)) attempts = 0;
    }
    return response;
  };
  return wrapped;
}

function needsAuth(response) {
  if (response.status === 401) return true;
  return response.status === 403 && /insufficient_scope/.test(response.headers.get('www-authenticate') ?? '');
}
