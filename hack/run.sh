#!/usr/bin/env bash
# `make run`: the local stack (ferry dev up), one worker serving the control
# queue and every region, and a demo app synced to all regions. Ctrl-C stops
# all. If a part dies, it says which, prints the end of its log and exits 1.
#
# FERRY_RUN_DIR      state (default ~/.local/state/ferry/run); reused by the next run
# FERRY_REGIONS      regions (default us-east-1,eu-west-1,ap-south-1)
# FERRY_METRICS_PORT the worker's /metrics port (default 9090; the next free one if taken)
# FERRY_WEBHOOK_PORT the worker's webhook port (default 9091; the next free one if taken)
# FERRY_BIN          directory of ferry, ferry-worker and ferry-server (default bin/ of the checkout)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${FERRY_RUN_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/ferry/run}
state=$base/stack   # ferry dev up's state dir: it owns (and wipes) it, except its git/ repos
regions=${FERRY_REGIONS:-us-east-1,eu-west-1,ap-south-1}
bin=${FERRY_BIN:-$root/bin}   # ferry and ferry-worker (make build)
mkdir -p "$base"
rm -f "$state/env"
export FERRY_TOOLS_BIN=${FERRY_TOOLS_BIN:-$("$root/hack/tools.sh")}

# The parts that run until the end, in start order: name, pid, log.
names=() pids=() logs=()
work="" apply_pid=""

