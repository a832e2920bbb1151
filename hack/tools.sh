#!/usr/bin/env bash
# Builds the real components of the local stack once, into a cache outside the
# checkout keyed by version, and links them into one directory: $FERRY_TOOLS_BIN.
# A warm cache costs seconds. Usage: hack/tools.sh   (prints the bin directory)
# hack/tools.sh flux also builds Flux's source-controller and kustomize-controller
# (make bench runs them as the peer) and links them, with their CRDs, beside the rest;
# hack/tools.sh argocd builds Argo CD (the other peer) and links it, with its CRDs;
# hack/tools.sh flux argocd builds both.
set -euo pipefail

TEMPORAL_VERSION=v1.5.1
KUBE_VERSION=v1.37.2
KUBE_STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.6.16
KWOK_VERSION=v0.8.0
# `ferry dev up --temporal cluster`: the Temporal server the CLI above embeds (its
# go.mod requires go.temporal.io/server v1.29.1) and the Web UI server it embeds.
TEMPORAL_SERVER_VERSION=v1.29.1
TEMPORAL_UI_VERSION=v2.42.1
# The newest releases whose go directive this machine's Go accepts without a
# toolchain switch (v1.10 needs Go 1.27).
FLUX_SOURCE_VERSION=v1.9.6
FLUX_KUSTOMIZE_VERSION=v1.9.6
# Module versions they require that the module proxy does not serve, each
# replaced by the nearest release it does serve (same minor version).
FLUX_SUBSTITUTES="github.com/fluxcd/pkg/artifact@v0.18.0"
# Argo CD, newest release. It needs Go 1.27: its build alone runs on the go1.27.3
# toolchain the module proxy serves (GOTOOLCHAIN); Ferry's module stays on this
# machine's Go. v3.5, the newest on Go 1.26, cannot be built from its module: it
# requires its gitops-engine at a pseudo-version the proxy does not serve.
ARGOCD_VERSION=v3.6.2
ARGOCD_GO=go1.27.3
# The helm and kustomize CLIs config-management plugins run (docs/operator-manual/plugins.md): the releases of the libraries go.mod requires
# (kustomize v5.8.2 is the CLI of sigs.k8s.io/kustomize/api v0.21.2).
HELM_VERSION=v3.22.0
KUSTOMIZE_VERSION=v5.8.2
# The OCI registry of the stack (ferry dev up, FERRY_OCI_REGISTRY): the CNCF
# distribution registry, newest release.
REGISTRY_VERSION=v3.1.2
# gVisor's runsc for the gvisor render sandbox (docs/operator-manual/sandbox.md,
# "Rendering in a sandbox"): a current one offers the systrap platform, much faster than
# ptrace, the only one of Debian's runsc (0.0~20221219). gVisor tags no module
# releases: this is a pseudo-version of its go branch. Workers started without
# the tools bin dir first on PATH run the runsc on PATH (.ci/run installs
# Debian's).
RUNSC_VERSION=v0.0.0-20260905035102-160fafc42237
# Dex, the OIDC provider of the stack (ferry dev up; ferry-server's SSO). Its
# v2 releases are not a /v2 module, so the module proxy serves none of their
# tags: this is the pseudo-version of the commit tagged v2.45.1 (DEX_RELEASE).
DEX_RELEASE=v2.45.1
DEX_VERSION=v0.0.0-20260303133905-11d2eeb52b42
# Mailpit, the SMTP server of the stack (ferry dev up, FERRY_SMTP_ADDR): the email
# notifications land in its mailbox, read through its HTTP API (FERRY_MAILPIT_URL).
# Pure Go (SQLite from modernc.org): about 1m40s on 2 cores, downloads included.
MAILPIT_VERSION=v1.33.1

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

