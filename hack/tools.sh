#!/usr/bin/env bash
# Builds the real components of the local stack once, into a cache outside the
# checkout keyed by version, and links them into one directory: $FERRY_TOOLS_BIN.
# A warm cache costs seconds. Usage: hack/tools.sh   (prints the bin directory)
set -euo pipefail

TEMPORAL_VERSION=v1.5.1
KUBE_VERSION=v1.37.2
KUBE_STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0

cache=${FERRY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry}/tools
bin=$cache/bin
mkdir -p "$cache" "$bin"
log() { echo "tools: $*" >&2; }

# One build at a time: test packages run in parallel and each may call this.
exec 9>"$cache/.lock"
if ! flock -n 9; then
  log "waiting for another hack/tools.sh to finish"
  flock 9
fi

# build_once DIR CMD...: runs CMD in a scratch module dir unless DIR/.done exists.
build_once() {
  local dir=$1; shift
  [ -f "$dir/.done" ] && return 0
  log "building $(basename "$dir") (first time only)"
  rm -rf "$dir"; mkdir -p "$dir/src"
  ( cd "$dir/src" && "$@" )
  touch "$dir/.done"
}

temporal_build() {
  GOBIN=$PWD/.. go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_VERSION"
}

kwok_build() {
  GOBIN=$PWD/.. go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  go mod init ferry-tools-kwok >/dev/null 2>&1
  local mod
  mod=$(go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p ../stage
  cp -r "$mod/kustomize/stage/." ../stage/
  chmod -R u+w ../stage
}

etcd_build() {
  go mod init ferry-tools-etcd >/dev/null 2>&1
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  go build -o ../etcd go.etcd.io/etcd/server/v3
}

kube_build() {
  go mod init ferry-tools-kube >/dev/null 2>&1
  local mod
  mod=$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  # Every staging module k8s.io/kubernetes replaces with ./staging/... gets its release.
  local staging
  staging=$(sed -n '/^replace (/,/^)/p' "$mod/go.mod" | awk '$1 ~ /^k8s.io\// && $2 == "=>" {print $1}')
  {
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    for m in $staging; do echo "replace $m => $m $KUBE_STAGING_VERSION"; done
  } >> go.mod
  cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
GO
  go mod tidy
  for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
    go build -o "../$c" "k8s.io/kubernetes/cmd/$c"
  done
}

build_once "$cache/temporal-$TEMPORAL_VERSION" temporal_build
build_once "$cache/kwok-$KWOK_VERSION" kwok_build
build_once "$cache/etcd-$ETCD_VERSION" etcd_build
build_once "$cache/kube-$KUBE_VERSION" kube_build

link() { ln -sfn "$1" "$bin/$(basename "$1")"; }
link "$cache/temporal-$TEMPORAL_VERSION/temporal"
link "$cache/kwok-$KWOK_VERSION/kwok"
ln -sfn "$cache/kwok-$KWOK_VERSION/stage" "$bin/kwok-stage"
link "$cache/etcd-$ETCD_VERSION/etcd"
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do link "$cache/kube-$KUBE_VERSION/$c"; done
for c in redis-server git; do
  command -v "$c" >/dev/null || { log "$c is missing: install it (apt-get install -y redis-server git)"; exit 1; }
done
echo "$bin"
