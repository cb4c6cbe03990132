# A controller that is not strata's, for test/p4runtime/python.test.ts: Python's grpcio and
# protobuf (Debian's python3-grpcio, python3-protobuf), with stubs the test makes from the
# official definitions (proto/p4runtime) with grpc_tools.protoc. It checks a few of the P4Runtime
# 1.4 rules the server follows against the IP router example's device r, and prints one line per
# check: PASS or FAIL, the section, and what it saw. Usage: python-client.py HOST:PORT DEVICE_ID
import queue, sys, threading, time
import grpc
from google.protobuf import any_pb2
from p4.v1 import p4runtime_pb2 as p, p4runtime_pb2_grpc as g
from p4.config.v1 import p4info_pb2

addr, device = sys.argv[1], int(sys.argv[2])
ch = grpc.insecure_channel(addr)
stub = g.P4RuntimeStub(ch)
results = []
def check(name, ok, detail=""):
    results.append(ok); print(("PASS " if ok else "FAIL ") + name + (f"  ({detail})" if detail else ""))

class Stream:
    def __init__(self):
        self.q = queue.Queue(); self.out = queue.Queue(); self.err = None
        self.call = stub.StreamChannel(iter(self.out.get, None))
        threading.Thread(target=self._rx, daemon=True).start()
    def _rx(self):
        try:
            for m in self.call: self.q.put(m)
        except grpc.RpcError as e:
            self.err = e; self.q.put(e)
    def send(self, m): self.out.put(m)
    def next(self, t=60): return self.q.get(timeout=t)  # a hang after: a busy machine answers late, not never
    def close(self): self.out.put(None)

def arb(s, eid, role=None, config=None):
    m = p.StreamMessageRequest()
    m.arbitration.device_id = device; m.arbitration.election_id.low = eid
    if role is not None: m.arbitration.role.name = role
    if config is not None: m.arbitration.role.config.CopyFrom(config)
    s.send(m)

info = stub.GetForwardingPipelineConfig(p.GetForwardingPipelineConfigRequest(device_id=device)).config.p4info
table = {t.preamble.alias: t for t in info.tables}
action = {a.preamble.alias: a.preamble.id for a in info.actions}
fwd = table["ip_r_forward"].preamble.id

s = Stream(); arb(s, 1)
check("§5.3 primary", s.next().arbitration.status.code == 0)

def entry(dst, out, **kw):
    te = p.TableEntry(table_id=fwd, **kw)
    fm = te.match.add(); fm.field_id = 1; fm.lpm.value = bytes(dst); fm.lpm.prefix_len = 16
    te.action.action.action_id = action["forward_out"]
    pa = te.action.action.params.add(); pa.param_id = 1; pa.value = bytes([out])
    return te

def write(*updates, role=""):
    req = p.WriteRequest(device_id=device, role=role); req.election_id.low = 1
    for t, te in updates:
        u = req.updates.add(); u.type = t; u.entity.table_entry.CopyFrom(te)
    return stub.Write(req)

def read(te):
    req = p.ReadRequest(device_id=device); req.entities.add().table_entry.CopyFrom(te)
    return [e for r in stub.Read(req) for e in r.entities]

a = entry([10, 1, 0, 0], 1, metadata=b"cookie", controller_metadata=2**64 - 1)
write((p.Update.INSERT, a))
key = p.TableEntry(table_id=fwd); key.match.extend(a.match)
got = read(key)
check("§8.2 read-write symmetry: the entry read back is the one written (metadata, controller_metadata)", len(got) == 1 and got[0].table_entry == a, str(got[0].table_entry).replace("\n", " ") if got else "none")
check("§9.1.7 no counter_data unless asked", not got[0].table_entry.HasField("counter_data"))
asked = p.TableEntry(); asked.CopyFrom(key); asked.counter_data.SetInParent()
got = read(asked)
check("§9.1.7 counter_data when asked", got[0].table_entry.HasField("counter_data"))
d = read(p.TableEntry(table_id=fwd, is_default_action=True))
check("§9.1.3 constant default entry reads with is_default_action", len(d) == 1 and d[0].table_entry.action.action.action_id == action["forward_miss"])
check("§9.1.6 per-table read holds no default entry", all(not e.table_entry.is_default_action for e in read(p.TableEntry(table_id=fwd))))
try:
    list(stub.Read(p.ReadRequest(device_id=device, entities=[p.Entity()]))); check("§13.2 empty Entity", False)
except grpc.RpcError as e: check("§13.2 empty Entity is INVALID_ARGUMENT", e.code() == grpc.StatusCode.INVALID_ARGUMENT, e.code().name)
try:
    write(role="nobody"); check("§12 unknown role", False)
except grpc.RpcError as e: check("§12 a Write for an unknown role is NOT_FOUND", e.code() == grpc.StatusCode.NOT_FOUND, e.code().name)
m = p.StreamMessageRequest(); m.packet.payload = b"\x45" + b"\x00" * 40
md = m.packet.metadata.add(); md.metadata_id = 1; md.value = b"\x01"
s.send(m)
r = s.next()
check("§16.1 a packet-out missing metadata gets a StreamError INVALID_ARGUMENT with it", r.HasField("error") and r.error.canonical_code == 3 and r.error.packet_out.packet_out == m.packet, r.error.message)
big = [entry([10, i, 0, 0], 1, metadata=bytes([i]) * (2 * 1024 * 1024)) for i in (2, 3, 4)]
write(*[(p.Update.INSERT, b) for b in big])
req = p.ReadRequest(device_id=device); req.entities.add().table_entry.table_id = fwd
responses = list(stub.Read(req))
check("§13.3 a 6 MiB Write is taken; the Read comes in responses a default client takes", sum(len(r.entities) for r in responses) == 4 and len(responses) >= 2, f"{len(responses)} responses")
arb(s, 1, role="other")
r = s.next()
check("§5.3 a role change on a live stream ends it with FAILED_PRECONDITION", isinstance(r, grpc.RpcError) and r.code() == grpc.StatusCode.FAILED_PRECONDITION, r.code().name if isinstance(r, grpc.RpcError) else str(r))
s2 = Stream(); cfg = any_pb2.Any(type_url="type.googleapis.com/acme.Role", value=b"\x08\x01"); arb(s2, 2, role="x", config=cfg)
r = s2.next()
check("§5.3 an unknown role.config is INVALID_ARGUMENT", isinstance(r, grpc.RpcError) and r.code() == grpc.StatusCode.INVALID_ARGUMENT, r.code().name if isinstance(r, grpc.RpcError) else str(r))
s.close(); s2.close()
print(f"{sum(results)}/{len(results)} passed")
sys.exit(0 if all(results) else 1)
