#!/usr/bin/env bash
# The Python tools of the tests (test/python-requirements.txt, pinned, from PyPI) in a virtual
# environment of their own, .tools/python. Reinstalls only when the requirements changed; cheap
# otherwise. Needs python3 with venv and ensurepip (Debian: python3-venv; scripts/install-prerequisites.sh).
#   scripts/python-tools.sh      prints the environment's python path
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.tools/python
requirements=test/python-requirements.txt
stamp=$venv/requirements.installed
if [ ! -x $venv/bin/python ] || ! cmp -s $requirements $stamp; then
  rm -rf $venv
  python3 -m venv $venv >&2
  $venv/bin/pip install --quiet --disable-pip-version-check --no-input -r $requirements >&2
  cp $requirements $stamp
fi
echo "$PWD/$venv/bin/python"
