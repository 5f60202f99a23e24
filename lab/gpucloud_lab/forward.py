# Copyright: (c) 2026, gpucloud.baremetal contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Plays a tenant control plane's Service: a TCP forwarder from its endpoint to its API server.

A private tenant's vCluster is reached at ``controlPlane.endpoint`` (the tenant's WireGuard hub
address, port 443), which on a real host cluster is the vCluster Service (443 -> 8443 of the
control-plane pod). In the lab the tenant API server listens on the control-plane host's
management address, so this forwarder, started by the lab controller in that host's network
namespace, passes TLS through untouched from the endpoint to it. The endpoint address exists only
while the tenant's WireGuard interface (made by the private_node_join role) is up, so the listening
socket uses IP_FREEBIND: it may bind before the address is there.

Usage: python -m gpucloud_lab.forward LISTEN_IP:PORT TARGET_IP:PORT
"""
from __future__ import annotations

import asyncio
import socket
import sys

IP_FREEBIND = 15  # linux/in.h


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _serve(listen: tuple[str, int], target: tuple[str, int]) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
    sock.bind(listen)
    server = await asyncio.start_server(handle, sock=sock)
    async with server:
        await server.serve_forever()


def _address(text: str) -> tuple[str, int]:
    host, port = text.rsplit(":", 1)
    return host, int(port)


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    asyncio.run(_serve(_address(sys.argv[1]), _address(sys.argv[2])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
