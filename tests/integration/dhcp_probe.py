# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""One DHCPDISCOVER from a client namespace, and every OFFER seen within PROBE_WAIT seconds, as JSON.

udhcpc takes the first offer with an address; a proxy-DHCP offer has none, so the proxy's answer is
read here. Usage (in the client's namespace): dhcp_probe.py MAC IFACE [CODE=VALUE ...]; option 60 as
text, others as hex (93=0007, 175=0101).

With PROBE_BOOT_SERVER=IP and PROBE_CIADDR=the client's address it sends instead what PXE firmware sends
when a proxy offer names no boot file (UEFI firmware, with dnsmasq): a DHCPREQUEST from its address to the
boot server's port 4011 (PXE specification 2.1, boot server discovery), and prints every answer (an ACK
naming the boot file).
"""
import json
import os
import random
import socket
import struct
import sys
import time

mac, iface = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]  # e.g. 60=PXEClient 93=0007 175=0101
hw = bytes.fromhex(mac.replace(":", ""))
xid = random.getrandbits(32)
boot_server, ciaddr = os.environ.get("PROBE_BOOT_SERVER"), os.environ.get("PROBE_CIADDR", "0.0.0.0")
opts = b"\x35\x01\x03" if boot_server else b"\x35\x01\x01"
for item in extra:
    code, value = item.split("=", 1)
    data = value.encode() if code == "60" else bytes.fromhex(value)
    opts += bytes([int(code), len(data)]) + data
ZERO4 = bytes(4)
opts += b"\x37\x04\x01\x03\x2b\x43\xff"
pkt = struct.pack("!BBBBIHH4s4s4s4s16s64s128s4s", 1, 1, 6, 0, xid, 0, 0 if boot_server else 0x8000,
                  socket.inet_aton(ciaddr), ZERO4, ZERO4, ZERO4, hw + bytes(10), bytes(64), bytes(128),
                  b"\x63\x82\x53\x63") + opts
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, iface.encode())
if boot_server:
    s.bind((ciaddr, 0))
    s.sendto(pkt, (boot_server, 4011))
else:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
    s.bind(("", 68))
    s.sendto(pkt, ("255.255.255.255", 67))
s.settimeout(0.5)
end, offers = time.time() + float(os.environ.get("PROBE_WAIT", "4")), []
while time.time() < end:
    try:
        data, _addr = s.recvfrom(4096)
    except TimeoutError:
        continue
    if len(data) < 240 or struct.unpack("!I", data[4:8])[0] != xid:
        continue
    o, i = {}, 240
    while i < len(data) and data[i] != 255:
        if data[i] == 0:
            i += 1
            continue
        o[data[i]] = data[i + 2:i + 2 + data[i + 1]]
        i += 2 + data[i + 1]
    offers.append({"yiaddr": socket.inet_ntoa(data[16:20]), "siaddr": socket.inet_ntoa(data[20:24]),
                   "file": data[108:236].split(b"\0")[0].decode(), "type": o.get(53, b"\0")[0],
                   "server_id": socket.inet_ntoa(o[54]) if 54 in o else "", "vendor": o.get(60, b"").decode(),
                   "bootfile": o.get(67, b"").split(b"\0")[0].decode(), "pxe_43": o.get(43, b"").hex()})
print(json.dumps(offers))
