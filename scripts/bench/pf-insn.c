// SPDX-License-Identifier: GPL-2.0
/*
 * pf-insn.so: a QEMU TCG plugin that counts the guest instructions executed
 * (all of them, and those at kernel addresses) and logs the running totals
 * each time the guest executes the marker: "mov $0x50464d4b, %eax; cpuid"
 * (see pf-sink.c). A vCPU that halts executes nothing, so an idle guest adds
 * only its interrupts; the count is exact whatever the host's load.
 *
 *   -plugin pf-insn.so,out=FILE[,prof=DIR][,time=on][,user=merged]
 *
 * Each marker appends "MARK total kernel" to FILE, and QEMU's exit "EXIT
 * total kernel". With prof=DIR it also writes DIR/prof.N (N counts markers
 * from 0, and the exit writes one more): "vaddr executions insns" of every
 * translated block that ran, so a window's profile is the difference of two
 * files. With time=on (scripts/profile-vm.sh) each of those lines has two
 * more numbers: the host's monotonic clock since the plugin was loaded, and
 * the time the vCPUs spent halted (summed over the vCPUs), in nanoseconds.
 * With user=merged the profile counts the blocks of user space (from 4 GiB
 * to the kernel's half) under one address, 0x100000000, by their length:
 * still exact in instructions, and the table does not fill up with the
 * blocks of every process that address space randomisation placed anew.
 *
 * QEMU installs no plugin header; the few declarations this file needs are
 * written out below, as in the plugin API since version 3 (unchanged in
 * what is used here; QEMU 11.1 loads API versions 7 and up).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct { int min, cur; } version;
	bool system_emulation;
	union { struct { int smp_vcpus, max_vcpus; } system; };
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_scoreboard;
typedef struct { struct qemu_plugin_scoreboard *score; size_t offset; } qemu_plugin_u64;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64, QEMU_PLUGIN_INLINE_STORE_U64 };
/* QEMU 11.1 calls the translation callback with the block and a null user
 * pointer, not with the plugin id first as earlier versions did. */
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(struct qemu_plugin_tb *, void *);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int, void *);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t, void *);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t, qemu_plugin_vcpu_tb_trans_cb_t);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t, qemu_plugin_udata_cb_t, void *);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *, size_t);
size_t qemu_plugin_insn_data(const struct qemu_plugin_insn *, void *, size_t);
struct qemu_plugin_scoreboard *qemu_plugin_scoreboard_new(size_t);
uint64_t qemu_plugin_u64_sum(qemu_plugin_u64);
uint64_t qemu_plugin_u64_get(qemu_plugin_u64, unsigned int);
void qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(struct qemu_plugin_tb *, enum qemu_plugin_op,
						       qemu_plugin_u64, uint64_t);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *, qemu_plugin_vcpu_udata_cb_t,
					    enum qemu_plugin_cb_flags, void *);
/* The idle and resume callbacks' arguments are not used (see on_idle), so
 * their exact signature does not matter here. */
typedef void (*qemu_plugin_vcpu_simple_cb_t)(qemu_plugin_id_t, unsigned int);
void qemu_plugin_register_vcpu_idle_cb(qemu_plugin_id_t, qemu_plugin_vcpu_simple_cb_t);
void qemu_plugin_register_vcpu_resume_cb(qemu_plugin_id_t, qemu_plugin_vcpu_simple_cb_t);

__attribute__((visibility("default"))) int qemu_plugin_version = 7;

/* Kernel text of x86-64 is in the upper half. */
#define KERNEL_BASE 0xffff800000000000ull
/* Blocks the profile can tell apart; more only stops the profile growing. */
#define MAX_BLOCKS (1u << 20)

static FILE *out;
static const char *prof_dir;
static unsigned int marks;
static qemu_plugin_u64 total, kernel;
/* Profile: per block slot, its executions; slots keyed by (vaddr, insns). */
static struct qemu_plugin_scoreboard *prof_score;
static struct block { uint64_t vaddr; uint32_t insns, used; } *blocks;
static uint32_t nblocks;
static uint32_t *slot_of; /* open-addressing table of MAX_BLOCKS * 2 */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* user=merged (see the top). */
static bool user_merged;
/* time=on: the host clock at load; halted time of the vCPUs, finished
 * periods summed, and the periods under way as their count and the sum of
 * their starts (each vCPU has its own thread under MTTCG: a thread-local
 * start needs no vCPU index). */
static bool timing;
static uint64_t t_load, idle_done, idle_starts;
static unsigned int idle_now;
static __thread uint64_t idle_since;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void on_idle(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	(void)vcpu;
	pthread_mutex_lock(&lock);
	if (!idle_since) {
		idle_since = now_ns();
		idle_now++;
		idle_starts += idle_since;
	}
	pthread_mutex_unlock(&lock);
}

static void on_resume(qemu_plugin_id_t id, unsigned int vcpu)
{
	(void)id;
	(void)vcpu;
	pthread_mutex_lock(&lock);
	if (idle_since) {
		idle_done += now_ns() - idle_since;
		idle_now--;
		idle_starts -= idle_since;
		idle_since = 0;
	}
	pthread_mutex_unlock(&lock);
}

