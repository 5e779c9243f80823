// SPDX-License-Identifier: GPL-2.0
/*
 * pf_xsk: receive the device model's generator streams on AF_XDP sockets,
 * one per queue, and check that every stream arrived complete and in order.
 *
 *   pf_xsk [-c|-z] [-w] [-f] [-H MS] [-u N] [-t SECS] [-W FILE] IFNAME QUEUE[,QUEUE...] EXPECTED
 *
 * It loads a native XDP program that redirects every frame to the socket of
 * the queue it came in on (an XSKMAP indexed by rx_queue_index; a queue with
 * no socket passes its frames to the stack), binds one socket per QUEUE, each
 * with its own umem, and reads until EXPECTED generator frames came, or SECS
 * (default 60) passed without a frame once the file named by PF_SINK_SENT
 * exists (the generator is done). -c binds in copy mode, -z in zero-copy
 * mode, neither lets the kernel choose; -w asks for need_wakeup. -f checks
 * the generator's payload pattern (gen --fill 1) byte by byte. -H MS stops
 * reading the sockets for MS milliseconds after the first frame, as an
 * application that is briefly slow: its fill rings run dry. -u gives each
 * umem N buffers of 2 KiB (default and most 4096). -W FILE keeps the sockets
 * bound, once the frames came, until FILE exists (or SECS pass): unbinding
 * restarts the device, which a test's other traffic must not meet.
 *
 * With -T COUNT it sends instead, through each socket's TX ring: COUNT
 * 64-byte UDP frames to port 9000 of -b DSTIP at -m DSTMAC from -a SRCIP,
 * in the generator's format (group 0, node 100 + the queue, the payload
 * filled), and waits until the device has sent them all (the completion
 * ring gave every buffer back); it prints "queue Q mode M sent N completed
 * N" for each socket and exits 0 if all were.
 *
 * With -R REQUEST it is the benchmark's receiver (scripts/bench/guest.sh,
 * as pf-sink is): once bound, it executes the instruction-count marker of
 * scripts/bench/pf-insn.c, hands REQUEST to the host agent, receives, executes
 * the marker again and prints pf-sink's line ("received ... window_ns T
 * span_ns T request ID"), its own lines going to stderr.
 *
 * Each payload carries "PFGN", group (u16), node (u8), 0, seq (u64), little
 * endian (tools/pagefill-sim/src/generator.rs). It prints, for each socket,
 * "queue Q mode M received N dropped D fill_empty F", then one line:
 * "received N streams S out_of_order O missing M duplicates D bad B", and
 * exits 0 if every stream arrived complete and in order. /tmp/pf_xsk.ready
 * appears once the sockets are bound. No libbpf: the program is six
 * instructions, loaded and attached with bpf(2).
 *
 * SIGUSR1 asks for a report of a phase: it reads until no frame came for
 * 0.3 s, prints "phase received N streams S out_of_order O missing M
 * duplicates D bad B" for the frames since the last such report (or the
 * start), and starts counting again, every stream expected from sequence
 * number 0 (a new generator run) on, the sockets staying bound. A frame
 * with no generator payload is counted only in its socket's line.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <arpa/inet.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

#define MAX_QUEUES 64
#define FRAME_SIZE 2048
#define NUM_FRAMES 4096
#define RING_SIZE 4096
#define MAX_GROUPS 4096
#define MAX_NODES 32
#define PAYLOAD_OFF (14 + 20 + 8)
#define MAGIC "PFGN"

struct ring {
	uint32_t *producer;
	uint32_t *consumer;
	uint32_t *flags;
	void *descs;
	uint32_t mask;
};

struct xsk {
	int fd;
	int queue;
	uint8_t *umem;
	struct ring fill, comp, rx, tx;
	/* Frames read but not yet given back to the fill ring. */
	uint64_t held[NUM_FRAMES];
	unsigned int nheld;
	unsigned long received;
	/* The last descriptor read continues a frame (XDP_PKT_CONTD). */
	int contd;
};

