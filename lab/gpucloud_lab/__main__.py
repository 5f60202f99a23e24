# Copyright: (c) 2025, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
import sys

from gpucloud_lab.core.cli import main

sys.exit(main(sys.argv[1:]))