/* " host_ns idle_ns" for a MARK or EXIT line (the lock held), or nothing. */
static void print_times(void)
{
	uint64_t t = now_ns();

	if (timing)
		fprintf(out, " %" PRIu64 " %" PRIu64, t - t_load,
			idle_done + (uint64_t)idle_now * t - idle_starts);
}

static uint32_t block_slot(uint64_t vaddr, uint32_t insns)
{
	uint64_t h = (vaddr ^ ((uint64_t)insns << 56)) * 0x9e3779b97f4a7c15ull;
	uint32_t mask = MAX_BLOCKS * 2 - 1, i = (uint32_t)(h >> 40) & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t s = slot_of[i];

		if (s == 0) {
			if (nblocks >= MAX_BLOCKS)
				return UINT32_MAX;
			blocks[nblocks] = (struct block){ vaddr, insns, 1 };
			slot_of[i] = ++nblocks;
			return nblocks - 1;
		}
		if (blocks[s - 1].vaddr == vaddr && blocks[s - 1].insns == insns)
			return s - 1;
	}
}

static void write_profile(void)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/prof.%u", prof_dir, marks);
	f = fopen(path, "w");
	if (!f)
		return;
	for (uint32_t s = 0; s < nblocks; s++) {
		qemu_plugin_u64 e = { prof_score, (size_t)s * 8 };
		uint64_t n = qemu_plugin_u64_sum(e);

		if (n)
			fprintf(f, "%" PRIx64 " %" PRIu64 " %u\n", blocks[s].vaddr, n, blocks[s].insns);
	}
	fclose(f);
}

static void on_marker(unsigned int vcpu, void *udata)
{
	(void)vcpu;
	(void)udata;
	pthread_mutex_lock(&lock);
	fprintf(out, "MARK %" PRIu64 " %" PRIu64, qemu_plugin_u64_sum(total),
		qemu_plugin_u64_sum(kernel));
	print_times();
	fputc('\n', out);
	fflush(out);
	if (prof_dir)
		write_profile();
	marks++;
	pthread_mutex_unlock(&lock);
}

static const uint8_t marker_mov[5] = { 0xb8, 0x4b, 0x4d, 0x46, 0x50 };
static const uint8_t cpuid[2] = { 0x0f, 0xa2 };

static void on_translate(struct qemu_plugin_tb *tb, void *udata)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	bool prev_mov = false;

	(void)udata;
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, total, n);
	if (vaddr >= KERNEL_BASE)
		qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
								  kernel, n);
	if (prof_dir) {
		uint32_t s;

		pthread_mutex_lock(&lock);
		s = block_slot(user_merged && vaddr >= 0x100000000ull && vaddr < KERNEL_BASE ?
				       0x100000000ull : vaddr,
			       (uint32_t)n);
		pthread_mutex_unlock(&lock);
		if (s != UINT32_MAX) {
			qemu_plugin_u64 e = { prof_score, (size_t)s * 8 };

			qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
				tb, QEMU_PLUGIN_INLINE_ADD_U64, e, 1);
		}
	}
	/* The marker only in user space: the kernel's own cpuids stay out. */
	if (vaddr >= KERNEL_BASE)
		return;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint8_t b[16];
		size_t len = qemu_plugin_insn_data(insn, b, sizeof(b));

		if (prev_mov && len == 2 && !memcmp(b, cpuid, 2))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS, NULL);
		prev_mov = len == 5 && !memcmp(b, marker_mov, 5);
	}
}

static void on_atexit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	pthread_mutex_lock(&lock);
	fprintf(out, "EXIT %" PRIu64 " %" PRIu64, qemu_plugin_u64_sum(total),
		qemu_plugin_u64_sum(kernel));
	print_times();
	fputc('\n', out);
	fclose(out);
	if (prof_dir)
		write_profile();
	pthread_mutex_unlock(&lock);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
							      const qemu_info_t *info, int argc,
							      char **argv)
{
	const char *path = NULL;
	struct qemu_plugin_scoreboard *counts;

	(void)info;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strncmp(argv[i], "prof=", 5))
			prof_dir = argv[i] + 5;
		else if (!strcmp(argv[i], "time=on"))
			timing = true;
		else if (!strcmp(argv[i], "user=merged"))
			user_merged = true;
	}
	if (!path) {
		fprintf(stderr, "pf-insn: out=FILE is required\n");
		return -1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return -1;
	}
	counts = qemu_plugin_scoreboard_new(16);
	total = (qemu_plugin_u64){ counts, 0 };
	kernel = (qemu_plugin_u64){ counts, 8 };
	if (prof_dir) {
		prof_score = qemu_plugin_scoreboard_new((size_t)MAX_BLOCKS * 8);
		blocks = calloc(MAX_BLOCKS, sizeof(*blocks));
		slot_of = calloc((size_t)MAX_BLOCKS * 2, sizeof(*slot_of));
		if (!prof_score || !blocks || !slot_of)
			return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	if (timing) {
		t_load = now_ns();
		qemu_plugin_register_vcpu_idle_cb(id, on_idle);
		qemu_plugin_register_vcpu_resume_cb(id, on_resume);
	}
	return 0;
}
