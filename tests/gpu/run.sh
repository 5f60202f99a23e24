#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Run nvml_health on this machine's real NVIDIA GPUs, from a fresh checkout, in one go:
# a venv with ansible-core (the pin of requirements.txt), PyYAML and pytest (tests/requirements.txt)
# and nvidia-ml-py, the collection link, then tests/gpu (the module's table is printed).
#
#   tests/gpu/run.sh                           # PyPI reachable
#   GPUCLOUD_WHEELS=/path/to/wheels tests/gpu/run.sh   # offline: only that wheelhouse (see README.md)
#
# GPUCLOUD_GPU_VENV (default tests/output/gpu-venv) and PYTHON (default python3) can be set.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

log() { printf '\033[1m==> %s\033[0m\n' "$*"; }
pin() {  # the requirement line of $1 in file $2 (e.g. "ansible-core>=2.17"), or $1 alone
  local line
  line=$(grep -iE "^$1([<>=!~ ]|$)" "$2" | head -n1 | tr -d ' ' || true)
  printf '%s' "${line:-$1}"
}

python=${PYTHON:-python3}
venv=${GPUCLOUD_GPU_VENV:-$root/tests/output/gpu-venv}
wanted=(
  "$(pin ansible-core requirements.txt)"
  "$(pin PyYAML tests/requirements.txt)"
  "$(pin pytest tests/requirements.txt)"
  "nvidia-ml-py>=12.535"
)

if command -v nvidia-smi >/dev/null; then
  log "GPUs (nvidia-smi -L)"
  nvidia-smi -L || true
else
  echo "nvidia-smi not found: the test compares with NVML alone" >&2
fi

pip_args=(-q --disable-pip-version-check)
if [ -n "${GPUCLOUD_WHEELS:-}" ]; then
  [ -d "$GPUCLOUD_WHEELS" ] || { echo "GPUCLOUD_WHEELS=$GPUCLOUD_WHEELS is not a directory" >&2; exit 2; }
  pip_args+=(--no-index --find-links "$(cd "$GPUCLOUD_WHEELS" && pwd)")
  log "offline: installing from the wheelhouse $GPUCLOUD_WHEELS"
fi

if [ ! -x "$venv/bin/python" ]; then
  log "creating $venv with $($python --version 2>&1)"
  "$python" -m venv "$venv" || {
    echo "cannot create a venv with $python: install its venv module (Debian/Ubuntu: apt install python3-venv)" >&2
    exit 2; }
fi
log "installing ${wanted[*]}"
"$venv/bin/python" -m pip install "${pip_args[@]}" "${wanted[@]}"

# The collection resolves from the repo root, as tools/setup.sh links it (ansible.cfg's collections_path).
mkdir -p .collections/ansible_collections/gpucloud
ln -sfn "$root" .collections/ansible_collections/gpucloud/baremetal

log "tests/gpu with $("$venv/bin/python" -c 'import sys; from importlib.metadata import version as v
print("ansible-core", v("ansible-core"), "nvidia-ml-py", v("nvidia-ml-py"), "Python", sys.version.split()[0])')"
export PATH="$venv/bin:$PATH" ANSIBLE_CONFIG="$root/ansible.cfg" GPUCLOUD_GPU_REQUIRED=1
exec "$venv/bin/python" -m pytest tests/gpu -v -rs -s -p no:cacheprovider "$@"
