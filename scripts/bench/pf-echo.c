// SPDX-License-Identifier: GPL-2.0
/*
 * pf-echo PORT COUNT TIMEOUT_MS REQUEST: the guest end of the latency runs.
 * Binds a UDP socket, hands REQUEST to the host agent (as pf-sink does),
 * and sends every datagram back to its sender until COUNT have been echoed
 * or none came for TIMEOUT_MS. Prints "echoed N request ID". The host side
 * (scripts/bench/lat.py) times the round trips.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

int main(int argc, char **argv)
{
	struct sockaddr_in addr = { .sin_family = AF_INET }, from;
	socklen_t fromlen;
	struct timeval tv;
	char buf[2048], id[64], tmp[128], req[128];
	long count, echoed = 0;
	FILE *f;
	int s;

	if (argc < 5) {
		fprintf(stderr, "usage: pf-echo PORT COUNT TIMEOUT_MS REQUEST\n");
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
	snprintf(id, sizeof(id), "echo.%d.%ld", getpid(), (long)time(NULL));
	snprintf(tmp, sizeof(tmp), "/run/pf/tmp.%s", id);
	snprintf(req, sizeof(req), "/run/pf/req.%s", id);
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
	printf("echoed %ld request %s\n", echoed, id);
	return 0;
}
