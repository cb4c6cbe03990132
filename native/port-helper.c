// strata serve's port process on Linux without libpcap (the `packet` port backend): what
// src/serve/port-helper.ts does with cap, done with AF_PACKET sockets. Each interface is read
// through a TPACKET_V3 ring: the kernel packs frames into blocks of 128 KB and hands a block over
// when it is full or BLOCK_MS after its first frame, so one wakeup carries hundreds of frames
// at high rates and a frame waits at most BLOCK_MS at low ones. The frames of every block ready
// are written to stdout as records in one large write. Frames strata sends come in on stdin as
// records and go out of the interface with sendmmsg, up to SEND_BATCH a system call, on the same
// socket (so they are never captured back: Linux does not hand a packet socket its own frames).
//
// Arguments, as port-helper.ts takes them: BUFFER INDEX=IFACE ... (the ring's size in bytes, then
// each port's index in strata serve and its interface). Or --selftest: echoes the records read on
// stdin to stdout through the same reader and writer, for the tests of the framing.
//
// Records both ways (src/serve/port-records.ts): kind u8, port u8, flags u16 (bit 0: the frame was
// cut), length u32, little-endian, then the bytes.
//   to strata:   FRAME, OPENED (JSON: the ports' link types as cap names them), FAILED (a one-line
//                reason; then the process ends), SEND_ERROR (one a frame not sent), DROPPED (u32:
//                frames the kernel dropped because the ring was full, since the last DROPPED)
//   from strata: FRAME (to send out of the port)
//
// The process ends when stdin does (strata went away or closed the port), with what it was given
// sent and what it received written; when an interface goes down or away (strata opens the port
// again once it is up); and on SIGTERM, as port-helper.ts does.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if_arp.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { FRAME = 1, OPENED = 2, FAILED = 3, SEND_ERROR = 4, DROPPED = 5 };
enum { HEADER = 8, FLAG_CUT = 1 };
/** Largest frame passed on or sent: libpcap's snapshot length in cap. */
enum { FRAME_MAX = 65535 };
/** Ring blocks of 128 KB (a 64 KB frame fits): a ring of 128 MB has 1,024, which hold 2 s of frames at low rates (a
 * block goes 2 ms after its first frame, however few it holds) and a million 64-byte frames at high ones. */
enum { BLOCK_BYTES = 128 << 10, BLOCK_MS = 2, SLOT = 2048, MAX_PORTS = 255 };
/** Records gathered before a write to stdout; frames sent a system call. */
enum { OUT_FLUSH = 512 << 10, OUT_BYTES = OUT_FLUSH + HEADER + FRAME_MAX + 4, SEND_BATCH = 256 };
/** Bytes read from stdin at a time (at least one whole record of the largest frame). */
enum { IN_BYTES = 1 << 20 };
/** How often the kernel's drop counts are read (ms). */
enum { STATS_MS = 100 };

struct port {
  int index;
  const char *iface;
  int fd;
  unsigned char *ring;
  unsigned blocks;
  unsigned next;
};

static struct port ports[MAX_PORTS];
static int nports;
static unsigned char out[OUT_BYTES];
static size_t outLen;
static unsigned char in[IN_BYTES];
static size_t inLen;

static void writeAll(const unsigned char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(1, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) _exit(errno == EPIPE ? 0 : 1); // strata is gone: so is this process
    p += w;
    n -= (size_t)w;
  }
}

static void flush(void) {
  writeAll(out, outLen);
  outLen = 0;
}

static void put32(unsigned char *p, uint32_t v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
  p[2] = (unsigned char)(v >> 16);
  p[3] = (unsigned char)(v >> 24);
}

