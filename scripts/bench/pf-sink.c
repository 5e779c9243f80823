// SPDX-License-Identifier: GPL-2.0
/*
 * pf-sink [-g] PORT COUNT TIMEOUT_MS [REQUEST]: the benchmark's receiver in the
 * guest. Binds a UDP socket, executes the instruction-count marker (see
 * pf-insn.c), and only then, if given, hands REQUEST to the host agent
 * (scripts/vm-run.sh) as a request file in /run/pf, so nothing the guest does
 * while waiting for the generator is a shell polling loop inside the window.
 * Receives COUNT generator frames (or stops TIMEOUT_MS after the last one),
 * checks each stream's sequence (payload: "PFGN", group u16, node u8, 0,
 * seq u64, little endian), executes the marker again and prints:
 *
 *   received N streams S out_of_order O missing M window_ns T span_ns T request ID
 *
 * (span_ns: from the first batch received to the last).
 *
 * The frames are read in batches (recvmmsg), as a sink that wants to keep
 * up would; the socket's cost is the same whichever NIC the frames came in.
 * With -g the socket asks for UDP_GRO, as a receiver of many short frames
 * may: the stack then merges a flow's frames into one buffer with a segment
 * size (the UDP_GRO control message), and the sink splits it.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define BATCH 64
/* A merged buffer is at most 64 KiB. */
#define BUF_SIZE 65536
#define MAX_STREAMS (4096 * 256)

/* The marker the plugin recognises: this exact mov, then cpuid. */
static void marker(void)
{
	uint32_t a = 0x50464d4b, b, c = 0, d;

	__asm__ volatile(".byte 0xb8, 0x4b, 0x4d, 0x46, 0x50\n\tcpuid"
			 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 :
			 : "memory");
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	static char bufs[BATCH][BUF_SIZE];
	static char ctl[BATCH][CMSG_SPACE(sizeof(int))];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	int gro = 0, one = 1;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	uint64_t *next, received = 0, ooo = 0, dup = 0, streams = 0, expected, start, end;
	uint64_t sent_total = 0, first = 0, last = 0;
	struct timeval tv;
	int s, rcvbuf = 64 << 20;
	char id[64] = "-";

	if (argc > 1 && !strcmp(argv[1], "-g")) {
		gro = 1;
		argv++;
		argc--;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: pf-sink [-g] PORT COUNT TIMEOUT_MS [REQUEST]\n");
		return 2;
	}
	expected = strtoull(argv[2], NULL, 0);
	tv.tv_sec = atoi(argv[3]) / 1000;
	tv.tv_usec = atoi(argv[3]) % 1000 * 1000;
	/* Streams are (group, node); calloc leaves untouched pages unmapped. */
	next = calloc(MAX_STREAMS, sizeof(*next));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (!next || s < 0)
		return perror("pf-sink"), 1;
	setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (gro && setsockopt(s, IPPROTO_UDP, UDP_GRO, &one, sizeof(one)))
		return perror("pf-sink: UDP_GRO"), 1;
	addr.sin_port = htons(atoi(argv[1]));
	if (bind(s, (struct sockaddr *)&addr, sizeof(addr)))
		return perror("pf-sink: bind"), 1;
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
		if (gro) {
			msgs[i].msg_hdr.msg_control = ctl[i];
			msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
		}
	}
	start = now_ns();
	marker();
	if (argc > 4) {
		char tmp[128], req[128];
		FILE *f;

		snprintf(id, sizeof(id), "sink.%d.%llu", getpid(), (unsigned long long)start);
		snprintf(tmp, sizeof(tmp), "/run/pf/tmp.%s", id);
		snprintf(req, sizeof(req), "/run/pf/req.%s", id);
		f = fopen(tmp, "w");
		/* The host agent takes a request once its last line is ".". */
		if (!f || fprintf(f, "%s\n.\n", argv[4]) < 0 || fclose(f) || rename(tmp, req))
			return perror("pf-sink: request"), 1;
	}
	while (received < expected) {
		/* WAITFORONE: return what has come, not wait for a full batch. */
		int n = recvmmsg(s, msgs, BATCH, MSG_WAITFORONE, NULL);

		if (n <= 0)
			break;
		/* The receive span, for the delivered rate: first to last batch. */
		last = now_ns();
		if (!first)
			first = last;
		for (int i = 0; i < n; i++) {
			unsigned int len = msgs[i].msg_len, seg = len;
			struct cmsghdr *cm;

			/* A merged buffer: segments of seg bytes, the last shorter. */
			for (cm = CMSG_FIRSTHDR(&msgs[i].msg_hdr); cm;
			     cm = CMSG_NXTHDR(&msgs[i].msg_hdr, cm)) {
				if (cm->cmsg_level == IPPROTO_UDP && cm->cmsg_type == UDP_GRO)
					memcpy(&seg, CMSG_DATA(cm), sizeof(int));
			}
			if (gro)
				msgs[i].msg_hdr.msg_controllen = sizeof(ctl[i]);
			if (!seg)
				seg = len ? len : 1;
			for (unsigned int off = 0; off < len; off += seg) {
				const unsigned char *p = (const unsigned char *)bufs[i] + off;
				uint64_t seq, *want;
				uint32_t key;

				if (len - off < 16 || memcmp(p, "PFGN", 4))
					continue;
				key = (uint32_t)(p[4] | p[5] << 8) % 4096 * 256 + p[6];
				memcpy(&seq, p + 8, 8);
				want = &next[key];
				if (*want == 0)
					streams++;
				/* *want is the next sequence number expected. */
				if (seq < *want) {
					dup++;
				} else {
					if (seq > *want)
						ooo++;
					sent_total += seq + 1 - *want;
					*want = seq + 1;
				}
				received++;
			}
		}
	}
	marker();
	end = now_ns();
	/* Missing: sequence numbers skipped over, as far as the last seen. */
	printf("received %llu streams %llu out_of_order %llu missing %llu window_ns %llu span_ns %llu request %s\n",
	       (unsigned long long)received, (unsigned long long)streams,
	       (unsigned long long)ooo, (unsigned long long)(sent_total - (received - dup)),
	       (unsigned long long)(end - start), (unsigned long long)(last - first), id);
	return received == expected ? 0 : 1;
}