# build_once DIR CMD...: runs CMD in a scratch module dir unless DIR/.done
# exists, in the background, TOOLS_JOBS (2) builds at a time: one build alone
# leaves a core idle about a quarter of its time (downloads, links), so two
# side by side finish sooner (built_all waits for them). A first build takes
# minutes per tool: it says which tool, how many of how many (count_todo), and
# every minute how long it has been building.
todo=0 done_n=0 start=$SECONDS
jobs_max=${TOOLS_JOBS:-2}
count_todo() { local d; for d in "$@"; do [ -f "$d/.done" ] || todo=$((todo + 1)); done; }
elapsed() { local s=$((SECONDS - $1)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
build_once() {
  [ -f "$1/.done" ] && return 0
  done_n=$((done_n + 1))
  while (($(jobs -rp | wc -l) >= jobs_max)); do wait -n || true; done
  build "$done_n" "$@" &
}
build() {
  local n=$1 dir=$2; shift 2
  local name t0=$SECONDS ticker
  name=$(basename "$dir")
  log "[$n/$todo] building $name (first time only; $(elapsed "$start") so far)"
  ( while sleep 60 >/dev/null 2>&1; do log "[$n/$todo] still building $name: $(elapsed "$t0")"; done ) &
  ticker=$!
  rm -rf "$dir"; mkdir -p "$dir/src"
  local status=0
  ( cd "$dir/src" && "$@" ) || status=$?
  kill "$ticker" 2>/dev/null; wait "$ticker" 2>/dev/null || true
  [ "$status" = 0 ] || { log "building $name failed (exit $status)"; exit "$status"; }
  touch "$dir/.done"
  log "[$n/$todo] built $name in $(elapsed "$t0")"
}
# built_all DIR...: waits for the builds, and fails unless each of DIR is built.
built_all() {
  wait
  local d failed=0
  for d in "$@"; do [ -f "$d/.done" ] || { log "$(basename "$d") was not built (its log is above)"; failed=1; }; done
  [ "$failed" = 0 ] || exit 1
}

temporal_build() {
  GOBIN=$PWD/.. go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_VERSION"
}

# The server's own main packages, built from its module as a release is: the
# services (one binary, --service per process), temporal-sql-tool, and the
# PostgreSQL schemas the tool applies.
temporal_server_build() {
  local mod=go.temporal.io/server
  GOBIN=$PWD go install "$mod/cmd/server@$TEMPORAL_SERVER_VERSION" "$mod/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
  mv server ../temporal-server
  mv sql ../temporal-sql-tool
  local dir
  dir=$(go mod download -json "$mod@$TEMPORAL_SERVER_VERSION" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
  mkdir -p ../schema
  cp -r "$dir/schema/postgresql" ../schema/
  chmod -R u+w ../schema
}

temporal_ui_build() {
  GOBIN=$PWD go install "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION"
  mv server ../temporal-ui-server
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

helm_build() {
  GOBIN=$PWD/.. go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

registry_build() {
  GOBIN=$PWD/.. go install "github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION"
}

kustomize_build() {
  GOBIN=$PWD/.. go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
}

# Dex's one replace (its ./api/v2) is, at this commit, the code of the api/v2
# release its go.mod requires, so the scratch module needs none. No cgo: the
# stack runs Dex on its memory storage, and sqlite3 is what would want cgo.
# The web templates and static files are embedded in the binary.
dex_build() {
  go mod init ferry-tools-dex >/dev/null 2>&1
  go get "github.com/dexidp/dex/cmd/dex@$DEX_VERSION"
  CGO_ENABLED=0 go build -ldflags "-X main.version=$DEX_RELEASE" -o ../dex github.com/dexidp/dex/cmd/dex
}

# Its web UI is embedded in the module as built files; the version is what
# `mailpit version` prints. The version check (a request to GitHub) stays off
# at run time (devenv starts it with --disable-version-check).
mailpit_build() {
  GOBIN=$PWD/.. CGO_ENABLED=0 go install -ldflags "-X github.com/axllent/mailpit/config.Version=$MAILPIT_VERSION" \
    "github.com/axllent/mailpit@$MAILPIT_VERSION"
}

runsc_build() {
  GOBIN=$PWD/.. CGO_ENABLED=0 go install "gvisor.dev/gvisor/runsc@$RUNSC_VERSION"
}

# Flux and Argo CD are built from a scratch module that requires the release. go
# install refuses a module with replace directives, and a dependency's replaces do
# not apply, so the scratch module carries them (module_dir, replaces_of). go build
# -mod=mod resolves only what the binary imports: go mod tidy would also want the
# modules of their tests, not all of them served.
module_dir() { go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'; }
replaces_of() {
  awk '{ sub(/\/\/.*/, "") }
    /^replace \(/ { block = 1; next }
    block && /^\)/ { block = 0; next }
    block && /=>/ { print "replace " $0; next }
    /^replace .*=>/ { print }' "$1"
}

# flux_build CONTROLLER VERSION: builds github.com/fluxcd/CONTROLLER's main package;
# the controller's ./api becomes its api module at the same version.
flux_build() {
  local ctrl=$1 version=$2 mod=github.com/fluxcd/$1
  go mod init "ferry-tools-$ctrl" >/dev/null 2>&1
  local dir
  dir=$(module_dir "$mod@$version")
  {
    echo "require $mod $version"
    replaces_of "$dir/go.mod" | sed "s#=>[[:space:]]*\./api[[:space:]]*\$#=> $mod/api $version#"
    for s in $FLUX_SUBSTITUTES; do echo "replace ${s%@*} => ${s%@*} ${s#*@}"; done
  } >> go.mod
  go build -mod=mod -o "../$ctrl" "$mod"
  mkdir -p ../crds
  cp "$dir"/config/crd/bases/*.yaml ../crds/
  chmod -R u+w ../crds
}

# argocd_build: Argo CD is one binary that runs as the command its name says
# (cmd/main.go: argocd-application-controller, argocd-repo-server,
# argocd-applicationset-controller, argocd-server…); its ./gitops-engine becomes
# that module's release of the same version. The UI's files are not built: the
# API server serves the API (and webhooks) only.
argocd_build() {
  export GOTOOLCHAIN=$ARGOCD_GO
  local mod=github.com/argoproj/argo-cd/v3 dir
  go mod init ferry-tools-argocd >/dev/null 2>&1
  dir=$(module_dir "$mod@$ARGOCD_VERSION")
  {
    echo "require $mod $ARGOCD_VERSION"
    replaces_of "$dir/go.mod" |
      sed "s#=>[[:space:]]*\./gitops-engine[[:space:]]*\$#=> github.com/argoproj/argo-cd/gitops-engine/v3 $ARGOCD_VERSION#"
  } >> go.mod
  go build -mod=mod -o ../argocd "$mod/cmd"
  for c in argocd-application-controller argocd-repo-server argocd-applicationset-controller argocd-server; do
    ln -sfn argocd "../$c"
  done
  # The repo server runs these as its image has them, on PATH.
  cp "$dir"/hack/git-verify-wrapper.sh "$dir"/hack/gpg-wrapper.sh ..
  chmod 755 ../git-verify-wrapper.sh ../gpg-wrapper.sh # module files are 0444
  mkdir -p ../crds
  cp "$dir"/manifests/crds/*-crd.yaml ../crds/
  chmod -R u+w ../crds
}

stack=("$cache/temporal-$TEMPORAL_VERSION" "$cache/temporal-server-$TEMPORAL_SERVER_VERSION"
  "$cache/temporal-ui-$TEMPORAL_UI_VERSION" "$cache/kwok-$KWOK_VERSION" "$cache/etcd-$ETCD_VERSION"
  "$cache/kube-$KUBE_VERSION" "$cache/helm-$HELM_VERSION" "$cache/kustomize-$KUSTOMIZE_VERSION"
  "$cache/registry-$REGISTRY_VERSION" "$cache/runsc-$RUNSC_VERSION" "$cache/dex-$DEX_VERSION"
  "$cache/mailpit-$MAILPIT_VERSION")
count_todo "${stack[@]}"
# The longest first (a cold build of all on 2 cores took 40 minutes one at a
# time: kube 12, temporal 10, temporal-server 4, kwok and helm near 3 each).
build_once "$cache/kube-$KUBE_VERSION" kube_build
build_once "$cache/temporal-$TEMPORAL_VERSION" temporal_build
build_once "$cache/temporal-server-$TEMPORAL_SERVER_VERSION" temporal_server_build
build_once "$cache/kwok-$KWOK_VERSION" kwok_build
build_once "$cache/helm-$HELM_VERSION" helm_build
build_once "$cache/registry-$REGISTRY_VERSION" registry_build
build_once "$cache/runsc-$RUNSC_VERSION" runsc_build
build_once "$cache/dex-$DEX_VERSION" dex_build
build_once "$cache/etcd-$ETCD_VERSION" etcd_build
build_once "$cache/mailpit-$MAILPIT_VERSION" mailpit_build
build_once "$cache/temporal-ui-$TEMPORAL_UI_VERSION" temporal_ui_build
build_once "$cache/kustomize-$KUSTOMIZE_VERSION" kustomize_build
built_all "${stack[@]}"

link() { ln -sfn "$1" "$bin/$(basename "$1")"; }
link "$cache/temporal-$TEMPORAL_VERSION/temporal"
for c in temporal-server temporal-sql-tool; do link "$cache/temporal-server-$TEMPORAL_SERVER_VERSION/$c"; done
ln -sfn "$cache/temporal-server-$TEMPORAL_SERVER_VERSION/schema" "$bin/temporal-schema"
link "$cache/temporal-ui-$TEMPORAL_UI_VERSION/temporal-ui-server"
link "$cache/kwok-$KWOK_VERSION/kwok"
ln -sfn "$cache/kwok-$KWOK_VERSION/stage" "$bin/kwok-stage"
link "$cache/etcd-$ETCD_VERSION/etcd"
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do link "$cache/kube-$KUBE_VERSION/$c"; done
link "$cache/helm-$HELM_VERSION/helm"
link "$cache/kustomize-$KUSTOMIZE_VERSION/kustomize"
link "$cache/registry-$REGISTRY_VERSION/registry"
link "$cache/runsc-$RUNSC_VERSION/runsc"
link "$cache/dex-$DEX_VERSION/dex"
link "$cache/mailpit-$MAILPIT_VERSION/mailpit"
# The peers to build too: hack/tools.sh [flux] [argocd].
peers=" $* "
if [[ $peers == *" flux "* ]]; then
  # The Flux build takes minutes: let the tests' hack/tools.sh go on meanwhile.
  exec 9>&-
  exec 8>"$cache/.lock-flux"
  if ! flock -n 8; then
    log "waiting for another hack/tools.sh flux to finish"
    flock 8
  fi
  todo=0 done_n=0
  count_todo "$cache/source-controller-$FLUX_SOURCE_VERSION" "$cache/kustomize-controller-$FLUX_KUSTOMIZE_VERSION"
  build_once "$cache/source-controller-$FLUX_SOURCE_VERSION" flux_build source-controller "$FLUX_SOURCE_VERSION"
  build_once "$cache/kustomize-controller-$FLUX_KUSTOMIZE_VERSION" flux_build kustomize-controller "$FLUX_KUSTOMIZE_VERSION"
  built_all "$cache/source-controller-$FLUX_SOURCE_VERSION" "$cache/kustomize-controller-$FLUX_KUSTOMIZE_VERSION"
  link "$cache/source-controller-$FLUX_SOURCE_VERSION/source-controller"
  link "$cache/kustomize-controller-$FLUX_KUSTOMIZE_VERSION/kustomize-controller"
  ln -sfn "$cache/source-controller-$FLUX_SOURCE_VERSION/crds" "$bin/flux-source-crds"
  ln -sfn "$cache/kustomize-controller-$FLUX_KUSTOMIZE_VERSION/crds" "$bin/flux-kustomize-crds"
fi
if [[ $peers == *" argocd "* ]]; then
  # As Flux's: minutes, and the tests' hack/tools.sh go on meanwhile.
  exec 9>&-
  exec 8>"$cache/.lock-argocd"
  if ! flock -n 8; then
    log "waiting for another hack/tools.sh argocd to finish"
    flock 8
  fi
  todo=0 done_n=0
  count_todo "$cache/argocd-$ARGOCD_VERSION"
  build_once "$cache/argocd-$ARGOCD_VERSION" argocd_build
  built_all "$cache/argocd-$ARGOCD_VERSION"
  for c in argocd argocd-application-controller argocd-repo-server argocd-applicationset-controller argocd-server \
    git-verify-wrapper.sh gpg-wrapper.sh; do
    link "$cache/argocd-$ARGOCD_VERSION/$c"
  done
  ln -sfn "$cache/argocd-$ARGOCD_VERSION/crds" "$bin/argocd-crds"
fi
for c in redis-server git; do
  command -v "$c" >/dev/null || { log "$c is missing: install it (apt-get install -y redis-server git)"; exit 1; }
done
# Workers render in a sandbox (docs/operator-manual/sandbox.md): gVisor, or bwrap.
if ! command -v runsc >/dev/null && ! command -v bwrap >/dev/null; then
  log "no render sandbox: install gVisor's runsc, or bubblewrap (apt-get install -y runsc bubblewrap)"; exit 1
fi
echo "$bin"