/** Room for a record of `len` bytes at the end of `out`, its header written; flushes first when full. */
static unsigned char *record(int kind, int port, size_t len, int flags) {
  if (outLen + HEADER + len > OUT_BYTES) flush();
  unsigned char *r = out + outLen;
  r[0] = (unsigned char)kind;
  r[1] = (unsigned char)port;
  r[2] = (unsigned char)flags;
  r[3] = (unsigned char)(flags >> 8);
  put32(r + 4, (uint32_t)len);
  outLen += HEADER + len;
  return r + HEADER;
}

static void putRecord(int kind, int port, const void *body, size_t len, int flags) {
  memcpy(record(kind, port, len, flags), body, len);
}

static void putText(int kind, int port, const char *text) {
  putRecord(kind, port, text, strlen(text), 0);
}

static _Noreturn void fail(int port, const char *what, const char *iface) {
  char line[512];
  snprintf(line, sizeof line, "%s%s%s", iface == NULL ? "" : iface, iface == NULL ? "" : ": ", what);
  putText(FAILED, port, line);
  flush();
  exit(2);
}

/** The link type of an ARPHRD_ type, as cap names libpcap's (src/serve/ports.ts CAP_LINK_TYPES). */
static void linkType(int arphrd, char *name, size_t size) {
  if (arphrd == ARPHRD_ETHER || arphrd == ARPHRD_LOOPBACK) snprintf(name, size, "ETHERNET");
  else if (arphrd == ARPHRD_NONE) snprintf(name, size, "RAW");
  else if (arphrd == ARPHRD_IEEE80211_RADIOTAP) snprintf(name, size, "IEEE802_11_RADIO");
  else snprintf(name, size, "ARPHRD_%d", arphrd);
}

