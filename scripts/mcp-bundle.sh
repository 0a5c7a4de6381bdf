#!/usr/bin/env sh
# Post-build step (scripts/post-build.sh): Cowork's MCP client (spec §16), which the storage worker loads
# only when an MCP server is configured, never at start: web/mcp/index.mjs (and its sibling modules) with
# the official SDK's client package, built for browsers (its browser shims: the JSON Schema validator for
# browsers, CORS-aware discovery), bundled as mcp-<hash>.js, global `CoworkMcp`, named by
# <meta name="cowork-mcp"> (scripts/lazy-bundle.sh does it).
set -eu
exec sh scripts/lazy-bundle.sh mcp web/mcp CoworkMcp @modelcontextprotocol/client "Cowork's MCP client (web/mcp)"
