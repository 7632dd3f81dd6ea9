#!/usr/bin/env bash
# A throwaway Kubernetes control plane for the chart's install tests (test/cluster.test.ts) and for
# trying the chart by hand (`make cluster`): etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler on loopback ports, with certificates made for it, and kwok standing in for the
# kubelets of a few fake nodes (pods are scheduled and become Running and Ready, Jobs' pods
# complete; no image is pulled or run, and nothing enforces NetworkPolicies). docs/development.md,
# "A Kubernetes control plane for the chart".
#
#   scripts/cluster.sh build        builds the binaries once into the cache (keyed by version)
#   scripts/cluster.sh start DIR    starts a control plane in DIR (empty or absent), prints how to use it
#   scripts/cluster.sh stop DIR     stops the one in DIR by its own pids and removes DIR
#
# The binaries come from the Go module proxy, built like helm and MinIO (Makefile) into a cache
# outside the clone that every clone and worktree reuses: Kubernetes' from the wrapper module
# scripts/cluster/kube (k8s.io/kubernetes with its staging modules replaced by their published
# versions), etcd's from scripts/cluster/etcd, kwok with `go install`. Their go.sum files pin them.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

kube_version=$(sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' scripts/cluster/kube/go.mod)
etcd_version=$(sed -n 's/^require go.etcd.io\/etcd\/server\/v3 \(v[0-9.]*\)$/\1/p' scripts/cluster/etcd/go.mod)
kwok_version=v0.8.0
cache=${XDG_CACHE_HOME:-$HOME/.cache}/testrun
kube_dir=$cache/kube/$kube_version
etcd_bin=$cache/etcd/$etcd_version/etcd
kwok_bin=$cache/kwok/$kwok_version/kwok
kube_commands=(kube-apiserver kube-controller-manager kube-scheduler)
# kind's ranges, the ones test/fixtures/chart-cluster-ranges.yaml gives the chart.
pod_cidr=10.244.0.0/16
service_cidr=10.96.0.0/12
node_count=${CLUSTER_NODES:-3}

die() {
  echo "scripts/cluster.sh: $*" >&2
  exit 1
}

binaries_present() {
  local command
  for command in "${kube_commands[@]}"; do [ -x "$kube_dir/$command" ] || return 1; done
  [ -x "$etcd_bin" ] && [ -x "$kwok_bin" ]
}

# Each build under its own lock (a build under way elsewhere is waited for, not done twice), into a
# temporary name first, so that a killed build leaves nothing that looks built. nice: these are
# minutes of every core, beside whatever else the machine does.
build() {
  command -v go >/dev/null || die "go is missing: scripts/install-prerequisites.sh installs it"
  export GOTOOLCHAIN=auto
  mkdir -p "$kube_dir" "$(dirname "$etcd_bin")" "$(dirname "$kwok_bin")"
  (
    flock 9
    if ! [ -x "$kube_dir/kube-apiserver" ] || ! [ -x "$kube_dir/kube-controller-manager" ] ||
      ! [ -x "$kube_dir/kube-scheduler" ]; then
      local minor=${kube_version#v1.}
      minor=${minor%%.*}
      # Without its version a kube-apiserver reports v0.0.0-master, which helm's kubeVersion check refuses.
      local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$kube_version"
      ldflags+=" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
      rm -rf "$kube_dir/.build"
      # One go build of the three: they share most of their packages, compiled once.
      (cd scripts/cluster/kube && nice -n 19 go build -trimpath -ldflags "$ldflags" -o "$kube_dir/.build/" \
        "${kube_commands[@]/#/k8s.io/kubernetes/cmd/}")
      mv "$kube_dir"/.build/* "$kube_dir/" && rmdir "$kube_dir/.build"
    fi
  ) 9>"$kube_dir.lock"
  (
    flock 9
    if ! [ -x "$etcd_bin" ]; then
      (cd scripts/cluster/etcd && nice -n 19 go build -trimpath -ldflags "-s -w" -o "$etcd_bin.build" .)
      mv "$etcd_bin.build" "$etcd_bin"
    fi
  ) 9>"$(dirname "$etcd_bin").lock"
  (
    flock 9
    if ! [ -x "$kwok_bin" ]; then
      # kwok's go.mod has no replace directives: go install builds it as released.
      rm -rf "$kwok_bin.build" && mkdir -p "$kwok_bin.build"
      GOBIN=$kwok_bin.build nice -n 19 go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
      mv "$kwok_bin.build/kwok" "$kwok_bin" && rmdir "$kwok_bin.build"
    fi
  ) 9>"$(dirname "$kwok_bin").lock"
}

# A loopback TCP port no socket uses (and not handed out already by this script), below the kernel's
# ephemeral range: a port from that range can be taken by any outgoing connection (or any test
# server bound to port 0) between this choice and the component's bind, which once failed CI with
# "address already in use".
taken_ports=" "
ephemeral_start=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
free_port() {
  local port
  while :; do
    port=$((10000 + RANDOM % (ephemeral_start - 10000)))
    [[ $taken_ports == *" $port "* ]] && continue
    [ -z "$(ss -Htan "sport = :$port")" ] || continue
    taken_ports+="$port "
    echo "$port"
    return
  done
}

# Starts a command detached (its own session: the caller's signals and exit leave it running) with
# its log in DIR/logs and its pid in DIR/pids, in start order (stop goes the other way).
launch() {
  local name=$1
  shift
  setsid "$@" >"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/pids/$(ls "$dir/pids" | wc -l | xargs printf %02d)-$name"
}

api() {
  # Not curl's own user agent: the API server pretty-prints JSON for it.
  curl --silent --show-error --fail-with-body --user-agent testrun-cluster --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" \
    --key "$dir/pki/admin.key" "$@"
}

# Waits up to $2 seconds for `$1` (a shell condition) to hold, failing with the named log's tail,
# and at once when the named component has exited (it will not come up then).
wait_for() {
  local condition=$1 seconds=$2 log=$3 waited=0 pid_file
  pid_file=$(ls "$dir"/pids/*-"$log" 2>/dev/null | head -n 1)
  until eval "$condition"; do
    local exited=
    [ -n "$pid_file" ] && ! kill -0 "$(cat "$pid_file")" 2>/dev/null && exited=1
    if [ -n "$exited" ] || [ $waited -ge $((seconds * 5)) ]; then
      [ -n "$exited" ] && echo "$log exited" >&2
      echo "--- $dir/logs/$log.log (last lines)" >&2
      tail -n 20 "$dir/logs/$log.log" >&2 || true
      stop_processes
      die "$log did not come up within ${seconds}s: $condition"
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
}

# Certificates made for this control plane alone: a CA, the API server's serving certificate for
# 127.0.0.1 and localhost, one client certificate in system:masters (the kubeconfig's, shared by the
# controller manager, the scheduler and kwok), and the service-account signing key pair.
make_certificates() {
  local pki=$dir/pki
  mkdir -p "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=testrun-cluster-ca" \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout "$pki/apiserver.key" \
    -out "$pki/apiserver.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' \
    >"$pki/apiserver.ext"
  openssl x509 -req -in "$pki/apiserver.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/apiserver.ext" -out "$pki/apiserver.crt" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=testrun-admin" -keyout "$pki/admin.key" \
    -out "$pki/admin.csr" 2>/dev/null
  printf 'extendedKeyUsage=clientAuth\n' >"$pki/admin.ext"
  openssl x509 -req -in "$pki/admin.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 2 -extfile "$pki/admin.ext" -out "$pki/admin.crt" 2>/dev/null
  openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
  openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
}

write_kubeconfig() {
  cat >"$dir/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: testrun
    cluster:
      server: https://127.0.0.1:$api_port
      certificate-authority: $dir/pki/ca.crt
users:
  - name: testrun-admin
    user:
      client-certificate: $dir/pki/admin.crt
      client-key: $dir/pki/admin.key
contexts:
  - name: testrun
    context: { cluster: testrun, user: testrun-admin }
current-context: testrun
EOF
}

# kwok's stages: its "fast" ones (a node is Ready once created; a pod Running and Ready at once, a
# Job's pod Succeeded right after; a deleted pod goes), read from its module in Go's module cache.
write_kwok_config() {
  local kwok_src
  kwok_src=$(cd /tmp && GOFLAGS=-mod=mod go mod download -json "sigs.k8s.io/kwok@$kwok_version" |
    sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [ -d "$kwok_src" ] || die "go mod download sigs.k8s.io/kwok@$kwok_version gave no directory"
  local stage first=yes
  for stage in node/fast/node-initialize pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    [ $first = yes ] || echo "---"
    first=no
    cat "$kwok_src/kustomize/stage/$stage.yaml"
  done >"$dir/kwok.yaml"
  # And `helm test`'s pods (no Job owns them) succeed as Jobs' do: kwok's pod-complete for them.
  sed -e 's/name: pod-complete$/name: pod-complete-helm-test/' \
    -e "s/key: '.metadata.ownerReferences.\[\].kind'/key: '.metadata.annotations[\"helm.sh\/hook\"]'/" \
    -e "s/- 'Job'$/- 'test'/" "$kwok_src/kustomize/stage/pod/fast/pod-complete.yaml" >"$dir/kwok-test.yaml"
  grep -q 'helm.sh/hook' "$dir/kwok-test.yaml" || die "kwok's pod-complete stage changed: no stage for helm test's pods"
  { echo "---"; cat "$dir/kwok-test.yaml"; } >>"$dir/kwok.yaml" && rm "$dir/kwok-test.yaml"
}

# The nodes kwok plays: spread over three zones, roomy enough for the production example's requests.
create_nodes() {
  local index
  for ((index = 0; index < node_count; index++)); do
    api -X POST -H 'Content-Type: application/json' "https://127.0.0.1:$api_port/api/v1/nodes" -d "$(
      cat <<EOF
{"apiVersion":"v1","kind":"Node","metadata":{"name":"kwok-node-$index",
 "annotations":{"node.alpha.kubernetes.io/ttl":"0","kwok.x-k8s.io/node":"fake"},
 "labels":{"kubernetes.io/hostname":"kwok-node-$index","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64",
  "topology.kubernetes.io/zone":"zone-$((index % 3))","type":"kwok"}},
 "status":{"allocatable":{"cpu":"16","memory":"64Gi","pods":"110","ephemeral-storage":"100Gi"},
  "capacity":{"cpu":"16","memory":"64Gi","pods":"110","ephemeral-storage":"100Gi"},
  "addresses":[{"type":"InternalIP","address":"172.18.0.$((index + 2))"}]}}
EOF
    )" >/dev/null
  done
}

ready_nodes() {
  api "https://127.0.0.1:$api_port/api/v1/nodes" | grep -o '"type":"Ready","status":"True"' | wc -l
}

# Stops what DIR/pids names, newest first: each pid only while it still runs the binary it was
# started as (a pid reused since is left alone); SIGTERM, then SIGKILL after 10 s.
stop_processes() {
  local file pid
  [ -d "$dir/pids" ] || return 0
  for file in $(ls -r "$dir/pids"); do
    pid=$(cat "$dir/pids/$file")
    if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "^$cache/"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do [ -d "/proc/$pid" ] || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/pids/$file"
  done
}

start() {
  binaries_present || die "the control plane's binaries are not built ($kube_dir, $etcd_bin, $kwok_bin): run \`make cluster-tools\` (some minutes on 2 cores, once)"
  for tool in openssl curl ss setsid; do command -v $tool >/dev/null || die "$tool is missing"; done
  mkdir -p "$dir"
  [ -z "$(ls -A "$dir")" ] || die "$dir is not empty (a control plane running there? scripts/cluster.sh stop $dir)"
  dir=$(cd "$dir" && pwd)
  mkdir -p "$dir/logs" "$dir/pids" "$dir/etcd"
  make_certificates
  etcd_port=$(free_port)
  etcd_peer_port=$(free_port)
  api_port=$(free_port)
  write_kubeconfig
  write_kwok_config

  # No fsync: the data is thrown away with DIR.
  launch etcd "$etcd_bin" --name testrun --data-dir "$dir/etcd" --unsafe-no-fsync \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "testrun=http://127.0.0.1:$etcd_peer_port" --log-level warn
  # Admission as a cluster's: the default plugins (PodSecurity, ServiceAccount, LimitRanger, …) and
  # RBAC. No endpoint reconciler: the kubernetes Service's Endpoints may not hold a loopback address.
  launch kube-apiserver "$kube_dir/kube-apiserver" --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" \
    --tls-cert-file "$dir/pki/apiserver.crt" --tls-private-key-file "$dir/pki/apiserver.key" \
    --client-ca-file "$dir/pki/ca.crt" --authorization-mode RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
    --service-cluster-ip-range "$service_cidr" --endpoint-reconciler-type none \
    --enable-priority-and-fairness=false --profiling=false --cert-dir "$dir/pki"
  wait_for 'api --output /dev/null "https://127.0.0.1:$api_port/readyz" 2>/dev/null' 90 kube-apiserver

  # The HPA controller every 2 s (15 s by default): the tests wait for its first look at each HPA.
  launch kube-controller-manager "$kube_dir/kube-controller-manager" --kubeconfig "$dir/kubeconfig" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$(free_port)" --leader-elect=false \
    --service-account-private-key-file "$dir/pki/sa.key" --root-ca-file "$dir/pki/ca.crt" \
    --cluster-signing-cert-file "$dir/pki/ca.crt" --cluster-signing-key-file "$dir/pki/ca.key" \
    --allocate-node-cidrs --cluster-cidr "$pod_cidr" --service-cluster-ip-range "$service_cidr" \
    --controllers '*' --profiling=false --horizontal-pod-autoscaler-sync-period 2s
  launch kube-scheduler "$kube_dir/kube-scheduler" --kubeconfig "$dir/kubeconfig" \
    --authentication-kubeconfig "$dir/kubeconfig" --authorization-kubeconfig "$dir/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$(free_port)" --leader-elect=false --profiling=false
  launch kwok "$kwok_bin" --kubeconfig "$dir/kubeconfig" --config "$dir/kwok.yaml" --manage-all-nodes=true \
    --cidr "$pod_cidr" --node-lease-duration-seconds 40 --server-address "127.0.0.1:$(free_port)"

  create_nodes
  wait_for '[ "$(ready_nodes)" -eq '"$node_count"' ]' 60 kwok
  # Pods are refused until their namespace's default ServiceAccount exists (the controller
  # manager's token controller makes it): the default namespace's says the controllers run.
  wait_for 'api --output /dev/null "https://127.0.0.1:$api_port/api/v1/namespaces/default/serviceaccounts/default" 2>/dev/null' 60 kube-controller-manager

  cat >"$dir/cluster.env" <<EOF
KUBECONFIG=$dir/kubeconfig
KUBE_API_SERVER=https://127.0.0.1:$api_port
KUBE_VERSION=$kube_version
EOF
  cat <<EOF
A throwaway Kubernetes $kube_version control plane runs at https://127.0.0.1:$api_port, with $node_count kwok nodes
(no image runs: kwok makes pods Running and Ready and Jobs' pods succeed; NetworkPolicies are stored, not enforced).
  export KUBECONFIG=$dir/kubeconfig
  .tools/bin/helm install testrun helm/testrun -n testrun --create-namespace -f test/fixtures/chart-cluster-ranges.yaml --wait
  curl --cacert $dir/pki/ca.crt --cert $dir/pki/admin.crt --key $dir/pki/admin.key https://127.0.0.1:$api_port/api/v1/pods
Logs in $dir/logs. Stop it: scripts/cluster.sh stop $dir
EOF
}

case "${1:-}" in
build) build ;;
start)
  dir=${2:?usage: scripts/cluster.sh start DIR}
  start
  ;;
stop)
  dir=${2:?usage: scripts/cluster.sh stop DIR}
  [ -d "$dir" ] || exit 0
  stop_processes
  rm -rf "$dir"
  ;;
*) die "usage: scripts/cluster.sh build | start DIR | stop DIR" ;;
esac
