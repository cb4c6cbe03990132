// What sending a 60-byte frame out of an interface costs through an AF_PACKET socket, three ways: a
// send() a frame (what libpcap's pcap_sendpacket, and so cap, does), sendmmsg() 64 frames a call,
// and a PACKET_TX_RING flushed every 256 frames. Prints the CPU time per frame, and its kernel part.
// Run by scripts/packet-costs.sh.  Usage: send IFACE send|mmsg|ring FRAMES [bypass]
#define _GNU_SOURCE
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>

enum { FRAME_LEN = 60, MMSG_BATCH = 64, RING_BATCH = 256, RING_FRAME = 2048, RING_BLOCK = 1 << 16, RING_BLOCKS = 64 };
static unsigned char frame[FRAME_LEN];

/** CPU time so far in µs; *sys gets its kernel part. */
static double cpu(double *sys) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  *sys = r.ru_stime.tv_sec * 1e6 + r.ru_stime.tv_usec;
  return *sys + r.ru_utime.tv_sec * 1e6 + r.ru_utime.tv_usec;
}

static void by_send(int fd, long n) {
  for (long i = 0; i < n; i++) send(fd, frame, FRAME_LEN, 0);
}

static void by_mmsg(int fd, long n) {
  struct mmsghdr m[MMSG_BATCH];
  struct iovec v[MMSG_BATCH];
  memset(m, 0, sizeof m);
  for (int i = 0; i < MMSG_BATCH; i++) {
    v[i].iov_base = frame;
    v[i].iov_len = FRAME_LEN;
    m[i].msg_hdr.msg_iov = &v[i];
    m[i].msg_hdr.msg_iovlen = 1;
  }
  for (long i = 0; i < n; i += MMSG_BATCH) sendmmsg(fd, m, MMSG_BATCH, 0);
}

static int by_ring(int fd, long n) {
  int version = TPACKET_V2;
  setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version);
  struct tpacket_req req = { RING_BLOCK, RING_BLOCKS, RING_FRAME, RING_BLOCK / RING_FRAME * RING_BLOCKS };
  if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) < 0) return perror("PACKET_TX_RING"), 1;
  unsigned char *ring = mmap(0, (size_t)RING_BLOCK * RING_BLOCKS, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (ring == MAP_FAILED) return perror("mmap"), 1;
  unsigned at = 0;
  for (long i = 0; i < n;) {
    for (int k = 0; k < RING_BATCH && i < n; k++, i++) {
      struct tpacket2_hdr *h = (void *)(ring + (size_t)at * RING_FRAME);
      while (h->tp_status != TP_STATUS_AVAILABLE) send(fd, NULL, 0, 0);
      memcpy((unsigned char *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll), frame, FRAME_LEN);
      h->tp_len = FRAME_LEN;
      __sync_synchronize();
      h->tp_status = TP_STATUS_SEND_REQUEST;
      at = (at + 1) % req.tp_frame_nr;
    }
    send(fd, NULL, 0, 0);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) return fprintf(stderr, "usage: send IFACE send|mmsg|ring FRAMES [bypass]\n"), 2;
  const char *mode = argv[2];
  long n = atol(argv[3]);
  int fd = socket(AF_PACKET, SOCK_RAW, 0);
  struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = (int)if_nametoindex(argv[1]) };
  if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof sll) < 0) return perror(argv[1]), 1;
  // To 02:00:00:00:0b:99, a MAC address the receiving end does not have: it drops them before IP.
  memcpy(frame, "\x02\x00\x00\x00\x0b\x99\x02\x00\x00\x00\x0b\xfe\x08\x00\x45", 15);
  int one = 1;
  if (argc > 4) setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one);
  double sys0, sys1, t0 = cpu(&sys0);
  if (!strcmp(mode, "send")) by_send(fd, n);
  else if (!strcmp(mode, "mmsg")) by_mmsg(fd, n);
  else if (by_ring(fd, n) != 0) return 1;
  double t1 = cpu(&sys1);
  printf("send %s%s: %ld frames, %.2f µs CPU a frame (%.2f in the kernel)\n", mode, argc > 4 ? " +qdisc bypass" : "", n,
         (t1 - t0) / n, (sys1 - sys0) / n);
  return 0;
}
