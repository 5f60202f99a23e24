#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# Every quality gate and test suite, timed; fails if any fails. `make test` and .ci/run run it.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg

declare -a names=() results=() times=()
gate() {
  local name=$1; shift
  printf '\n\033[1m==> %s: %s\033[0m\n' "$name" "$*"
  local start=$SECONDS
  "$@"
  local rc=$?
  names+=("$name"); results+=("$rc"); times+=("$((SECONDS - start))")
}

gate ruff ruff check --no-cache .
gate ansible-lint ansible-lint --profile production
gate sanity bash tools/sanity.sh
gate pytest python -m pytest tests -q -rs -p no:cacheprovider

printf '\n%-14s %-6s %s\n' gate result seconds
failed=0
for i in "${!names[@]}"; do
  r=ok; [ "${results[$i]}" = 0 ] || { r=FAILED; failed=1; }
  printf '%-14s %-6s %s\n' "${names[$i]}" "$r" "${times[$i]}"
done
exit $failed
