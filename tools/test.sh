#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Every quality gate and test suite, timed; fails if any fails. `make test` and .ci/run run it.
#
# Two tiers, so that the machine is busy all the time:
# - while the lab prepares (`gpucloud-lab prepare`: its builds and caches, once per machine, in the
#   background), the lab-free tier runs: ruff, ansible-lint, ansible-test sanity, then every test
#   that needs no lab (unit, CLI, static) in parallel with pytest-xdist;
# - then the lab tier: every test that needs the lab (marked `lab`), in one session that starts the
#   lab once and converges it once (tests/integration/conftest.py).
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

prepare_log=$(mktemp)
prepare_start=$SECONDS
lab/gpucloud-lab prepare >"$prepare_log" 2>&1 &
prepare_pid=$!

gate ruff ruff check --no-cache .
gate ansible-lint ansible-lint --profile production
gate sanity bash tools/sanity.sh
gate pytest-no-lab python -m pytest tests -m "not lab" -n "$workers" -q -rs -p no:cacheprovider --durations=30

wait "$prepare_pid"; prepare_rc=$?
names+=("lab-prepare"); results+=("$prepare_rc"); times+=("$((SECONDS - prepare_start))")
printf '\n\033[1m==> lab-prepare (in the background since the start)\033[0m\n'
tail -n 20 "$prepare_log"; rm -f "$prepare_log"

gate pytest-lab python -m pytest tests -m lab -q -rs -p no:cacheprovider --durations=30

printf '\n%-14s %-6s %s\n' gate result seconds
failed=0
for i in "${!names[@]}"; do
  r=ok; [ "${results[$i]}" = 0 ] || { r=FAILED; failed=1; }
  printf '%-14s %-6s %s\n' "${names[$i]}" "$r" "${times[$i]}"
done
printf 'total %d s\n' "$SECONDS"
exit $failed