static struct xsk socks[MAX_QUEUES];
static unsigned int nsocks;
static uint64_t next_seq[MAX_GROUPS][MAX_NODES];
static uint8_t seen[MAX_GROUPS][MAX_NODES];
static unsigned long received, out_of_order, duplicates, bad;
static int check_fill;
/* SIGUSR1 came: a phase's report is due (set by the handler, atomically). */
static int phase_asked;
/* -T: frames each socket sends, and where to. */
static unsigned long tx_count;
static uint8_t src_mac[6], dst_mac[6];
static uint32_t src_ip, dst_ip;
static unsigned int num_frames = NUM_FRAMES;

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static void die(const char *what)
{
	fprintf(stderr, "pf_xsk: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The XSKMAP and the program that redirects to it; attached in native mode
 * through a BPF link, which goes with this process.
 */
static int attach_redirect(int ifindex, int *map_fd)
{
	char log[4096] = "";
	union bpf_attr attr;
	int prog_fd, link_fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_XSKMAP;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = MAX_QUEUES;
	*map_fd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (*map_fd < 0)
		die("XSKMAP");

	struct bpf_insn insns[] = {
		/* r2 = ctx->rx_queue_index */
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 2, .src_reg = 1,
		  .off = offsetof(struct xdp_md, rx_queue_index) },
		/* r1 = the map (a 16-byte load of its fd) */
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = 1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = *map_fd },
		{ 0 },
		/* r3 = XDP_PASS: what a queue with no socket does */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 3, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_XDP;
	attr.expected_attach_type = BPF_XDP;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(*insns);
	attr.license = (uintptr_t)"GPL";
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	prog_fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog_fd < 0) {
		fprintf(stderr, "%s\n", log);
		die("loading the XDP program");
	}
	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.target_ifindex = ifindex;
	attr.link_create.attach_type = BPF_XDP;
	attr.link_create.flags = XDP_FLAGS_DRV_MODE;
	link_fd = sys_bpf(BPF_LINK_CREATE, &attr);
	if (link_fd < 0)
		die("attaching the XDP program (native mode)");
	return link_fd;
}

static void map_ring(struct xsk *x, struct ring *r, const struct xdp_ring_offset *off,
		     size_t desc_size, off_t pgoff)
{
	size_t len = off->desc + RING_SIZE * desc_size;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  x->fd, pgoff);

	if (p == MAP_FAILED)
		die("mapping a ring");
	r->producer = (uint32_t *)(p + off->producer);
	r->consumer = (uint32_t *)(p + off->consumer);
	r->flags = (uint32_t *)(p + off->flags);
	r->descs = p + off->desc;
	r->mask = RING_SIZE - 1;
}

/* Gives the frames read back to the fill ring, as many as it has room for. */
static void refill(struct xsk *x)
{
	uint32_t prod = *x->fill.producer;
	uint32_t cons = __atomic_load_n(x->fill.consumer, __ATOMIC_ACQUIRE);
	unsigned int room = RING_SIZE - (prod - cons), n = 0;
	uint64_t *descs = x->fill.descs;

	while (n < room && x->nheld > 0)
		descs[(prod + n++) & x->fill.mask] = x->held[--x->nheld];
	__atomic_store_n(x->fill.producer, prod + n, __ATOMIC_RELEASE);
	/* With need_wakeup the driver may be waiting for this to post. */
	if (n && (__atomic_load_n(x->fill.flags, __ATOMIC_ACQUIRE) & XDP_RING_NEED_WAKEUP))
		recvfrom(x->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

static void bind_queue(struct xsk *x, int ifindex, int queue, uint16_t flags)
{
	struct xdp_umem_reg reg = { 0 };
	struct xdp_mmap_offsets off;
	struct sockaddr_xdp sxdp = { 0 };
	socklen_t optlen = sizeof(off);
	int size = RING_SIZE;
	unsigned int i;

	x->queue = queue;
	x->fd = socket(AF_XDP, SOCK_RAW, 0);
	if (x->fd < 0)
		die("AF_XDP socket");
	x->umem = mmap(NULL, (size_t)num_frames * FRAME_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (x->umem == MAP_FAILED)
		die("umem");
	reg.addr = (uintptr_t)x->umem;
	reg.len = (uint64_t)num_frames * FRAME_SIZE;
	reg.chunk_size = FRAME_SIZE;
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &size, sizeof(size)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &size, sizeof(size)) ||
	    setsockopt(x->fd, SOL_XDP, XDP_RX_RING, &size, sizeof(size)) ||
	    (tx_count && setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &size, sizeof(size))))
		die("setting up the umem and rings");
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		die("XDP_MMAP_OFFSETS");
	map_ring(x, &x->fill, &off.fr, sizeof(uint64_t), XDP_UMEM_PGOFF_FILL_RING);
	map_ring(x, &x->comp, &off.cr, sizeof(uint64_t), XDP_UMEM_PGOFF_COMPLETION_RING);
	map_ring(x, &x->rx, &off.rx, sizeof(struct xdp_desc), XDP_PGOFF_RX_RING);
	if (tx_count)
		map_ring(x, &x->tx, &off.tx, sizeof(struct xdp_desc), XDP_PGOFF_TX_RING);
	for (i = 0; i < num_frames; i++)
		x->held[i] = (uint64_t)(num_frames - 1 - i) * FRAME_SIZE;
	x->nheld = num_frames;
	/* A sender's buffers are its own, to send from. */
	if (!tx_count)
		refill(x);
	sxdp.sxdp_family = AF_XDP;
	sxdp.sxdp_ifindex = ifindex;
	sxdp.sxdp_queue_id = queue;
	sxdp.sxdp_flags = flags;
	if (bind(x->fd, (struct sockaddr *)&sxdp, sizeof(sxdp))) {
		fprintf(stderr, "pf_xsk: binding queue %d (flags %#x): %s\n", queue, flags,
			strerror(errno));
		exit(errno == EOPNOTSUPP ? 4 : 2);
	}
}

