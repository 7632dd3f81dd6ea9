#!/usr/bin/env bash
# The Python tools of the tests (test/python-requirements.txt, pinned, from PyPI) in a virtual
# environment of their own, linked from .tools/python. The environment lives in a cache outside the
# clone, keyed by the requirements and the Python, so that every clone and worktree reuses it (as
# MinIO's and helm's builds, Makefile); it is made once, under a lock, where it stays (a virtual
# environment cannot move). Needs python3 with venv and ensurepip (Debian: python3-venv;
# scripts/install-prerequisites.sh).
#   scripts/python-tools.sh      prints the environment's python path
set -euo pipefail
cd "$(dirname "$0")/.."
requirements=test/python-requirements.txt
key=$({ cat $requirements; python3 --version; } | sha256sum | cut -c1-16)
venv=${XDG_CACHE_HOME:-$HOME/.cache}/testrun/python/$key
link=.tools/python
mkdir -p "$(dirname "$venv")" .tools
(
  flock 9
  # The mark is written last: an environment a killed install left half made is made again.
  if [ ! -f "$venv/requirements.installed" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input -r $requirements >&2
    cp $requirements "$venv/requirements.installed"
  fi
) 9>"$venv.lock"
[ "$(readlink $link 2>/dev/null)" = "$venv" ] || { rm -rf $link; ln -s "$venv" $link; }
echo "$PWD/$link/bin/python"
