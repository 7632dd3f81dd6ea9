#!/usr/bin/env bash
# What `make run` and `make test` need beside Node, on Debian: PostgreSQL and Redis (throwaway
# servers), Debian's chromium and the browser image's fonts (the demo's browser tests under `make
# run`; the browser tests and the image test under `make test`), Prometheus (the metrics test), Python
# 3 with venv (the tests' Python tools, scripts/python-tools.sh), make, Node and npm (the Makefile
# installs Node 24 into .tools when the system's is not 24), and Go >= 1.21 to build helm (the chart
# tests) and MinIO (the artifact store's S3 tests) unless both are already built from the Makefile's
# HELM_VERSION and MINIO_VERSION, and to fetch the monitoring CRDs; promtool (Debian's prometheus)
# for the chart's alerting rules.
#
# Idempotent and cheap when nothing is missing: it only checks (no apt-get update then). As root it
# installs what is missing with apt-get; otherwise through sudo when sudo works without a password
# prompt, else it says what to install and exits 1. Used by .ci/run and by the Makefile's run and
# test targets (make prerequisites).
#
# For `make run`, chromium and its fonts are wanted, not required: the system still comes up on a
# machine where they cannot be installed (no root, no package mirror), its executor then takes no
# browser tests (docs/runs.md) and the banner says why (scripts/run.ts).
#   scripts/install-prerequisites.sh [--for run|test]   run: without Go, prometheus and Python
set -euo pipefail
cd "$(dirname "$0")/.."

purpose=test
[ "${1:-}" = "--for" ] && purpose=${2:-test}

missing=()
command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v make >/dev/null 2>&1 || missing+=(make)
# npm installs Node 24 into .tools when the system Node is not 24 (the Makefile).
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)

# What a browser test needs, wanted by both purposes: Debian's chromium (/usr/bin/chromium), driven
# by playwright-core in the executor's browser steps as the image runs them, and the browser image's
# fonts (deploy/Dockerfile, --target browser), so that a screenshot shows text as the image would.
browser=()
[ -x /usr/bin/chromium ] || browser+=(chromium)
for font in fonts-liberation fonts-noto-core fonts-noto-color-emoji; do
  dpkg-query -W -f='${Status}' "$font" 2>/dev/null | grep -q 'install ok installed' || browser+=("$font")
done

# `make test` needs them; `make run` only wants them (its demo's browser tests).
wanted=()
need_go=no
if [ "$purpose" = test ]; then
  missing+=("${browser[@]}")
  # The console's pages run in Debian's headless shell of the same chromium, which Playwright itself
  # uses for headless runs and which costs them less CPU. test/image.test.ts replays the browser
  # image's stage with this machine's Debian packages (the fonts above) standing in for the image's.
  [ -x /usr/bin/chromium-headless-shell ] || missing+=(chromium-headless-shell)
  # A real Prometheus (Debian's 2.42) scrapes the whole system in test/metrics.e2e.test.ts, and its
  # promtool checks and unit-tests the chart's alerting rules and lints every /metrics.
  { [ -x /usr/bin/prometheus ] && command -v promtool >/dev/null 2>&1; } || missing+=(prometheus)
  # tesseract reads a failure screenshot's text, to prove a masked secret cannot be read off it
  # (services/executor/test/browser-masking.test.ts).
  command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr)
  # Python with venv for the tests' outside consumers (scripts/python-tools.sh, test/python-requirements.txt).
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
  # helm's go.mod needs Go 1.26, which any Go >= 1.21 fetches by itself (GOTOOLCHAIN=auto); an older
  # Go counts as missing. bookworm's golang-go is 1.19, so on bookworm it comes from bookworm-backports.
  go_new_enough() { [[ $(go env GOVERSION 2>/dev/null) =~ go1\.([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 21 ]; }
  helm_version=$(sed -n 's/^HELM_VERSION := //p' Makefile)
  go_new_enough || [ -x "${XDG_CACHE_HOME:-$HOME/.cache}/testrun/helm/$helm_version/helm" ] || need_go=yes
  # MinIO (the artifact store's S3 tests) is built with Go too, into a cache outside the clone.
  minio_version=$(sed -n 's/^MINIO_VERSION := //p' Makefile)
  go_new_enough || [ -x "${XDG_CACHE_HOME:-$HOME/.cache}/testrun/minio/$minio_version/minio" ] || need_go=yes
  # The chart's monitoring tests take the ServiceMonitor, PodMonitor, PrometheusRule and ScaledObject
  # CRDs from Go module zips (`go mod download`, test/crds.ts): any Go with modules will do.
  command -v go >/dev/null 2>&1 || need_go=yes
  # The throwaway control plane of the chart's install tests (scripts/cluster.sh, built with Go like
  # helm): its certificates, its API calls and its free ports.
  command -v openssl >/dev/null 2>&1 || missing+=(openssl)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v ss >/dev/null 2>&1 || missing+=(iproute2)
else
  wanted+=("${browser[@]}")
fi

[ ${#missing[@]} -eq 0 ] && [ ${#wanted[@]} -eq 0 ] && [ $need_go = no ] && exit 0

# Said when the browser's packages could not be installed for `make run`: it goes on without them.
without_browser() {
  echo "make run goes on without ${wanted[*]}: the demo's browser tests will wait for an executor that can run them (install them as root: apt-get install -y ${wanted[*]})" >&2
}

packages=("${missing[@]}")
[ $need_go = yes ] && packages+=(golang-go)
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  if [ ${#packages[@]} -eq 0 ]; then
    without_browser
    exit 0
  fi
  echo "missing for make $purpose: ${packages[*]}" >&2
  echo "install them as root: apt-get install -y ${packages[*]}${wanted[*]:+ ${wanted[*]}}   (or run scripts/install-prerequisites.sh as root)" >&2
  [ $need_go = yes ] && echo "Go must be 1.21 or later (on Debian 12: apt-get install -t bookworm-backports golang-go)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
go_release=()
if [ $need_go = yes ] && grep -q '^VERSION_CODENAME=bookworm$' /etc/os-release; then
  echo "deb http://deb.debian.org/debian bookworm-backports main" |
    "${as_root[@]}" tee /etc/apt/sources.list.d/bookworm-backports.list >/dev/null
  go_release=(-t bookworm-backports)
fi
if [ ${#packages[@]} -eq 0 ]; then
  # Only wanted packages: a machine without a package mirror still runs the system.
  if "${as_root[@]}" apt-get update -qq &&
    echo "installing: ${wanted[*]}" &&
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${wanted[@]}"; then
    exit 0
  fi
  without_browser
  exit 0
fi
"${as_root[@]}" apt-get update -qq
if [ ${#missing[@]} -gt 0 ] || [ ${#wanted[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}${wanted[*]:+ ${wanted[*]}}"
  if ! "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" "${wanted[@]}"; then
    [ ${#wanted[@]} -gt 0 ] || exit 1
    # What is required alone, then: the wanted browser packages may be what failed.
    [ ${#missing[@]} -eq 0 ] || "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
    without_browser
  fi
fi
if [ $need_go = yes ]; then
  echo "installing: golang-go ${go_release[*]}"
  "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${go_release[@]}" golang-go ca-certificates
fi