/* Checks one frame against its stream. */
static void account(const uint8_t *frame, uint32_t len)
{
	const uint8_t *p = frame + PAYLOAD_OFF;
	uint16_t group;
	uint8_t node;
	uint64_t seq, want;
	uint32_t i;

	if (len < PAYLOAD_OFF + 16 || memcmp(p, MAGIC, 4))
		return;
	memcpy(&group, p + 4, 2);
	node = p[6];
	memcpy(&seq, p + 8, 8);
	if (group >= MAX_GROUPS || node >= MAX_NODES) {
		bad++;
		return;
	}
	if (check_fill)
		for (i = 16; i < len - PAYLOAD_OFF; i++)
			if (p[i] != (uint8_t)(seq + i)) {
				bad++;
				return;
			}
	want = next_seq[group][node];
	seen[group][node] = 1;
	if (seq < want)
		duplicates++;
	else if (seq > want)
		out_of_order++;
	if (seq + 1 > want)
		next_seq[group][node] = seq + 1;
	received++;
}

/* Reads what the socket's rx ring holds; a frame that spans descriptors
 * (XDP_PKT_CONTD) is checked by its first, which holds the payload header.
 */
static unsigned int drain(struct xsk *x)
{
	uint32_t cons = *x->rx.consumer;
	uint32_t prod = __atomic_load_n(x->rx.producer, __ATOMIC_ACQUIRE);
	struct xdp_desc *descs = x->rx.descs;
	unsigned int n = 0;

	for (; cons != prod; cons++, n++) {
		struct xdp_desc *d = &descs[cons & x->rx.mask];

		/* Aligned mode: the address is the frame's, in its chunk. */
		if (d->addr >= (uint64_t)num_frames * FRAME_SIZE ||
		    d->len > FRAME_SIZE - d->addr % FRAME_SIZE) {
			bad++;
			continue;
		}
		if (!x->contd) {
			account(x->umem + d->addr, d->len);
			x->received++;
		}
		x->contd = d->options & XDP_PKT_CONTD;
		x->held[x->nheld++] = d->addr - d->addr % FRAME_SIZE;
	}
	__atomic_store_n(x->rx.consumer, cons, __ATOMIC_RELEASE);
	refill(x);
	return n;
}

/* The marker the benchmark's plugin counts between: this mov, then cpuid. */
static void marker(void)
{
	uint32_t a = 0x50464d4b, b, c = 0, d;

	__asm__ volatile(".byte 0xb8, 0x4b, 0x4d, 0x46, 0x50\n\tcpuid"
			 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 :
			 : "memory");
}

