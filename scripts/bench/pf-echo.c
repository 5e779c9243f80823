// SPDX-License-Identifier: GPL-2.0
/*
 * pf-echo [-b USECS] PORT COUNT TIMEOUT_MS REQUEST: the guest end of the
 * latency runs. Binds a UDP socket, hands REQUEST to the host agent (as
 * pf-sink does), and sends every datagram back to its sender until COUNT
 * have been echoed or none came for TIMEOUT_MS. Prints "echoed N request
 * ID". The host side (scripts/bench/lat.py) times the round trips.
 *
 * -b USECS: busy polling, as Documentation/networking/napi.rst ("Busy
 * polling", "IRQ mitigation") describes it for a socket: SO_BUSY_POLL
 * USECS, SO_PREFER_BUSY_POLL and SO_BUSY_POLL_BUDGET 16 (the kernel's
 * selftests/net/busy_poll_test.sh). The program still blocks in recvfrom:
 * the receive call polls the socket's NAPI instance for up to USECS before
 * it sleeps (net.core.busy_read's "time to busy loop waiting for packets on
 * the device queue").
 *
 * It executes the instruction-count marker of the pf-insn plugin (see
 * pf-insn.c) before it hands REQUEST over and after the last echo, so the
 * plugin's log holds the guest's instructions over the run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL 46
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

static void marker(void)
{
	unsigned int a = 0x50464d4b, b, c = 0, d;

	__asm__ volatile(".byte 0xb8, 0x4b, 0x4d, 0x46, 0x50\n\tcpuid"
			 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 :
			 : "memory");
}

static int set(int s, int opt, int val, const char *name)
{
	if (setsockopt(s, SOL_SOCKET, opt, &val, sizeof(val)) == 0)
		return 0;
	perror(name);
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET }, from;
	socklen_t fromlen;
	struct timeval tv;
	char buf[2048], id[64], tmp[128], req[128];
	long count, echoed = 0;
	int s, opt, busy_us = 0;
	FILE *f;

	while ((opt = getopt(argc, argv, "b:")) == 'b')
		busy_us = atoi(optarg);
	argv += optind - 1;
	argc -= optind - 1;
	if (opt != -1 || argc < 5) {
		fprintf(stderr, "usage: pf-echo [-b USECS] PORT COUNT TIMEOUT_MS REQUEST\n");
		return 2;
	}
	count = atol(argv[2]);
	tv.tv_sec = atoi(argv[3]) / 1000;
	tv.tv_usec = atoi(argv[3]) % 1000 * 1000;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	addr.sin_port = htons(atoi(argv[1]));
	if (s < 0 || bind(s, (struct sockaddr *)&addr, sizeof(addr)))
		return perror("pf-echo"), 1;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (busy_us > 0 &&
	    (set(s, SO_BUSY_POLL, busy_us, "pf-echo: SO_BUSY_POLL") ||
	     set(s, SO_PREFER_BUSY_POLL, 1, "pf-echo: SO_PREFER_BUSY_POLL") ||
	     set(s, SO_BUSY_POLL_BUDGET, 16, "pf-echo: SO_BUSY_POLL_BUDGET")))
		return 1;
	snprintf(id, sizeof(id), "echo.%d.%ld", getpid(), (long)time(NULL));
	snprintf(tmp, sizeof(tmp), "/run/pf/tmp.%s", id);
	snprintf(req, sizeof(req), "/run/pf/req.%s", id);
	marker();
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s\n.\n", argv[4]) < 0 || fclose(f) || rename(tmp, req))
		return perror("pf-echo: request"), 1;
	while (echoed < count) {
		ssize_t n;

		fromlen = sizeof(from);
		n = recvfrom(s, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
		if (n < 0)
			break;
		sendto(s, buf, n, 0, (struct sockaddr *)&from, fromlen);
		echoed++;
	}
	marker();
	printf("echoed %ld request %s\n", echoed, id);
	return 0;
}
