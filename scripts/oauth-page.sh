#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): the sign-in window of an MCP server's OAuth (web/oauth/,
# web/mcp/signin.mjs) as dist/oauth/, a page of Cowork's origin the authorization server sends the
# user back to. For an https deployment that names its address in COWORK_ORIGIN (the app's URL, e.g.
# https://cowork.example/), also Cowork's Client ID Metadata Document, dist/oauth/client.json, whose
# client_id is its own URL: an authorization server that supports those documents then knows Cowork
# without a registration. Without it (every http origin, such as a development server on loopback),
# the client registers itself with each server (Dynamic Client Registration).
set -eu
: "${TRUNK_STAGING_DIR:?run by Trunk as a post_build hook}"
out="$TRUNK_STAGING_DIR/oauth"
mkdir -p "$out"
cp web/oauth/callback.html web/oauth/callback.js "$out/"
case "${COWORK_ORIGIN:-}" in
  "") ;;
  https://*)
    base="${COWORK_ORIGIN%/}/"
    cat >"$out/client.json" <<JSON
{
  "client_id": "${base}oauth/client.json",
  "client_name": "Cowork",
  "client_uri": "${base}",
  "redirect_uris": ["${base}oauth/callback.html"],
  "grant_types": ["authorization_code", "refresh_token"],
  "response_types": ["code"],
  "token_endpoint_auth_method": "none"
}
JSON
    ;;
  *) echo "oauth-page.sh: COWORK_ORIGIN must be the app's https:// address (got $COWORK_ORIGIN)" >&2; exit 1 ;;
esac
