#!/usr/bin/env bash
# What a frame costs on a packet socket, apart from strata and cap: the figures behind docs/cli.md's
# "Faster: where a frame's time goes". Builds scripts/packet-costs/{send,recv}.c, joins two network
# namespaces by a veth pair, and prints the CPU time per 60-byte frame of
#   sending:   a send() a frame (cap's way), sendmmsg 64 a call, a PACKET_TX_RING, each without and
#              with PACKET_QDISC_BYPASS;
#   receiving: libpcap opened as cap opens it (immediate mode), and a TPACKET_V3 ring (1 ms blocks),
#              the frames sent from the other namespace by the send program.
# Needs root, iproute2, gcc and libpcap's headers (apt-get install gcc libpcap-dev).
#
#   scripts/packet-costs.sh            # 1,000,000 frames sent each way, 400,000 received
#   FRAMES=200000 scripts/packet-costs.sh

set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${FRAMES:-1000000}
RECEIVED=${RECEIVED:-$((FRAMES * 2 / 5))}
[[ $(id -u) -eq 0 ]] || { echo "packet-costs: needs root (network namespaces, raw sockets)" >&2; exit 2; }
for cmd in ip gcc; do command -v "$cmd" >/dev/null || { echo "packet-costs: needs $cmd" >&2; exit 2; }; done

S=strata-costs-s-$$ R=strata-costs-r-$$
work=$(mktemp -d)
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  for n in $S $R; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
gcc -O2 -o "$work/send" scripts/packet-costs/send.c
gcc -O2 -o "$work/recv" scripts/packet-costs/recv.c -lpcap
ip netns add "$S"
ip netns add "$R"
ip link add vS netns "$S" type veth peer name vR netns "$R"
ip -n "$S" link set vS up
ip -n "$R" link set vR address 02:00:00:00:0b:02 up

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in send mmsg ring; do
  ip netns exec "$S" "$work/send" vS "$mode" "$FRAMES"
  ip netns exec "$S" "$work/send" vS "$mode" "$FRAMES" bypass
done
for mode in pcap v3; do
  ip netns exec "$R" "$work/recv" vR "$mode" "$RECEIVED" >"$work/out" 2>"$work/err" &
  receiver=$!
  for _ in $(seq 200); do grep -q ready "$work/err" && break; sleep 0.05; done
  # Frames until the receiver has counted its share (a capture may drop some on the way).
  while kill -0 "$receiver" 2>/dev/null; do ip netns exec "$S" "$work/send" vS send 50000 >/dev/null; done
  wait "$receiver"
  cat "$work/out"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
