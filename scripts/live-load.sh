#!/usr/bin/env bash
# Load on a live port: offered vs forwarded vs reported dropped.
#
# Builds the setup of test/serve/live.test.ts (host namespaces A and B, each joined by a veth
# pair to namespace E where `strata serve` runs examples/live-router), then for each rate replays
# UDP frames from A to B through r with `tcpreplay --pps` and prints one line per rate:
#
#   asked/s    the rate asked of tcpreplay (--pps), or top: as fast as it can (--topspeed)
#   sent/s     the rate it kept (its "Rated"): on a busy machine, less than asked at the higher rates
#   offered    frames tcpreplay handed to A's interface (its "Actual" less its failures)
#   forwarded  frames strata sent out of eB (summary ports[1].sent; B's interface counted them too)
#   dropped    what strata reports dropped on the way: ports[0]'s droppedByInterface,
#              droppedByCapture and droppedByStrata, the emulation's own drops, and ports[1].unsent
#   silent     offered - forwarded - dropped: frames lost with nothing saying so (should be 0)
#
# and after it, what the frames cost: the CPU time strata's process and its port processes spent
# from the first frame offered to the end of the run, in microseconds per frame offered (and in
# brackets the part spent in the kernel: system time, which for the port processes includes the
# veth's delivery of what they send), and each
# port process's peak resident memory (VmHWM).
#
# It shows how much strata forwards, and that every frame offered is forwarded or reported dropped
# (silent 0). Needs root, iproute2, tcpreplay and a built strata (npm run build) with the package cap.
#
#   scripts/live-load.sh                  # 10000, 30000 and 60000 frames/s, 3 s each
#   RATES="30000 60000" SECONDS_EACH=5 scripts/live-load.sh
#   STRATA=/path/to/dist/src/cli/main.js scripts/live-load.sh   # another build of strata (one without
#                                         port counters: forwarded is what B received, dropped only the emulation's)
#   RATES="top" TOP_FRAMES=1000000 scripts/live-load.sh   # tcpreplay --topspeed, 1,000,000 frames
#   OFFLOADS=off scripts/live-load.sh     # strata's veth ends without segmentation and receive offloads: libpcap
#                                         # then gives a frame a slot of about 2 KB in the capture buffer, not 64 KB
#   NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" scripts/live-load.sh   # node's flags for strata's process
#   BACKEND=cap scripts/live-load.sh      # strata serve --port-backend cap (or packet); strata's default without it

set -euo pipefail
cd "$(dirname "$0")/.."

RATES=${RATES:-"10000 30000 60000"}
SECONDS_EACH=${SECONDS_EACH:-3}
TOP_FRAMES=${TOP_FRAMES:-1000000}
OFFLOADS=${OFFLOADS:-on}
STRATA=${STRATA:-dist/src/cli/main.js}
NODE_ARGS=${NODE_ARGS:-}
BACKEND=${BACKEND:-}
SPEC=examples/live-router/network.yaml

for cmd in ip tcpreplay node; do
  command -v "$cmd" >/dev/null || { echo "live-load: needs $cmd" >&2; exit 2; }
done
[[ $(id -u) -eq 0 ]] || { echo "live-load: needs root (network namespaces, raw sockets)" >&2; exit 2; }
[[ -f $STRATA ]] || { echo "live-load: no $STRATA (npm run build)" >&2; exit 2; }

A=strata-load-a-$$ B=strata-load-b-$$ E=strata-load-e-$$
work=$(mktemp -d)
serve_pid=""
cleanup() {
  if [[ -n $serve_pid ]] && kill -0 "$serve_pid" 2>/dev/null; then kill -KILL "$serve_pid"; fi
  for n in $A $B $E; do ip netns del "$n" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

for n in $A $B $E; do
  ip netns add "$n"
  ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  ip -n "$n" link set lo up
done
ip link add hA netns "$A" type veth peer name eA netns "$E"
ip link add hB netns "$B" type veth peer name eB netns "$E"
ip -n "$A" link set hA address 02:00:00:00:0a:01 up
ip -n "$B" link set hB address 02:00:00:00:0b:02 up
ip -n "$E" link set eA up
ip -n "$E" link set eB up
if [[ $OFFLOADS == off ]]; then
  command -v ethtool >/dev/null || { echo "live-load: OFFLOADS=off needs ethtool" >&2; exit 2; }
  for i in eA eB; do ip netns exec "$E" ethtool -K "$i" tso off gso off gro off >/dev/null; done
fi

# 1000 frames 02:00:00:00:0a:01 → r (02:00:00:00:0a:fe), UDP 10.0.1.1 → 10.0.2.3: r forwards them to
# B, whose kernel drops them quietly (not its address; no ICMP to come back).
node -e '
  const fs = require("fs");
  const frames = [];
  for (let i = 0; i < 1000; i++) {
    const f = Buffer.alloc(60);
    Buffer.from("02000000" + "0afe" + "020000000a01" + "0800", "hex").copy(f, 0);
    const ip = f.subarray(14, 34);
    ip.writeUInt8(0x45, 0); ip.writeUInt16BE(46, 2); ip.writeUInt8(64, 8); ip.writeUInt8(17, 9);
    Buffer.from([10, 0, 1, 1, 10, 0, 2, 3]).copy(ip, 12);
    let sum = 0;
    for (let k = 0; k < 20; k += 2) sum += ip.readUInt16BE(k);
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
    ip.writeUInt16BE(~sum & 0xffff, 10);
    f.writeUInt16BE(10000 + i, 34); f.writeUInt16BE(9, 36); f.writeUInt16BE(26, 38);
    frames.push(f);
  }
  const head = Buffer.alloc(24);
  head.writeUInt32LE(0xa1b2c3d4, 0); head.writeUInt16LE(2, 4); head.writeUInt16LE(4, 6); head.writeUInt32LE(65535, 16); head.writeUInt32LE(1, 20);
  const parts = [head];
  for (const f of frames) { const r = Buffer.alloc(16); r.writeUInt32LE(f.length, 8); r.writeUInt32LE(f.length, 12); parts.push(r, f); }
  fs.writeFileSync(process.argv[1], Buffer.concat(parts));
' "$work/frames.pcap"

counter() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# CPU time of process $1 so far, in clock ticks (user + system), or 0 once it is gone; sys_ticks: the system part.
ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }' || echo 0; }
sys_ticks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $13 }' || echo 0; }
hz=$(getconf CLK_TCK)
# Peak resident memory of process $1 in kB.
peak_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; port backend: ${BACKEND:-the default}; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%9s %9s %9s %9s %9s %9s %7s   %s\n' "asked/s" "sent/s" "offered" "forwarded" "dropped" "silent" "fwd %" \
  "dropped by: interface, capture, strata, emulation, unsent; CPU µs/frame (in the kernel): strata, each port process; port peak RSS MB"
