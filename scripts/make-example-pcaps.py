#!/usr/bin/python3
# Writes the captures the examples replay (pcaps/example-*.pcap).
# A development tool: needs Debian's python3-scapy; the tests read the committed files.
from scapy.all import Ether, IP, UDP, TCP, ARP, Raw, wrpcap
from scapy.utils import PcapWriter
import struct

T0 = 1_750_000_000.0

def stamp(packets, start, step=0.001):
    for i, p in enumerate(packets):
        p.time = start + i * step
    return packets

MAC = {n: "02:00:00:00:00:%02x" % i for n, i in [("h1", 1), ("h2", 2), ("h3", 3), ("h4", 4), ("hub", 0xfe)]}
BCAST = "ff:ff:ff:ff:ff:ff"

# hub-and-spoke: frames h1 transmits, and frames h3 transmits a little later.
h1 = stamp([
    Ether(src=MAC["h1"], dst=MAC["h2"]) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=5000, dport=7) / Raw(b"hello h2"),
    Ether(src=MAC["h1"], dst=BCAST) / ARP(op=1, hwsrc=MAC["h1"], psrc="10.0.0.1", pdst="10.0.0.3"),
    Ether(src=MAC["h1"], dst=MAC["h4"]) / IP(src="10.0.0.1", dst="10.0.0.4") / TCP(sport=40000, dport=80, flags="S"),
    Ether(src=MAC["h1"], dst="02:00:00:00:00:99") / IP(src="10.0.0.1", dst="10.0.0.99") / UDP(sport=5001, dport=7),
], T0)
h3 = stamp([
    Ether(src=MAC["h3"], dst=MAC["h1"]) / ARP(op=2, hwsrc=MAC["h3"], psrc="10.0.0.3", hwdst=MAC["h1"], pdst="10.0.0.1"),
    Ether(src=MAC["h3"], dst=BCAST) / IP(src="10.0.0.3", dst="255.255.255.255") / UDP(sport=68, dport=67) / Raw(b"\x01" * 8),
], T0 + 0.0015)
wrpcap("pcaps/example-hub-h1.pcap", h1)
wrpcap("pcaps/example-hub-h3.pcap", h3)

# one-way-ring: cna packets sent by m0 (link type USER0 = 147).
def cna(src, dst, session, payload):
    return struct.pack(">IIIHH", src, dst, session, 0, 0) + payload
w = PcapWriter("pcaps/example-ring-m0.pcap", linktype=147, sync=True)
for i, (dst, body) in enumerate([(2, b"to m1"), (3, b"to m2"), (4, b"to m3"), (1, b"to m0 itself"), (9, b"to nobody")]):
    pkt = Raw(cna(1, dst, 7, body))
    pkt.time = T0 + i * 0.001
    w.write(pkt)
w.close()

# filter-chain: raw IPv4 packets m0 transmits (link type RAW = 101).
chain = stamp([
    IP(src="10.0.0.1", dst="10.0.3.1", ttl=64) / UDP(sport=4000, dport=1234) / Raw(b"allowed"),
    IP(src="10.9.9.9", dst="10.0.3.1", ttl=64) / UDP(sport=4000, dport=1234) / Raw(b"spoofed"),
    IP(src="10.0.0.1", dst="10.0.3.1", ttl=2) / UDP(sport=4000, dport=1234) / Raw(b"short-lived"),
    IP(src="10.0.0.1", dst="10.0.3.1", ttl=64) / UDP(sport=4000, dport=2222) / Raw(b"wrong port"),
    IP(src="10.0.0.1", dst="10.0.3.1", ttl=64) / TCP(sport=4000, dport=1234, flags="S"),
], T0)
w = PcapWriter("pcaps/example-chain-m0.pcap", linktype=101, sync=True)
for p in chain:
    w.write(p)
w.close()

# subduction: frames t1 sends (to h2 in the provider's LAN, to t2 in its own), and h2's answer to t1.
SUB = {"t1": "02:00:00:00:01:01", "t2": "02:00:00:00:01:02", "h2": "02:00:00:00:02:02"}
t1 = stamp([
    Ether(src=SUB["t1"], dst=SUB["h2"]) / IP(src="192.168.1.1", dst="192.168.2.2") / UDP(sport=5000, dport=7) / Raw(b"via the middlebox"),
    Ether(src=SUB["t1"], dst=SUB["t2"]) / IP(src="192.168.1.1", dst="192.168.1.2") / UDP(sport=5001, dport=7) / Raw(b"inside the tenant"),
], T0)
h2 = stamp([
    Ether(src=SUB["h2"], dst=SUB["t1"]) / IP(src="192.168.2.2", dst="192.168.1.1") / UDP(sport=7, dport=5000) / Raw(b"back via the middlebox"),
], T0 + 0.0005)
wrpcap("pcaps/example-sub-t1.pcap", t1)
wrpcap("pcaps/example-sub-h2.pcap", h2)