# stop_part I: SIGTERM, then SIGKILL once it has had GRACE seconds.
stop_part() {
  local pid=${pids[$1]} grace=$2
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((t = 0; t < grace * 10; t++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "ferry: ${names[$1]} (pid $pid) still runs after ${grace}s: killing it" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}

# cleanup runs on every exit: the worker first, then the stack (which stops
# every process it started).
cleanup() {
  local status=$?
  set +e
  trap '' INT TERM   # a second Ctrl-C must not cut the stop short
  [ -n "$apply_pid" ] && kill -TERM "$apply_pid" 2>/dev/null
  [ -n "$work" ] && rm -rf "$work"
  if ((${#pids[@]})); then echo; echo "stopping…"; fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    if [ "${names[$i]}" = ferry-worker ]; then stop_part "$i" 30; else stop_part "$i" 60; fi
  done
  exit "$status"
}
trap cleanup EXIT
trap 'exit 0' INT TERM   # a stop asked for is a clean end

# check_parts exits when a part has ended: 0 when it was stopped (the parts
# exit 0 only when a signal asked them to, as Ctrl-C does), else 1 with the
# end of its log.
check_parts() {
  local i status
  for i in "${!pids[@]}"; do
    kill -0 "${pids[$i]}" 2>/dev/null && continue
    status=0
    wait "${pids[$i]}" || status=$?
    if [ "$status" = 0 ]; then
      echo "${names[$i]} was stopped"
      exit 0
    fi
    {
      echo "ferry: ${names[$i]} exited (status $status); the end of its log ${logs[$i]}:"
      tail -n 30 "${logs[$i]}" | sed 's/^/  /'
    } >&2
    exit 1
  done
}

# watch PID: waits for PID (a step in the background) while checking the
# parts, and returns its status.
watch() {
  while kill -0 "$1" 2>/dev/null; do
    check_parts
    sleep 0.2
  done
  check_parts
  wait "$1"
}

start_part() { # start_part NAME LOG COMMAND...
  local name=$1 log=$2
  shift 2
  # Emptied here, not only by the background redirect: what waits for a
  # line of LOG must never read the last run's.
  : >"$log"
  "$@" >"$log" 2>&1 &
  names+=("$name") pids+=($!) logs+=("$log")
}

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port WANT [NOT]: WANT if no one listens on it, else the next free
# port above it (never NOT).
free_port() {
  local p=$1
  while port_taken "$p" || [ "$p" = "${2:-}" ]; do
    p=$((p + 1))
    if ((p > $1 + 200)); then
      echo "ferry: no free port in $1-$p: set FERRY_METRICS_PORT and FERRY_WEBHOOK_PORT" >&2
      return 1
    fi
  done
  echo "$p"
}

# healthz PORT: GET /healthz answers 200.
healthz() {
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
    read -r -t 2 line <&3 && [[ $line == *" 200 "* ]]
  ) 2>/dev/null
}

echo "starting the local stack (log: $base/dev-up.log)…"
start_part "ferry dev up" "$base/dev-up.log" "$bin/ferry" dev up --regions "$regions" --state-dir "$state"
until [ -f "$state/env" ]; do
  check_parts
  sleep 0.2
done
# shellcheck disable=SC1091
. "$state/env"

# A webhook secret for the demo, shared by the GitHub, GitLab and Gitea forms.
secret=${FERRY_WEBHOOK_GITHUB_SECRET:-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')}
export FERRY_WEBHOOK_GITHUB_SECRET=$secret FERRY_WEBHOOK_GITLAB_SECRET=$secret FERRY_WEBHOOK_GITEA_SECRET=$secret
want_metrics=${FERRY_METRICS_PORT:-9090} want_webhook=${FERRY_WEBHOOK_PORT:-9091}
metrics_port=$(free_port "$want_metrics" "$want_webhook")
webhook_port=$(free_port "$want_webhook" "$metrics_port")
[ "$metrics_port" = "$want_metrics" ] || echo "metrics port $want_metrics is taken: using $metrics_port"
[ "$webhook_port" = "$want_webhook" ] || echo "webhook port $want_webhook is taken: using $webhook_port"
metrics_addr=127.0.0.1:$metrics_port webhook_addr=127.0.0.1:$webhook_port

# ferry-server's address, that the workflows' details in the Temporal Web
# UI link each app to.
server_listen=${FERRY_SERVER_LISTEN:-127.0.0.1:8080}
region_flags=()
for r in ${regions//,/ }; do region_flags+=(--region "$r"); done
echo "starting ferry-worker (log: $base/worker.log)…"
start_part ferry-worker "$base/worker.log" "$bin/ferry-worker" --control "${region_flags[@]}" --regions "$regions" \
  --regions-config "$FERRY_REGIONS_CONFIG" --temporal-address "$TEMPORAL_ADDRESS" --redis-addr "$REDIS_ADDR" --kubeconfig "$KUBECONFIG" \
  --cache-dir "$base/repos" --metrics-addr "$metrics_addr" --webhook-addr "$webhook_addr" --ui-url "https://$server_listen"
# /healthz answers once the worker polls its task queues.
for ((t = 0; ; t++)); do
  check_parts
  healthz "$metrics_port" && break
  if ((t > 600)); then
    echo "ferry: ferry-worker did not answer http://$metrics_addr/healthz within 2 minutes; the end of its log:" >&2
    tail -n 30 "$base/worker.log" | sed 's/^/  /' >&2
    exit 1
  fi
  sleep 0.2
done

# ferry-server, the front door, on the address the stack keeps for it
# (its OIDC provider, Dex, redirects there). It makes the admin's first
# password and keeps it in argocd-initial-admin-secret, as Argo CD does.
echo "starting ferry-server (log: $base/server.log)…"
start_part ferry-server "$base/server.log" "$bin/ferry-server" --listen "$server_listen" --temporal-address "$TEMPORAL_ADDRESS" \
  --kubeconfig "$KUBECONFIG" --control-context "$FERRY_CONTROL_CONTEXT" --control-namespace "$FERRY_CONTROL_NAMESPACE" \
  --regions "$regions" --regions-config "$FERRY_REGIONS_CONFIG" --temporal-ui-url "$TEMPORAL_UI_URL" --audit-log "$base/audit.jsonl"
for ((t = 0; ; t++)); do
  check_parts
  grep -q '^ferry-server https://' "$base/server.log" 2>/dev/null && break
  if ((t > 600)); then
    echo "ferry-server did not start within 2 minutes; the end of its log:" >&2
    tail -n 30 "$base/server.log" | sed 's/^/  /' >&2
    exit 1
  fi
  sleep 0.2
done
fingerprint=$(sed -n 's/^ferry-server .*(certificate SHA-256 \(.*\))$/\1/p' "$base/server.log")
kc=(kubectl --kubeconfig "$KUBECONFIG" --context "$FERRY_CONTROL_CONTEXT" -n "$FERRY_CONTROL_NAMESPACE")
admin_password=$("${kc[@]}" get secret argocd-initial-admin-secret -o 'jsonpath={.data.password}' | base64 -d)
# SSO through the stack's Dex (users alice and bob), as argocd-cm's oidc.config says.
if [ -n "${FERRY_OIDC_ISSUER:-}" ]; then
  "${kc[@]}" patch secret argocd-secret --type merge -p "{\"stringData\":{\"oidc.dex.clientSecret\":\"$FERRY_OIDC_CLIENT_SECRET\"}}" >/dev/null
  "${kc[@]}" apply -f - >/dev/null <<CM
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm}
data:
  url: https://$server_listen
  oidc.config: |
    name: Dex
    issuer: $FERRY_OIDC_ISSUER
    clientID: $FERRY_OIDC_CLIENT_ID
    clientSecret: \$oidc.dex.clientSecret
CM
fi

# The demo repo: a few Deployments, Services and ConfigMaps, pushed to the
# local Git server, which creates the repo on the first push and keeps it
# for the next run (HEAD names main, as on a hosted Git server).
# Cloned only when the server has it: a clone that fails leaves its HTTP
# helper behind, an orphan for the host's init to reap.
work=$(mktemp -d)
demo=$work/demo
if [ -d "$state/git/demo.git" ]; then
  git clone -q "$FERRY_GIT_URL/demo.git" "$demo"
else
  git -c init.defaultBranch=main init -q "$demo"
fi
rm -rf "$demo/manifests" && cp -r "$root/hack/demo/manifests" "$demo/manifests"
git -C "$demo" add -A
if ! git -C "$demo" diff --cached --quiet 2>/dev/null || ! git -C "$demo" rev-parse -q --verify HEAD >/dev/null; then
  git -C "$demo" -c user.name=ferry -c user.email=demo@ferry.invalid commit -q -m "demo app"
fi
git -C "$demo" push -q "$FERRY_GIT_URL/demo.git" HEAD:refs/heads/main
rm -rf "$work"
work=""

sed -e "s#REPO_URL#$FERRY_GIT_URL/demo.git#" -e "s#REGIONS_YAML#$(for r in ${regions//,/ }; do printf '    - {name: %s, namespace: demo}\\n' "$r"; done)#" \
  "$root/hack/demo/app.yaml" >"$base/demo-app.yaml"
FERRY_CONFIG="$base/cli-not-logged-in.json" "$bin/ferry" app apply -f "$base/demo-app.yaml" &
apply_pid=$!
watch "$apply_pid"
apply_pid=""

cat <<MSG

Ferry is running.
  Temporal Web UI   $TEMPORAL_UI_URL  (workflow app/demo)
  Temporal          $TEMPORAL_ADDRESS
  metrics           http://$metrics_addr/metrics
  webhook           http://$webhook_addr/api/webhook  (secret $secret)
  Git server        $FERRY_GIT_URL/demo.git
  ferry-server      https://$server_listen  (certificate SHA-256 $fingerprint)
                    admin password $admin_password; SSO at https://$server_listen/auth/login (Dex: alice@example.com / alice-password)
  audit log         $base/audit.jsonl
  logs              $state/logs/, $base/dev-up.log and $base/worker.log

Try, in another shell:
  . $state/env
  $bin/ferry app get demo
  echo "$admin_password" | $bin/ferry login $server_listen --username admin --password-stdin --insecure
  $bin/ferry app wait demo --timeout 2m
  kubectl --context ${regions%%,*} -n demo get deploy,svc,cm

Ctrl-C stops everything.
MSG
while :; do
  check_parts
  sleep 1 &
  wait $! || true
done
