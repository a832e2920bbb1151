#!/usr/bin/env bash
# Fetches the web UI's two libraries from the npm registry and writes their
# browser builds to server/ui/vendor, committed: the UI needs no Node.js to
# build or run. hooks.mjs imports "preact"; it is rewritten to the file
# beside it, so that the browser needs no import map.
# Usage: hack/vendor-ui.sh (after changing a version below)
set -euo pipefail
preact=11.2.0
htm=3.1.1

out=$(cd "$(dirname "$0")/.." && pwd)/server/ui/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent "preact@$preact" "htm@$htm" >/dev/null
mkdir preact htm
tar xzf "preact-$preact.tgz" -C preact --strip-components 1
tar xzf "htm-$htm.tgz" -C htm --strip-components 1
mkdir -p "$out"
cp preact/dist/preact.mjs "$out/preact.mjs"
sed 's/from"preact"/from"\.\/preact\.mjs"/g' preact/hooks/dist/hooks.mjs >"$out/hooks.mjs"
cp htm/dist/htm.mjs "$out/htm.mjs"
{
  echo "preact $preact (https://preactjs.com), htm $htm (https://github.com/developit/htm): preact is MIT licensed, htm Apache 2.0."
  echo
  echo "--- preact:"
  cat preact/LICENSE
  echo
  echo "--- htm:"
  cat htm/LICENSE
} >"$out/LICENSE"
grep -q 'from"\./preact\.mjs"' "$out/hooks.mjs" || { echo "hooks.mjs: its import of preact was not rewritten" >&2; exit 1; }
echo "server/ui/vendor: preact $preact, htm $htm"
