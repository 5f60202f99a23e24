#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Every quality gate and test suite, timed; fails if any fails. `make test` and .ci/run run it.
#
# Two tiers side by side, so that both cores are busy all the time (the lab tier alone leaves about
# 40% of the CPU idle: much of it is one playbook task after another on one host); the lab tier first (the
# foreground runs niced):
# - in the background: `gpucloud-lab prepare` (its builds and caches, once per machine), then the lab
#   tier: every test that needs the lab (marked `lab`), in one session that starts the lab once and
#   converges it once (tests/integration/conftest.py);
# - in the foreground meanwhile, the lab-free tier: ruff, ansible-lint, ansible-test sanity, then every
#   test that needs no lab (unit, CLI, static) in parallel with pytest-xdist. Then the lab tier's output
#   follows as it runs.
# Neither tier shares state with the other: the lab-free tests use temporary folders and loopback only.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg
workers=${GPUCLOUD_TEST_WORKERS:-auto}

declare -a names=() results=() times=()
gate() {
  local name=$1; shift
  printf '\n\033[1m==> %s: %s\033[0m\n' "$name" "$*"
  local start=$SECONDS
  "$@"
  local rc=$?
  names+=("$name"); results+=("$rc"); times+=("$((SECONDS - start))")
}

work=$(mktemp -d)
background=
# An interrupted or failed run (Ctrl-C, a CI timeout's SIGTERM) stops the background tier too, and takes down
# a lab that this run brought up (pytest, killed, cannot run its lab fixture's teardown): nothing keeps running
# or holds the lab's namespaces after this script has gone.
# shellcheck disable=SC2317  # run by the EXIT trap
stop_background() {
  if [ -n "$background" ] && kill -0 "$background" 2>/dev/null; then
    kill -TERM -- "-$background" 2>/dev/null
    wait "$background" 2>/dev/null
    if [ -e "$work/lab-started" ] && [ ! -e "$work/lab-was-up" ]; then
      echo "interrupted: taking down the lab this run started" >&2
      lab/gpucloud-lab down >/dev/null 2>&1
    fi
  fi
  rm -rf "$work"
}
trap stop_background EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
lab_tier=(python -m pytest tests -m lab -q -rs -p no:cacheprovider --durations=30)
# Each background step writes "<rc> <seconds>" when it ends; the lab tier's output goes to a file that is
# shown (and followed) once the lab-free tier is done. Job control on for this one job: it runs in a process
# group of its own, which stop_background ends as a whole (pytest, ansible-runner and their children).
set -m
(
  start=$(date +%s)
  lab/gpucloud-lab prepare >"$work/prepare.log" 2>&1
  rc=$?
  echo "$rc $(($(date +%s) - start))" >"$work/prepare.rc"
  [ "$rc" = 0 ] || exit 0
  if lab/gpucloud-lab status >/dev/null 2>&1; then touch "$work/lab-was-up"; fi
  touch "$work/lab-started"
  start=$(date +%s)
  "${lab_tier[@]}" >"$work/lab.log" 2>&1
  echo "$? $(($(date +%s) - start))" >"$work/lab.rc"
) &
background=$!
set +m
# The lab tier is the run's critical path (its playbooks and QEMU boots take several times as long as every
# lab-free gate together), so the foreground tier yields the CPU and the disk to it: what runs from here on
# (ruff, ansible-lint, sanity, the lab-free tests) is niced and gets the cycles the lab tier leaves idle.
renice -n 10 -p $$ >/dev/null
ionice -c 2 -n 7 -p $$ 2>/dev/null || true

gate ruff ruff check --no-cache .
gate ansible-lint ansible-lint --profile production
gate sanity bash tools/sanity.sh
gate pytest-no-lab python -m pytest tests -m "not lab" -n "$workers" -q -rs -p no:cacheprovider --durations=30

printf '\n\033[1m==> lab-prepare (in the background since the start)\033[0m\n'
while [ ! -e "$work/prepare.rc" ] && kill -0 "$background" 2>/dev/null; do sleep 2; done
tail -n 20 "$work/prepare.log"
read -r rc seconds <"$work/prepare.rc" 2>/dev/null || { rc=1; seconds=0; }
names+=("lab-prepare"); results+=("$rc"); times+=("$seconds")

printf '\n\033[1m==> pytest-lab (in the background since the lab was prepared): %s\033[0m\n' "${lab_tier[*]}"
if [ "$rc" = 0 ]; then
  touch "$work/lab.log"
  tail -n +1 -f --pid="$background" "$work/lab.log"
  wait "$background"
  read -r rc seconds <"$work/lab.rc" 2>/dev/null || { rc=1; seconds=0; }
else
  echo "not run: the lab could not be prepared"; rc=1; seconds=0
fi
names+=("pytest-lab"); results+=("$rc"); times+=("$seconds")

printf '\n%-14s %-6s %s\n' gate result seconds
failed=0
for i in "${!names[@]}"; do
  r=ok; [ "${results[$i]}" = 0 ] || { r=FAILED; failed=1; }
  printf '%-14s %-6s %s\n' "${names[$i]}" "$r" "${times[$i]}"
done
printf 'total %d s\n' "$SECONDS"
exit $failed
