// What receiving a frame costs, two ways: libpcap opened as cap opens it (immediate mode, snapshot
// length 65535, a 128 MB buffer, non-blocking, poll() then pcap_dispatch), and an AF_PACKET
// TPACKET_V3 ring (1 MB blocks, each handed over full or after 1 ms). Counts FRAMES frames from
// the first to arrive; prints the CPU time per frame, its kernel part, and frames per wakeup.
// Run by scripts/packet-costs.sh.  Usage: recv IFACE pcap|v3 FRAMES  (says "ready" on stderr)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>

enum { BLOCK = 1 << 20, BLOCKS = 128, SLOT = 2048 };
static unsigned char sink[65536];
static long got, wakes;
static double t0, sys0;

static double cpu(double *sys) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  *sys = r.ru_stime.tv_sec * 1e6 + r.ru_stime.tv_usec;
  return *sys + r.ru_utime.tv_sec * 1e6 + r.ru_utime.tv_usec;
}

/** A wakeup; the clock starts at the first. */
static void woken(void) {
  if (wakes++ == 0) t0 = cpu(&sys0);
}

static void each(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes) {
  (void)user;
  memcpy(sink, bytes, h->caplen);
  got++;
}

static int by_pcap(const char *iface, long n) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t *p = pcap_create(iface, err);
  if (p == NULL) return fprintf(stderr, "%s\n", err), 1;
  pcap_set_snaplen(p, 65535);
  pcap_set_promisc(p, 1);
  pcap_set_buffer_size(p, 128 << 20);
  pcap_set_timeout(p, 1000);
  pcap_set_immediate_mode(p, 1);
  if (pcap_activate(p) != 0) return fprintf(stderr, "%s\n", pcap_geterr(p)), 1;
  pcap_setnonblock(p, 1, err);
  struct pollfd pf = { .fd = pcap_get_selectable_fd(p), .events = POLLIN };
  fprintf(stderr, "ready\n");
  while (got < n) {
    poll(&pf, 1, -1);
    woken();
    while (pcap_dispatch(p, 1, each, NULL) > 0) {}
  }
  return 0;
}

static int by_v3(const char *iface, long n) {
  int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  int version = TPACKET_V3;
  setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version);
  struct tpacket_req3 req = { .tp_block_size = BLOCK, .tp_block_nr = BLOCKS, .tp_frame_size = SLOT,
                              .tp_frame_nr = BLOCK / SLOT * BLOCKS, .tp_retire_blk_tov = 1 };
  if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0) return perror("PACKET_RX_RING"), 1;
  unsigned char *ring = mmap(0, (size_t)BLOCK * BLOCKS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
                             .sll_ifindex = (int)if_nametoindex(iface) };
  if (ring == MAP_FAILED || bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) return perror(iface), 1;
  struct pollfd pf = { .fd = fd, .events = POLLIN };
  fprintf(stderr, "ready\n");
  for (unsigned b = 0; got < n;) {
    struct tpacket_block_desc *block = (void *)(ring + (size_t)b * BLOCK);
    if ((block->hdr.bh1.block_status & TP_STATUS_USER) == 0) {
      poll(&pf, 1, -1);
      woken();
      continue;
    }
    struct tpacket3_hdr *h = (void *)((unsigned char *)block + block->hdr.bh1.offset_to_first_pkt);
    for (unsigned i = 0; i < block->hdr.bh1.num_pkts; i++) {
      memcpy(sink, (unsigned char *)h + h->tp_mac, h->tp_snaplen);
      got++;
      h = (void *)((unsigned char *)h + h->tp_next_offset);
    }
    block->hdr.bh1.block_status = TP_STATUS_KERNEL;
    b = (b + 1) % BLOCKS;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: recv IFACE pcap|v3 FRAMES\n"), 2;
  long n = atol(argv[3]);
  if ((!strcmp(argv[2], "pcap") ? by_pcap(argv[1], n) : by_v3(argv[1], n)) != 0) return 1;
  double sys1, t1 = cpu(&sys1);
  printf("recv %s: %ld frames, %.2f µs CPU a frame (%.2f in the kernel), %.1f frames a wakeup\n", argv[2], got,
         (t1 - t0) / got, (sys1 - sys0) / got, (double)got / wakes);
  return 0;
}
