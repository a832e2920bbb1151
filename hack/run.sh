#!/usr/bin/env bash
# `make run`: the local stack (ferry dev up), one worker serving the control
# queue and every region, and a demo app synced to all regions. Ctrl-C stops all.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base=${FERRY_RUN_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/ferry/run}
state=$base/stack   # ferry dev up's state dir: it owns (and wipes) it
regions=${FERRY_REGIONS:-us-east-1,eu-west-1,ap-south-1}
mkdir -p "$base"
rm -f "$state/env"
export FERRY_TOOLS_BIN=${FERRY_TOOLS_BIN:-$("$root/hack/tools.sh")}

pids=()
cleanup() {
  trap - INT TERM EXIT
  echo; echo "stopping…"
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

"$root/bin/ferry" dev up --regions "$regions" --state-dir "$state" >"$base/dev-up.log" 2>&1 &
pids+=($!)
echo "starting the local stack (log: $base/dev-up.log)…"
until [ -f "$state/env" ]; do
  kill -0 "${pids[0]}" 2>/dev/null || { cat "$base/dev-up.log"; exit 1; }
  sleep 0.5
done
# shellcheck disable=SC1091
. "$state/env"

# A webhook secret for the demo, shared by the GitHub, GitLab and Gitea forms.
secret=${FERRY_WEBHOOK_GITHUB_SECRET:-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')}
export FERRY_WEBHOOK_GITHUB_SECRET=$secret FERRY_WEBHOOK_GITLAB_SECRET=$secret FERRY_WEBHOOK_GITEA_SECRET=$secret
metrics_addr=127.0.0.1:${FERRY_METRICS_PORT:-9090}
webhook_addr=127.0.0.1:${FERRY_WEBHOOK_PORT:-9091}
region_flags=()
for r in ${regions//,/ }; do region_flags+=(--region "$r"); done
"$root/bin/ferry-worker" --control "${region_flags[@]}" --regions "$regions" \
  --temporal-address "$TEMPORAL_ADDRESS" --redis-addr "$REDIS_ADDR" --kubeconfig "$KUBECONFIG" \
  --cache-dir "$base/repos" --metrics-addr "$metrics_addr" --webhook-addr "$webhook_addr" \
  >"$base/worker.log" 2>&1 &
pids+=($!)

# The demo repo: a few Deployments, Services and ConfigMaps, pushed to the local Git server.
repo=$state/git/demo.git
if [ ! -d "$repo" ]; then
  git init -q --bare "$repo"
  git -C "$repo" config http.receivepack true
fi
work=$(mktemp -d)
git clone -q "$FERRY_GIT_URL/demo.git" "$work/demo" 2>/dev/null || git init -q "$work/demo"
rm -rf "$work/demo/manifests" && cp -r "$root/hack/demo/manifests" "$work/demo/manifests"
git -C "$work/demo" add -A
git -C "$work/demo" -c user.name=ferry -c user.email=demo@ferry.invalid commit -q -m "demo app" 2>/dev/null || true
git -C "$work/demo" push -q "$FERRY_GIT_URL/demo.git" HEAD:refs/heads/main
rm -rf "$work"

sed -e "s#REPO_URL#$FERRY_GIT_URL/demo.git#" -e "s#REGIONS_YAML#$(for r in ${regions//,/ }; do printf '    - {name: %s, namespace: demo}\\n' "$r"; done)#" \
  "$root/hack/demo/app.yaml" > "$base/demo-app.yaml"
"$root/bin/ferry" app apply -f "$base/demo-app.yaml"

cat <<MSG

Ferry is running.
  Temporal Web UI   $TEMPORAL_UI_URL  (workflow app/demo)
  Temporal          $TEMPORAL_ADDRESS
  metrics           http://$metrics_addr/metrics
  webhook           http://$webhook_addr/api/webhook  (secret $secret)
  Git server        $FERRY_GIT_URL/demo.git
  logs              $state/logs/ and $base/worker.log

Try, in another shell:
  . $state/env
  $root/bin/ferry app get demo
  $root/bin/ferry app wait demo --timeout 2m
  kubectl --context ${regions%%,*} -n demo get deploy,svc,cm

Ctrl-C stops everything.
MSG
wait "${pids[0]}"
