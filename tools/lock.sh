#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Regenerate the hash-pinned locks from their human-edited inputs, resolved against PyPI alone
# (no local mirror or wheel folder of this machine ends up in them), for this Python (3.11):
#   requirements.lock        <- requirements.txt (the controller: tools/setup.sh, the execution environment)
#   tests/requirements.lock  <- requirements.txt + tests/requirements.txt, at requirements.lock's versions
#                               (what `make setup` installs, with --require-hashes)
#   lab/gpucloud_lab/infra/sushy-tools.lock <- sushy-tools==SUSHY_VERSION (lab/gpucloud_lab/core/config.py;
#                               the lab's Redfish emulators' own venv, made with Debian's /usr/bin/python3)
# Versions already in a lock are kept; pass --upgrade, or --upgrade-package NAME, to move them.
#   tools/lock.sh                          # after editing an input file
#   tools/lock.sh --upgrade-package ansible-core
set -euo pipefail
cd "$(dirname "$0")/.."
pip_compile=.venv/bin/pip-compile
[ -x "$pip_compile" ] || { echo "no $pip_compile: run make setup first (pip-tools is in tests/requirements.txt)" >&2; exit 2; }

compile() {
  env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_CONSTRAINT PIP_CONFIG_FILE=/dev/null \
    CUSTOM_COMPILE_COMMAND=tools/lock.sh \
    "$pip_compile" --quiet --generate-hashes --allow-unsafe --strip-extras \
    --index-url https://pypi.org/simple --no-emit-index-url --no-emit-find-links \
    "$@"
}

compile "$@" --output-file requirements.lock requirements.txt
compile "$@" --constraint requirements.lock --output-file tests/requirements.lock requirements.txt tests/requirements.txt
sushy=$(sed -n 's/^SUSHY_VERSION = "\([^"]*\)".*/\1/p' lab/gpucloud_lab/core/config.py)
echo "sushy-tools==$sushy" | compile "$@" --output-file lab/gpucloud_lab/infra/sushy-tools.lock -