/** Opens p's interface: a packet socket, its ring mapped, bound, promiscuous. Returns its ARPHRD_ type. */
static int openPort(struct port *p, size_t bufferBytes) {
  int ifindex = (int)if_nametoindex(p->iface);
  if (ifindex == 0) fail(p->index, strerror(errno), p->iface);
  // Protocol 0 until bound: no frame arrives before the ring is there.
  p->fd = socket(AF_PACKET, SOCK_RAW, 0);
  if (p->fd < 0) fail(p->index, strerror(errno), p->iface);
  struct ifreq ifr = { 0 };
  snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", p->iface);
  if (ioctl(p->fd, SIOCGIFHWADDR, &ifr) < 0) fail(p->index, strerror(errno), p->iface);
  int version = TPACKET_V3;
  if (setsockopt(p->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0)
    fail(p->index, "TPACKET_V3 is not supported", p->iface);
  p->blocks = (unsigned)(bufferBytes / BLOCK_BYTES);
  if (p->blocks < 2) p->blocks = 2;
  struct tpacket_req3 req = { .tp_block_size = BLOCK_BYTES,
                              .tp_block_nr = p->blocks,
                              .tp_frame_size = SLOT,
                              .tp_frame_nr = BLOCK_BYTES / SLOT * p->blocks,
                              .tp_retire_blk_tov = BLOCK_MS };
  if (setsockopt(p->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0)
    fail(p->index, strerror(errno), p->iface);
  p->ring = mmap(NULL, (size_t)BLOCK_BYTES * p->blocks, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
  if (p->ring == MAP_FAILED) fail(p->index, strerror(errno), p->iface);
  struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = ifindex };
  if (bind(p->fd, (struct sockaddr *)&sll, sizeof sll) < 0) fail(p->index, strerror(errno), p->iface);
  struct packet_mreq mr = { .mr_ifindex = ifindex, .mr_type = PACKET_MR_PROMISC };
  if (setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0)
    fail(p->index, strerror(errno), p->iface);
  return ifr.ifr_hwaddr.sa_family;
}

/** One frame of a ring block as a FRAME record; its VLAN tag, which the kernel took off, put back (as libpcap does). */
static void putFrame(const struct port *p, const struct tpacket3_hdr *h) {
  const unsigned char *bytes = (const unsigned char *)h + h->tp_mac;
  size_t len = h->tp_snaplen;
  int tagged = (h->tp_status & TP_STATUS_VLAN_VALID) != 0 && len >= 12;
  size_t whole = len + (tagged ? 4 : 0);
  int cut = h->tp_snaplen < h->tp_len || whole > FRAME_MAX;
  if (whole > FRAME_MAX) whole = FRAME_MAX;
  unsigned char *r = record(FRAME, p->index, whole, cut ? FLAG_CUT : 0);
  if (!tagged) {
    memcpy(r, bytes, whole);
    return;
  }
  uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) != 0 ? h->hv1.tp_vlan_tpid : ETH_P_8021Q;
  memcpy(r, bytes, 12);
  r[12] = (unsigned char)(tpid >> 8);
  r[13] = (unsigned char)tpid;
  r[14] = (unsigned char)(h->hv1.tp_vlan_tci >> 8);
  r[15] = (unsigned char)h->hv1.tp_vlan_tci;
  memcpy(r + 16, bytes + 12, whole - 16);
}

/** Every block of p's ring the kernel handed over, as records; returns the frames read. */
static long readRing(struct port *p) {
  long frames = 0;
  for (;;) {
    struct tpacket_block_desc *b = (void *)(p->ring + (size_t)p->next * BLOCK_BYTES);
    if ((__atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) == 0) return frames;
    const unsigned char *at = (const unsigned char *)b + b->hdr.bh1.offset_to_first_pkt;
    for (uint32_t i = 0; i < b->hdr.bh1.num_pkts; i++) {
      const struct tpacket3_hdr *h = (const void *)at;
      putFrame(p, h);
      at += h->tp_next_offset;
    }
    frames += b->hdr.bh1.num_pkts;
    __atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    p->next = (p->next + 1) % p->blocks;
  }
}

/** What the kernel dropped on each port since the last look (PACKET_STATISTICS counts from its last read). */
static void putDrops(void) {
  for (int k = 0; k < nports; k++) {
    struct tpacket_stats_v3 st;
    socklen_t n = sizeof st;
    if (getsockopt(ports[k].fd, SOL_PACKET, PACKET_STATISTICS, &st, &n) < 0 || st.tp_drops == 0) continue;
    unsigned char *r = record(DROPPED, ports[k].index, 4, 0);
    put32(r, st.tp_drops);
  }
}

static struct port *portOf(int index) {
  for (int k = 0; k < nports; k++)
    if (ports[k].index == index) return &ports[k];
  return NULL;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** Sends the frames gathered in `msgs` out of their ports, `n` of them, in order; a frame refused is a SEND_ERROR. */
static void sendBatch(struct mmsghdr *msgs, int *port, int n) {
  int at = 0;
  while (at < n) {
    // A run of frames for one port: one sendmmsg.
    int end = at + 1;
    while (end < n && port[end] == port[at]) end++;
    struct port *p = portOf(port[at]);
    int sent = sendmmsg(p->fd, msgs + at, (unsigned)(end - at), 0);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) {
      putText(SEND_ERROR, p->index, strerror(errno));
      at++;
    } else {
      at += sent;
    }
  }
}

/** The whole records read from stdin: frames sent (or echoed with `echo`); the rest kept for the next read. */
static void takeRecords(int echo) {
  static struct mmsghdr msgs[SEND_BATCH];
  static struct iovec iov[SEND_BATCH];
  static int port[SEND_BATCH];
  int n = 0;
  size_t at = 0;
  while (at + HEADER <= inLen) {
    uint32_t len = get32(in + at + 4);
    if (len > FRAME_MAX) fail(in[at + 1], "a record from strata longer than a frame", NULL);
    if (at + HEADER + len > inLen) break;
    const unsigned char *body = in + at + HEADER;
    if (echo) {
      putRecord(in[at], in[at + 1], body, len, in[at + 2] | in[at + 3] << 8);
    } else if (in[at] == FRAME && portOf(in[at + 1]) != NULL) {
      iov[n] = (struct iovec){ .iov_base = (void *)body, .iov_len = len };
      msgs[n] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[n], .msg_iovlen = 1 } };
      port[n++] = in[at + 1];
      if (n == SEND_BATCH) sendBatch(msgs, port, n), n = 0;
    }
    at += HEADER + len;
  }
  sendBatch(msgs, port, n);
  memmove(in, in + at, inLen - at);
  inLen -= at;
}

