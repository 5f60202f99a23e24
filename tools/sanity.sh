#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# ansible-test only runs from a path ending in ansible_collections/<ns>/<name>; a checkout can
# live anywhere, so copy the files git knows (committed or not, minus ignored) into such a tree.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$PWD/.venv
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
dest=$tree/ansible_collections/gpucloud/baremetal
mkdir -p "$dest"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | rsync -a --from0 --files-from=- ./ "$dest/"
cd "$dest"
git init -q && git add -A >/dev/null
# Only the controller's Python: the collection's target code is checked by the same rules.
"$venv/bin/ansible-test" sanity --venv --python 3.11 "$@" 2>&1 || {
  echo "ansible-test sanity failed" >&2; exit 1; }
