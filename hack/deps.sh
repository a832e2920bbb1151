#!/usr/bin/env bash
# The Debian packages `make run` and `make test` need, installed when missing:
# as root directly; otherwise the one command to run is printed, and the make
# stops before it builds anything. Usage: hack/deps.sh run|test|bench
set -euo pipefail

# command-or-file package: what the stack runs, and the package that brings it.
need=(
  git:git
  redis-server:redis-server   # the render cache, and the webhook's dedupe
  make:make
  gcc:gcc                     # cgo of the race detector and of some tests
  runsc:runsc                 # the gVisor render sandbox (tools.sh builds a newer one)
  bwrap:bubblewrap            # the process render sandbox
)
# make test's second pass runs on a Temporal cluster, on PostgreSQL.
[ "${1:-}" = test ] && need+=('/usr/lib/postgresql/*/bin/initdb:postgresql')
# make test drives the web UI in a real browser (e2e/ui), as make bench's ui
# scenario measures it.
[[ "${1:-}" =~ ^(test|bench)$ ]] && need+=(chromium:chromium)

missing=()
for n in "${need[@]}"; do
  what=${n%%:*} pkg=${n#*:}
  if [[ $what == /* ]]; then
    compgen -G "$what" >/dev/null && continue
  else
    command -v "$what" >/dev/null && continue
  fi
  missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$EUID" != 0 ]; then
  echo "ferry: missing Debian packages: ${missing[*]}. Install them, then run make again:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 2
fi
echo "ferry: installing the missing Debian packages: ${missing[*]}" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