for rate in $RATES; do
  if [[ $rate == top ]]; then count=$TOP_FRAMES pace=--topspeed; else count=$((rate * SECONDS_EACH)) pace=--pps=$rate; fi
  : >"$work/err"
  ip netns exec "$E" node $NODE_ARGS "$STRATA" serve "$SPEC" --port lanA:hostA=eA --port lanB:hostB=eB ${BACKEND:+--port-backend "$BACKEND"} --json >"$work/summary.json" 2>"$work/err" &
  serve_pid=$!
  for _ in $(seq 200); do grep -q '^serving' "$work/err" && break; sleep 0.05; done
  grep -q '^serving' "$work/err" || { cat "$work/err" >&2; exit 1; }
  b0=$(counter "$B" hB rx_packets)
  ports=$(pgrep -P "$serve_pid" | tr '\n' ' ')
  t0=$(ticks "$serve_pid") s0=$(sys_ticks "$serve_pid")
  declare -A p0=() q0=()
  for p in $ports; do p0[$p]=$(ticks "$p") q0[$p]=$(sys_ticks "$p"); done
  replay=$(ip netns exec "$A" tcpreplay -i hA "$pace" --loop=$(((count + 999) / 1000)) --limit="$count" "$work/frames.pcap" 2>&1)
  actual=$(sed -n 's/^Actual: \([0-9]*\) packets.*/\1/p' <<<"$replay")
  failed=$(sed -n 's/^[[:space:]]*Failed packets:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$replay")
  kept=$(sed -n 's/^Rated: .* \([0-9.]*\) pps.*/\1/p' <<<"$replay")
  sleep 2 # strata works off what it has taken
  t1=$(ticks "$serve_pid") s1=$(sys_ticks "$serve_pid")
  pus="" psys="" rss=""
  for p in $ports; do
    pus="$pus $((($(ticks "$p") - p0[$p]) * 1000000 / hz))"
    psys="$psys $((($(sys_ticks "$p") - q0[$p]) * 1000000 / hz))"
    rss="$rss $(($(peak_kb "$p") / 1024))"
  done
  kill -INT "$serve_pid"
  wait "$serve_pid" || true
  serve_pid=""
  grep -h "refused frames" "$work/err" >&2 || true # why a port could not send (its interface said)
  b1=$(counter "$B" hB rx_packets)
  node -e '
    const [file, rate, kept, actual, failed, arrivedB, strataUs, strataSys, portsUs, portsSys, rss] = process.argv.slice(1);
    const s = JSON.parse(require("fs").readFileSync(file, "utf8"));
    // A strata from before the port counters: what B received is what it forwarded, and it reports no drops but its own.
    const none = { droppedByInterface: null, droppedByCapture: null, droppedByStrata: null, sent: Number(arrivedB), unsent: null };
    const [a, b] = s.ports ?? [none, none];
    const offered = Number(actual) - Number(failed);
    const parts = [a.droppedByInterface, a.droppedByCapture, a.droppedByStrata, s.packets.dropped, b.unsent];
    const dropped = parts.reduce((n, x) => n + (x ?? 0), 0);
    const forwarded = b.sent;
    const pct = offered > 0 ? ((100 * forwarded) / offered).toFixed(1) : "-";
    const us = (t) => (offered > 0 ? (Number(t) / offered).toFixed(2) : "-");
    console.log([rate, Math.round(Number(kept)), offered, forwarded, dropped, offered - forwarded - dropped].map((x) => String(x).padStart(9)).join(" ") + " " + pct.padStart(7) + "   " + parts.join(", ") + `; ${us(strataUs)} (${us(strataSys)}), ${portsUs.trim().split(" ").map((t, i) => `${us(t)} (${us(portsSys.trim().split(" ")[i])})`).join(" ")}; ${rss.trim()}  (B received ${arrivedB})`);
  ' "$work/summary.json" "$rate" "${kept:-0}" "$actual" "${failed:-0}" "$((b1 - b0))" "$(((t1 - t0) * 1000000 / hz))" "$(((s1 - s0) * 1000000 / hz))" "$pus" "$psys" "$rss"
done