/* Hands @req to the host agent as request file @id in /run/pf. */
static void request(const char *req, const char *id)
{
	char tmp[128], path[128];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "/run/pf/tmp.%s", id);
	snprintf(path, sizeof(path), "/run/pf/req.%s", id);
	f = fopen(tmp, "w");
	/* The host agent takes a request once its last line is ".". */
	if (!f || fprintf(f, "%s\n.\n", req) < 0 || fclose(f) || rename(tmp, path))
		die("request");
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The Internet checksum of len (even) bytes at h, after sum. */
static uint16_t ip_checksum(const uint8_t *h, unsigned int len, uint32_t sum)
{
	unsigned int i;

	for (i = 0; i < len; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* A 64-byte frame of stream (0, node), sequence number seq, at f. */
static void build_frame(uint8_t *f, uint8_t node, uint64_t seq)
{
	const unsigned int len = 64;
	uint8_t *ip = f + 14, *udp = f + 34, *p = f + PAYLOAD_OFF;
	uint16_t v, csum;
	unsigned int i;

	memset(f, 0, len);
	memcpy(f, dst_mac, 6);
	memcpy(f + 6, src_mac, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	v = htons(len - 14);
	memcpy(ip + 2, &v, 2);
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, &src_ip, 4);
	memcpy(ip + 16, &dst_ip, 4);
	csum = htons(ip_checksum(ip, 20, 0));
	memcpy(ip + 10, &csum, 2);
	v = htons(10000 + node);
	memcpy(udp, &v, 2);
	v = htons(9000);
	memcpy(udp + 2, &v, 2);
	v = htons(len - 34);
	memcpy(udp + 4, &v, 2);
	memcpy(p, MAGIC, 4);
	p[6] = node;
	memcpy(p + 8, &seq, 8);
	for (i = 16; i < len - PAYLOAD_OFF; i++)
		p[i] = (uint8_t)(seq + i);
	/* Over the pseudo-header too: a receiver checks every byte. */
	csum = ip_checksum(udp, len - 34, ((uint32_t)ip[12] << 8 | ip[13]) +
			   ((uint32_t)ip[14] << 8 | ip[15]) + ((uint32_t)ip[16] << 8 | ip[17]) +
			   ((uint32_t)ip[18] << 8 | ip[19]) + 17 + (len - 34));
	csum = htons(csum ? csum : 0xffff);
	memcpy(udp + 6, &csum, 2);
}

/* Sends tx_count frames through each socket; true once all completed. */
static int send_all(uint16_t flags, double timeout)
{
	unsigned long sent[MAX_QUEUES] = { 0 }, done[MAX_QUEUES] = { 0 };
	double last = now();
	unsigned int i, all;

	do {
		int moved = 0;

		for (i = 0, all = 0; i < nsocks; i++) {
			struct xsk *x = &socks[i];
			uint32_t cons = *x->comp.consumer;
			uint32_t cprod = __atomic_load_n(x->comp.producer, __ATOMIC_ACQUIRE);
			uint32_t prod = *x->tx.producer;
			uint32_t tcons = __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
			uint64_t *comps = x->comp.descs;
			struct xdp_desc *descs = x->tx.descs;

			for (; cons != cprod; cons++, moved = 1, done[i]++)
				x->held[x->nheld++] = comps[cons & x->comp.mask];
			__atomic_store_n(x->comp.consumer, cons, __ATOMIC_RELEASE);
			while (sent[i] < tx_count && x->nheld && prod - tcons < RING_SIZE) {
				struct xdp_desc *d = &descs[prod++ & x->tx.mask];

				d->addr = x->held[--x->nheld];
				d->len = 64;
				d->options = 0;
				build_frame(x->umem + d->addr, 100 + x->queue, sent[i]++);
				moved = 1;
			}
			__atomic_store_n(x->tx.producer, prod, __ATOMIC_RELEASE);
			if (!(flags & XDP_USE_NEED_WAKEUP) ||
			    (__atomic_load_n(x->tx.flags, __ATOMIC_ACQUIRE) & XDP_RING_NEED_WAKEUP))
				sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
			all += done[i] == tx_count;
		}
		if (moved)
			last = now();
		else
			usleep(100);
	} while (all < nsocks && now() - last < timeout);
	for (i = 0; i < nsocks; i++) {
		struct xdp_options xo = { 0 };
		socklen_t len = sizeof(xo);

		getsockopt(socks[i].fd, SOL_XDP, XDP_OPTIONS, &xo, &len);
		printf("queue %d mode %s sent %lu completed %lu\n", socks[i].queue,
		       xo.flags & XDP_OPTIONS_ZEROCOPY ? "zerocopy" : "copy", sent[i], done[i]);
	}
	return all == nsocks;
}

static void ask_phase(int sig)
{
	(void)sig;
	__atomic_store_n(&phase_asked, 1, __ATOMIC_RELAXED);
}

/* The streams seen, and the frames missing from them: below the highest
 * sequence number of each and never received.
 */
static void tally(unsigned long *streams, unsigned long *missing)
{
	unsigned int g, n;

	*streams = 0;
	*missing = 0;
	for (g = 0; g < MAX_GROUPS; g++)
		for (n = 0; n < MAX_NODES; n++)
			if (seen[g][n]) {
				(*streams)++;
				*missing += next_seq[g][n];
			}
	*missing -= received - duplicates;
}

/* The phase's report (SIGUSR1): once no frame came for 0.3 s, what came
 * since the last; the counts start again.
 */
static void phase_report(FILE *report, struct pollfd *pfd)
{
	unsigned long streams, missing;
	double quiet = now();
	unsigned int i, n;

	while (now() - quiet < 0.3) {
		if (poll(pfd, nsocks, 50) < 0 && errno != EINTR)
			die("poll");
		for (i = 0, n = 0; i < nsocks; i++)
			n += drain(&socks[i]);
		if (n)
			quiet = now();
	}
	tally(&streams, &missing);
	fprintf(report, "phase received %lu streams %lu out_of_order %lu missing %lu ",
		received, streams, out_of_order, missing);
	fprintf(report, "duplicates %lu bad %lu\n", duplicates, bad);
	fflush(report);
	received = 0;
	out_of_order = 0;
	duplicates = 0;
	bad = 0;
	memset(next_seq, 0, sizeof(next_seq));
	memset(seen, 0, sizeof(seen));
}

/* Parses aa:bb:cc:dd:ee:ff into mac. */
static int parse_mac(const char *s, uint8_t *mac)
{
	return sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2],
		      &mac[3], &mac[4], &mac[5]) == 6;
}

