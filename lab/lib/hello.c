/* Copyright: (c) 2025, gpucloud.baremetal contributors
 * GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
 *
 * The lab's test image (docker.io/gpucloud-lab/hello in the lab's site registry, infra/registry.py): one
 * static binary that prints a fixed line and its arguments, so that a pod's log read back through the API
 * can be compared with what it was told to print. Built by the lab (gcc -static), as the pause image is.
 */
#include <stdio.h>

int main(int argc, char **argv) {
    printf("gpucloud-lab hello\n");
    for (int i = 1; i < argc; i++) {
        printf("%s\n", argv[i]);
    }
    return 0;
}
