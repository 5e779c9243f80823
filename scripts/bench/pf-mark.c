// SPDX-License-Identifier: GPL-2.0
/*
 * pf-mark: executes the instruction-count marker of the pf-insn plugin
 * ("mov $0x50464d4b, %eax; cpuid", see pf-insn.c) once and exits; the
 * plugin logs its running totals and, with prof=DIR, a profile. Used by
 * scripts/profile-vm.sh to cut a VM's run into boot, command and shutdown.
 *
 * pf-mark watch MODULE FILE: until killed, looks at /sys/module/MODULE
 * twice a second and, each time the module is there with sections at new
 * addresses (a reload of another build may keep .text where it was),
 * appends "load N" and its sections ("NAME ADDRESS", from
 * /sys/module/MODULE/sections) and "build-id HEX" (its notes) to FILE, so
 * that the profile can name the
 * module's functions after it was unloaded. A few system calls a poll, no
 * process started: it adds next to nothing to the profile it serves.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void marker(void)
{
	uint32_t a = 0x50464d4b, b, c = 0, d;

	__asm__ volatile(".byte 0xb8, 0x4b, 0x4d, 0x46, 0x50\n\tcpuid"
			 : "=a"(a), "=b"(b), "=c"(c), "=d"(d)
			 :
			 : "memory");
}

/* The contents of a one-line sysfs file, without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* "build-id HEX\n" from a module's GNU build-id note, or nothing. */
static size_t build_id(const char *path, char *buf, size_t size)
{
	unsigned char note[256];
	FILE *f = fopen(path, "r");
	size_t n, len = 0;

	if (!f)
		return 0;
	n = fread(note, 1, sizeof(note), f);
	fclose(f);
	/* namesz, descsz, type, "GNU\0", then the id. */
	if (n < 16 || size < 16)
		return 0;
	len = (size_t)snprintf(buf, size, "build-id ");
	for (size_t i = 16; i < n && len + 3 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%02x", note[i]);
	len += (size_t)snprintf(buf + len, size - len, "\n");
	return len;
}

static int watch(const char *module, const char *file)
{
	static char now[16384], last[16384];
	char dir[256], path[512], addr[64];
	struct timespec half = { 0, 500000000 };
	unsigned int loads = 0;

	snprintf(dir, sizeof(dir), "/sys/module/%s/sections", module);
	for (;; nanosleep(&half, NULL)) {
		DIR *d = opendir(dir);
		struct dirent *e;
		size_t len = 0;
		FILE *out;

		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' && (!e->d_name[1] || !strcmp(e->d_name, "..")))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (!read_line(path, addr, sizeof(addr)) && len < sizeof(now))
				len += (size_t)snprintf(now + len, sizeof(now) - len, "%s %s\n",
							e->d_name, addr);
		}
		closedir(d);
		snprintf(path, sizeof(path), "/sys/module/%s/notes/.note.gnu.build-id", module);
		len += build_id(path, now + len, sizeof(now) - len);
		if (!len || !strcmp(now, last))
			continue;
		out = fopen(file, "a");
		if (!out)
			return 1;
		fprintf(out, "load %u\n%s", loads++, now);
		fclose(out);
		strcpy(last, now);
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "watch"))
		return watch(argv[2], argv[3]);
	if (argc != 1) {
		fprintf(stderr, "usage: pf-mark | pf-mark watch MODULE FILE\n");
		return 2;
	}
	marker();
	return 0;
}
