# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Provisioning at scale: moving the per-node boot files (an iPXE script and a seed or two per node)
to the boot server, for 1,000 and 5,000 nodes side by side, before and after.

- before: the role's old task, ``ansible.builtin.copy`` of the rendered folder (one stat, and when
  it differs one transfer and one module run, per file). It costs about a second per file here, so
  it is timed on a sample of SAMPLE_NODES nodes and scaled by the file count (the per-file cost
  is constant: every file is its own module run), after the playbook's fixed start-up is taken off.
- after: the role's new tasks: ``pxe_render``'s deterministic archive, ``ansible.builtin.copy`` of
  that one file and ``pxe_boot_files`` (hash compare, unpack, atomic swap), timed in full.

Both run as ansible-playbook against localhost (connection local: no network, so the figures are
the Ansible and file-system work; over SSH each module run costs more, which favours "after" more).
"first" is the first transfer into an empty folder, "again" the second run (nothing changed).
Run: .venv/bin/python bench/bench_provision_transfer.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, ".collections"))
sys.path.insert(0, REPO)

from ansible_collections.gpucloud.baremetal.plugins.module_utils._provision import bootfiles, tree  # noqa: E402
from bench.bench_provision import OPTIONS, fleet  # noqa: E402

SIZES = [(1000, 100, 16), (5000, 1000, 128)]
SAMPLE_NODES = 15

BEFORE = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Copy the iPXE scripts and seeds (the old task)
      ansible.builtin.copy:
        src: "{{ stage }}/http/"
        dest: "{{ root }}/http/"
        mode: "0644"
        directory_mode: "0755"
"""

AFTER = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Copy the boot files' archive
      ansible.builtin.copy:
        src: "{{ stage }}/boot-files.tar.gz"
        dest: "{{ root }}/boot-files.tar.gz"
        mode: "0600"
    - name: Serve the iPXE scripts and seeds
      gpucloud.baremetal.pxe_boot_files:
        src: "{{ root }}/boot-files.tar.gz"
        link: "{{ root }}/http/hosts"
        store: "{{ root }}/boot-files"
        manifest: "{{ lookup('ansible.builtin.file', stage + '/manifest.json') | from_json }}"
"""

EMPTY = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Nothing
      ansible.builtin.debug:
        msg: start-up only
"""


def play(scratch: str, text: str, stage: str, root: str) -> float:
    book = os.path.join(scratch, "play.yml")
    with open(book, "w", encoding="utf-8") as fh:
        fh.write(text)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_PYTHON_INTERPRETER=sys.executable)
    start = time.perf_counter()
    run = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                          "-c", "local", book, "-e", "stage=" + stage, "-e", "root=" + root],
                         capture_output=True, text=True, cwd=REPO, env=env, check=False)
    took = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(run.stdout[-3000:] + run.stderr[-3000:])
    return took


def hosts_files(nodes: int, tenants: int, switches: int) -> dict[str, str]:
    site, pxe = fleet(nodes, tenants, switches)
    files = tree.render(site, pxe, OPTIONS)["files"]
    return {path[len("hosts/"):]: text for path, text in files.items()}


def stage_tree(stage: str, files: dict[str, str]) -> None:
    for path, text in files.items():
        dest = os.path.join(stage, "http", "hosts", path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as fh:
            fh.write(text)


def main() -> int:
    import json

    scratch = tempfile.mkdtemp(prefix="gpucloud-bench-transfer-")
    try:
        base = play(scratch, EMPTY, scratch, scratch)
        rows = []
        sample_rate = None
        for nodes, tenants, switches in SIZES:
            files = hosts_files(nodes, tenants, switches)
            row = {"files": float(len(files))}
            stage, root = os.path.join(scratch, "stage-%d" % nodes), os.path.join(scratch, "root-%d" % nodes)
            os.makedirs(os.path.join(root, "http"))
            os.makedirs(stage)
            start = time.perf_counter()
            bootfiles.archive(files, os.path.join(stage, "boot-files.tar.gz"))
            with open(os.path.join(stage, "manifest.json"), "w", encoding="utf-8") as fh:
                json.dump(bootfiles.manifest(files), fh)
            row["after: archive"] = time.perf_counter() - start
            row["archive MB"] = os.path.getsize(os.path.join(stage, "boot-files.tar.gz")) / 1e6
            row["after: first"] = play(scratch, AFTER, stage, root)
            row["after: again"] = play(scratch, AFTER, stage, root)
            assert sorted(os.listdir(os.path.join(root, "http", "hosts"))) == sorted({p.split("/")[0] for p in files})
            if sample_rate is None:  # the per-file cost of the old task, measured once on a sample
                names = sorted({bootfiles.node_of(p) for p in files})[:SAMPLE_NODES]
                sample = {p: t for p, t in files.items() if bootfiles.node_of(p) in names}
                old_stage, old_root = os.path.join(scratch, "old-stage"), os.path.join(scratch, "old-root")
                stage_tree(old_stage, sample)
                first = play(scratch, BEFORE, old_stage, old_root)
                again = play(scratch, BEFORE, old_stage, old_root)
                sample_rate = ((first - base) / len(sample), (again - base) / len(sample), len(sample))
            row["before: first"] = base + sample_rate[0] * row["files"]
            row["before: again"] = base + sample_rate[1] * row["files"]
            rows.append((nodes, row))
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("old copy task timed on %d files (%d nodes): %.3f s/file first run, %.3f s/file again; "
          "playbook start-up %.2f s" % (sample_rate[2], SAMPLE_NODES, sample_rate[0], sample_rate[1], base))
    keys = ["files", "archive MB", "after: archive", "before: first", "after: first", "before: again", "after: again"]
    print("%-16s" % "" + "".join("%14s" % ("%d nodes" % n) for n, _r in rows) + "%12s" % "5k/1k")
    for key in keys:
        values = [r[key] for _n, r in rows]
        fmt = "%14d" if key == "files" else ("%14.2f" if key == "archive MB" else "%13.2fs")
        print("%-16s" % key + "".join(fmt % v for v in values) + "%12.2f" % (values[-1] / values[0]))
    for run in ("first", "again"):
        print("%-16s" % ("before/after " + run)
              + "".join("%13.1fx" % (r["before: " + run] / r["after: " + run]) for _n, r in rows))
    print("nodes ratio: %.2f (before: extrapolated from the sample; after: measured)" % (rows[-1][0] / rows[0][0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
