#!/usr/bin/env bash
# The package as a user gets it: pack the tarball, install it into an empty project outside the
# repository, and there run the CLI, `scimd serve` and the three entry points (check.mjs).
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d /tmp/scimd-install.XXXXXX)
trap 'kill "${serve_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

tarball=$(cd "$repo" && npm pack --silent --pack-destination "$work" | tail -n1)
size=$(stat -c %s "$work/$tarball")
echo "packed $tarball: $size bytes"
[ "$size" -lt 5000000 ] || { echo "the tarball is over 5 MB" >&2; exit 1; }

mkdir "$work/project" && cd "$work/project"
npm init -y >/dev/null
npm install --no-audit --no-fund --loglevel=error "$work/$tarball" >/dev/null
version=$(npx --no-install scimd --version)
expected=$(node -p "require('$repo/package.json').version")
echo "npx scimd --version: $version"
[ "$version" = "$expected" ] || { echo "expected $expected" >&2; exit 1; }

# npx scimd serve on the embedded database, until it answers /readyz.
port=$((20000 + RANDOM % 20000))
# The installed bin itself (not npx, whose child would outlive a kill of npx).
PORT=$port DATA_DIR="$work/serve-data" ./node_modules/.bin/scimd serve >"$work/serve.log" 2>&1 &
serve_pid=$!
ready() { node -e "fetch('http://127.0.0.1:$port/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; }
for _ in $(seq 1 60); do ready && break; sleep 1; done
ready || { cat "$work/serve.log" >&2; exit 1; }
echo "scimd serve (the installed bin): ready on port $port"
kill "$serve_pid" && wait "$serve_pid" || true

cp "$repo/scripts/install-test/check.mjs" .
SCIMD_DATA_DIR="$work/embedded-data" node check.mjs
echo "install test passed"