int main(int argc, char **argv)
{
	uint16_t flags = 0;
	const char *sent = getenv("PF_SINK_SENT"), *wait_file = NULL;
	double timeout = 60, hold_ms = 0, hold_until = 0, quiet_since;
	struct pollfd pfd[MAX_QUEUES];
	unsigned long expected, missing = 0, streams = 0;
	int ifindex, map_fd, opt, armed = 0;
	const char *req = NULL;
	double start = 0, end = 0, first = 0, last = 0;
	char id[64] = "";
	FILE *report = stdout;
	unsigned int i, n;
	char *list, *tok;

	while ((opt = getopt(argc, argv, "czwfH:u:t:T:m:a:b:R:W:")) != -1) {
		switch (opt) {
		case 'c':
			flags |= XDP_COPY;
			break;
		case 'z':
			flags |= XDP_ZEROCOPY;
			break;
		case 'w':
			flags |= XDP_USE_NEED_WAKEUP;
			break;
		case 'f':
			check_fill = 1;
			break;
		case 'H':
			hold_ms = atof(optarg);
			break;
		case 'u':
			num_frames = strtoul(optarg, NULL, 0);
			if (num_frames < 1 || num_frames > NUM_FRAMES)
				return 2;
			break;
		case 't':
			timeout = atof(optarg);
			break;
		case 'T':
			tx_count = strtoul(optarg, NULL, 0);
			break;
		case 'R':
			req = optarg;
			report = stderr;
			break;
		case 'W':
			wait_file = optarg;
			break;
		case 'm':
			if (!parse_mac(optarg, dst_mac))
				return 2;
			break;
		case 'a':
			if (inet_pton(AF_INET, optarg, &src_ip) != 1)
				return 2;
			break;
		case 'b':
			if (inet_pton(AF_INET, optarg, &dst_ip) != 1)
				return 2;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-c|-z] [-w] [-f] [-H MS] [-u N] [-t SECS] [-W FILE]\n"
				"           IFNAME QUEUES EXPECTED\n"
				"       %s [-c|-z] [-w] -T COUNT -m DSTMAC -a SRCIP -b DSTIP IFNAME QUEUES\n",
				argv[0], argv[0]);
			return 2;
		}
	}
	if (argc - optind != (tx_count ? 2 : 3))
		return 2;
	ifindex = if_nametoindex(argv[optind]);
	if (!ifindex)
		die(argv[optind]);
	if (tx_count) {
		char path[128], mac[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/net/%s/address", argv[optind]);
		f = fopen(path, "r");
		if (!f || !fgets(mac, sizeof(mac), f) || !parse_mac(mac, src_mac))
			die(path);
		fclose(f);
	}
	expected = tx_count ? 0 : strtoul(argv[optind + 2], NULL, 0);
	/* A sender needs no program: its sockets receive nothing. */
	map_fd = -1;
	if (!tx_count)
		attach_redirect(ifindex, &map_fd);
	list = argv[optind + 1];
	for (tok = strtok(list, ","); tok && nsocks < MAX_QUEUES; tok = strtok(NULL, ",")) {
		struct xsk *x = &socks[nsocks];
		union bpf_attr attr;
		uint32_t key = atoi(tok);

		bind_queue(x, ifindex, key, flags);
		memset(&attr, 0, sizeof(attr));
		attr.map_fd = map_fd;
		attr.key = (uintptr_t)&key;
		attr.value = (uintptr_t)&x->fd;
		if (map_fd >= 0 && sys_bpf(BPF_MAP_UPDATE_ELEM, &attr))
			die("XSKMAP update");
		pfd[nsocks].fd = x->fd;
		pfd[nsocks].events = POLLIN;
		nsocks++;
	}
	{
		struct sigaction sa = { .sa_handler = ask_phase };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	close(open("/tmp/pf_xsk.ready", O_CREAT | O_WRONLY, 0644));
	if (tx_count)
		return send_all(flags, timeout) ? 0 : 1;
	if (req) {
		start = now();
		snprintf(id, sizeof(id), "xsk.%d.%llu", getpid(),
			 (unsigned long long)(start * 1e9));
		marker();
		request(req, id);
	}
	/* The quiet time counts from the last frame, or from when the
	 * generator was done, whichever is later.
	 */
	quiet_since = now();
	while (received < expected) {
		double t = now();

		if (!armed && (!sent || access(sent, F_OK) == 0)) {
			armed = 1;
			quiet_since = t;
		}
		if (armed && t - quiet_since > timeout)
			break;
		if (t < hold_until) {
			usleep(1000);
			continue;
		}
		if (poll(pfd, nsocks, 100) < 0 && errno != EINTR)
			die("poll");
		for (i = 0, n = 0; i < nsocks; i++)
			n += drain(&socks[i]);
		if (__atomic_exchange_n(&phase_asked, 0, __ATOMIC_RELAXED)) {
			phase_report(report, pfd);
			quiet_since = now();
			continue;
		}
		if (n) {
			quiet_since = now();
			last = quiet_since;
			if (!first)
				first = last;
			if (hold_ms > 0) {
				hold_until = quiet_since + hold_ms / 1000;
				hold_ms = 0;
			}
		}
	}
	if (req) {
		marker();
		end = now();
	}
	for (quiet_since = now(); wait_file && access(wait_file, F_OK) != 0;) {
		if (now() - quiet_since > timeout)
			break;
		usleep(10000);
	}
	tally(&streams, &missing);
	for (i = 0; i < nsocks; i++) {
		struct xdp_statistics st = { 0 };
		struct xdp_options xo = { 0 };
		socklen_t len = sizeof(st);

		getsockopt(socks[i].fd, SOL_XDP, XDP_STATISTICS, &st, &len);
		len = sizeof(xo);
		getsockopt(socks[i].fd, SOL_XDP, XDP_OPTIONS, &xo, &len);
		fprintf(report, "queue %d mode %s received %lu dropped %llu fill_empty %llu\n",
			socks[i].queue, xo.flags & XDP_OPTIONS_ZEROCOPY ? "zerocopy" : "copy",
			socks[i].received, (unsigned long long)st.rx_dropped,
			(unsigned long long)st.rx_fill_ring_empty_descs);
	}
	fprintf(report, "received %lu streams %lu out_of_order %lu missing %lu ",
		received, streams, out_of_order, missing);
	fprintf(report, "duplicates %lu bad %lu\n", duplicates, bad);
	if (req) {
		printf("received %lu streams %lu out_of_order %lu missing %lu",
		       received, streams, out_of_order, missing);
		printf(" window_ns %llu span_ns %llu request %s\n",
		       (unsigned long long)((end - start) * 1e9),
		       (unsigned long long)((last - first) * 1e9), id);
	}
	return received == expected && !out_of_order && !missing && !duplicates && !bad ? 0 : 1;
}
