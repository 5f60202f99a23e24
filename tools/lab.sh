#!/usr/bin/env bash
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# The README's main command (`make lab`): start the embedded lab, run the whole rollout
# (playbooks/site.yml) against inventories/lab, and say where to look.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PWD/.venv/bin:$PATH ANSIBLE_CONFIG=$PWD/ansible.cfg
[ "$(id -u)" = 0 ] || { echo "the lab needs root (network namespaces, mounts, cgroups)" >&2; exit 1; }

lab/gpucloud-lab up
ansible-playbook -i inventories/lab playbooks/site.yml "$@"
lab/gpucloud-lab status
cat <<MSG

The lab is up and site.yml ran against it. Where to look:
  lab/gpucloud-lab status                      components, states, addresses
  ansible-inventory -i inventories/lab --graph  the lab as a fleet
  /var/lib/gpucloud-lab/                        kubeconfig, SSH key, rendered switch configs
  make lab-down                                 stop it and remove everything it made
MSG