/** Reads what stdin has; returns 0 at its end. */
static int readStdin(int echo) {
  ssize_t r = read(0, in + inLen, IN_BYTES - inLen);
  if (r < 0) return errno == EINTR || errno == EAGAIN;
  if (r == 0) return 0;
  inLen += (size_t)r;
  takeRecords(echo);
  return 1;
}

static long long nowMs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/** Relays frames both ways until stdin ends (returns) or an interface goes down or away (the process ends). */
static void relay(void) {
  struct pollfd pf[MAX_PORTS + 1];
  pf[0] = (struct pollfd){ .fd = 0, .events = POLLIN };
  for (int k = 0; k < nports; k++) pf[k + 1] = (struct pollfd){ .fd = ports[k].fd, .events = POLLIN };
  long long stats = nowMs();
  for (;;) {
    // Blocks already handed over are read before sleeping: poll wakes only for new ones.
    long frames = 0;
    for (int k = 0; k < nports; k++) frames += readRing(&ports[k]);
    if (nowMs() - stats >= STATS_MS) putDrops(), stats = nowMs();
    if (outLen > 0) flush();
    // While frames arrive, stdin is looked at between blocks without sleeping.
    if (poll(pf, (nfds_t)nports + 1, frames > 0 ? 0 : STATS_MS) < 0 && errno != EINTR)
      fail(255, strerror(errno), NULL);
    for (int k = 0; k < nports; k++) {
      if ((pf[k + 1].revents & (POLLERR | POLLHUP | POLLNVAL)) == 0) continue;
      int err = 0;
      socklen_t n = sizeof err;
      getsockopt(ports[k].fd, SOL_SOCKET, SO_ERROR, &err, &n);
      readRing(&ports[k]);
      putDrops();
      flush();
      fprintf(stderr, "%s: %s\n", ports[k].iface, strerror(err != 0 ? err : ENETDOWN));
      exit(1);
    }
    if ((pf[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 && !readStdin(0)) return;
  }
}

static int selftest(void) {
  while (readStdin(1))
    if (outLen > 0) flush();
  flush();
  return 0;
}

int main(int argc, char **argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 2 && strcmp(argv[1], "--selftest") == 0) return selftest();
  if (argc < 3 || argc - 2 > MAX_PORTS) fail(255, "usage: strata-port-helper BUFFER INDEX=IFACE ...", NULL);
  size_t bufferBytes = strtoull(argv[1], NULL, 10);
  char types[MAX_PORTS * 24 + 2] = "[";
  for (int k = 2; k < argc; k++) {
    struct port *p = &ports[nports++];
    // argv is left as it is: it is what ps and /proc show.
    char *eq;
    p->index = (int)strtol(argv[k], &eq, 10);
    if (*eq != '=' || p->index < 0 || p->index > MAX_PORTS) fail(255, "a port must be INDEX=IFACE", argv[k]);
    p->iface = eq + 1;
    char name[24];
    linkType(openPort(p, bufferBytes), name, sizeof name);
    snprintf(types + strlen(types), sizeof types - strlen(types), "%s\"%s\"", k > 2 ? "," : "", name);
  }
  strcat(types, "]");
  putText(OPENED, 0, types);
  flush();
  relay();
  // stdin ended: what was received goes out with the last drop counts.
  for (int k = 0; k < nports; k++) readRing(&ports[k]);
  putDrops();
  flush();
  return 0;
}
