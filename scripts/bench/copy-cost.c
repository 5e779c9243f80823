// SPDX-License-Identifier: GPL-2.0
/*
 * copy-cost [ROUNDS]: what copying a received frame into an XDP buffer
 * costs in time on this (host) CPU, which the guest instruction counts of
 * scripts/bench.sh cannot show (TCG counts a rep movsb as one instruction).
 *
 * Models the driver's copy (driver.rst, "XDP"): frames packed in a 32 KiB
 * receive buffer as the device writes them (an 8-byte record header, the
 * frame, padding to 8), each copied with rep movsb (as the kernel's memcpy
 * on a CPU with FSRM) to offset 256 (XDP_PACKET_HEADROOM) of one 4 KiB
 * buffer that every frame reuses, as a dropped frame leaves its buffer to
 * the next. Two cases of the source:
 *
 *   hot:  the receive buffer in the CPU's caches (read just before);
 *   cold: flushed from every cache level before each pass (clflush), as a
 *         buffer the device has just written by DMA without cache
 *         injection.
 *
 * and, for each, the same pass reading only the frame's first 64 bytes
 * (what a program that looks at the headers touches if the frame were
 * already where it runs): the copy's own cost is the difference.
 *
 * Prints one line per frame size: "size S frames F hot_copy_ns A
 * hot_read_ns B cold_copy_ns C cold_read_ns D", nanoseconds per frame,
 * the median of ROUNDS passes (default 201).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_BYTES 32768
#define HEADROOM 256
#define HEADER 8

static unsigned char rx[BUF_BYTES] __attribute__((aligned(4096)));
static unsigned char xdp[4096] __attribute__((aligned(4096)));
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void copy(void *dst, const void *src, size_t n)
{
	asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

static void flush(void)
{
	for (size_t i = 0; i < BUF_BYTES; i += 64)
		asm volatile("clflush %0" : : "m"(rx[i]));
	asm volatile("mfence" : : : "memory");
}

/* One pass over the buffer's frames: copied, or their headers read. */
static uint64_t pass(size_t size, size_t stride, size_t frames, int do_copy)
{
	uint64_t t0 = now_ns(), acc = 0;

	for (size_t f = 0; f < frames; f++) {
		const unsigned char *p = rx + f * stride + HEADER;

		if (do_copy) {
			copy(xdp + HEADROOM, p, size);
			acc += xdp[HEADROOM + 12];
		} else {
			for (size_t i = 0; i < 64 && i < size; i += 8)
				acc += *(const uint64_t *)(p + i);
		}
	}
	sink += acc;
	return now_ns() - t0;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_ns(size_t size, int cold, int do_copy, int rounds)
{
	size_t stride = (HEADER + size + 7) / 8 * 8, frames = BUF_BYTES / stride;
	uint64_t *t = calloc(rounds, sizeof(*t)), m;

	if (!t)
		exit(1);
	for (int r = 0; r < rounds; r++) {
		if (cold)
			flush();
		else
			pass(size, stride, frames, 0);
		t[r] = pass(size, stride, frames, do_copy);
	}
	qsort(t, rounds, sizeof(*t), cmp);
	m = t[rounds / 2];
	free(t);
	return (double)m / frames;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64, 128, 256, 512, 1024, 1500 };
	int rounds = argc > 1 ? atoi(argv[1]) : 201;

	if (rounds < 1)
		return 2;
	memset(rx, 0x5a, sizeof(rx));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t s = sizes[i];

		printf("size %zu frames %zu hot_copy_ns %.1f hot_read_ns %.1f cold_copy_ns %.1f cold_read_ns %.1f\n",
		       s, BUF_BYTES / ((HEADER + s + 7) / 8 * 8),
		       median_ns(s, 0, 1, rounds), median_ns(s, 0, 0, rounds),
		       median_ns(s, 1, 1, rounds), median_ns(s, 1, 0, rounds));
	}
	return 0;
}
