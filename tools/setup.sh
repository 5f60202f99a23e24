#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# One-time (idempotent) setup of a checkout: Python venv, system packages, and the
# ansible_collections/gpucloud/baremetal link that lets the repo be used as it is.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

log() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# 1. System packages named in bindep.txt (Debian/Ubuntu; needs root).
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  wanted=$(sed -n 's/^\([a-z0-9.+-]\+\) \[.*platform:dpkg.*/\1/p' bindep.txt)
  missing=()
  for p in $wanted; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    # cloud-init is here for its schema validator only: it must never configure this machine.
    mkdir -p /etc/cloud && touch /etc/cloud/cloud-init.disabled
    log "installing system packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "not root or not Debian: install the packages of bindep.txt yourself" >&2
fi
# FRR's daemons are only used as parsers by the tests; keep the service itself off. Debian's docker-registry
# service would listen on port 5000 of every address: the lab starts its own registry on its lab address.
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl disable --now frr docker-registry >/dev/null 2>&1 || true
elif pgrep -f '^/usr/bin/docker-registry serve /etc/docker/registry/config.yml' >/dev/null; then
  /etc/init.d/docker-registry stop >/dev/null 2>&1 || true
fi

# 2. Python virtual environment: tests/requirements.lock (requirements.txt + tests/requirements.txt, pinned
#    with hashes by tools/lock.sh), hash-checked; reinstalled whenever a lock changes. pip comes first, from
#    the lock: from 26.3 it also checks the build dependencies of sdists (--build-constraint) against it.
stamp=.venv/.requirements.sha
want=$(cat requirements.lock tests/requirements.lock | sha256sum | cut -c1-16)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "creating .venv and installing tests/requirements.lock (hash-checked)"
  python3 -m venv .venv
  pip_lock=$(mktemp)
  awk '/^pip==/ {p = 1} p {print} p && !/\\$/ {exit}' tests/requirements.lock > "$pip_lock"
  .venv/bin/pip install -q --require-hashes -r "$pip_lock"
  rm -f "$pip_lock"
  .venv/bin/pip install -q --require-hashes --build-constraint tests/requirements.lock -r tests/requirements.lock
  echo "$want" > "$stamp"
fi

# 3. The collection resolves from the repo root (ansible.cfg's collections_path).
mkdir -p .collections/ansible_collections/gpucloud
ln -sfn "$root" .collections/ansible_collections/gpucloud/baremetal

# 4. ansible-test bootstraps pip in its venvs with a script it downloads from a host we
#    cannot reach; give it a shim that uses ensurepip and then pip itself.
pip_version=$(.venv/bin/python - <<'PY'
import os, re, ansible_test
path = os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py")
m = re.search(r"pip='([\d.]+)'", open(path).read())
print(m.group(1) if m else "24.2")
PY
)
for v in $pip_version; do
  shim="$HOME/.ansible/test/cache/get_pip_${v//./_}.py"
  [ -f "$shim" ] && continue
  mkdir -p "$(dirname "$shim")"
  cat > "$shim" <<'PY'
# Offline stand-in for get-pip.py: ensurepip, then pip install with the given packages.
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"])
subprocess.check_call([sys.executable, "-m", "pip", "install"] + args)
PY
done
log "setup done (activate with: . .venv/bin/activate)"
