#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""profile_vm.py: the report of scripts/profile-vm.sh.

  profile_vm.py analyze DIR --flavour F --system-map MAP --vmlinux VMLINUX
                [--cache-dir DIR]
      reads DIR/run/out (insn.log, prof.N, module-sections of the pf-insn
      plugin and pf-mark), writes DIR/functions.tsv (every function of every
      window: instructions, feature, inline checks) and DIR/summary.json,
      prints the markdown report.
  profile_vm.py compare DEBUG_DIR FAST_DIR
      the same test on two kernels: the command windows side by side.
  profile_vm.py tables [--windows boot,command] LABEL=DIR...
      several runs' windows and features side by side (the markdown of
      Documentation/.../pagefill/bench/debug-profile.md).

Windows: boot (QEMU's start to the first marker), command (first to last
marker), shutdown (last marker to QEMU's exit). A block of the profile is
charged to the function it starts in; functions go to a debug feature by
their object file (the kernel build's mm/kmemleak.o, lib/debugobjects.o, ...)
or, for the helpers that live elsewhere, by name (FEATURES below).

What a function name cannot show, the kernel's disassembly can estimate:
inline KASAN (generic, inline instrumentation) puts a shadow check before
nearly every memory access of every function: copy the address, shift it
right by 3, load or compare the shadow byte at 0xdffffc0000000000 plus that,
test, branch. Those instructions are found in each executed block
(objdump of vmlinux and of the module; `kasan_inline` below) and counted
with the block's executions. The same for UBSAN's and Rust's inline checks:
a compare and a conditional jump whose target calls __ubsan_handle_* (or
Rust's panic for an overflow or a bounds check).
"""
import argparse
import array
import bisect
import json
import os
import pickle
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import demangle, load_symbols  # noqa: E402

KERNEL_BASE = 0xFFFF800000000000
USER_MERGED = 0x100000000  # pf-insn's user=merged address
SHADOW = "$0xdffffc0000000000"

# Debug features: (name, object files of the kernel build, function names
# or prefixes ending in "*"). First match wins; object files before names.
FEATURES = [
    ("KASAN runtime (out of line)",
     ["mm/kasan/common.o", "mm/kasan/generic.o", "mm/kasan/init.o", "mm/kasan/quarantine.o",
      "mm/kasan/report.o", "mm/kasan/report_generic.o", "mm/kasan/shadow.o",
      "mm/kasan/hw_tags.o", "mm/kasan/sw_tags.o", "mm/kasan/tags.o",
      "arch/x86/mm/kasan_init_64.o"],
     ["__asan_*", "__kasan_*", "kasan_*", "__hwasan_*"]),
    ("kmemleak", ["mm/kmemleak.o"], ["kmemleak_*"]),
    ("lockdep (PROVE_LOCKING, irq-flag tracing)",
     ["kernel/locking/lockdep.o", "kernel/locking/lockdep_proc.o",
      "kernel/trace/trace_preemptirq.o"],
     ["lock_acquire", "lock_release", "__lock_acquire", "lockdep_*", "trace_hardirqs_*",
      "mark_lock", "validate_chain", "check_prev_add", "__bfs", "save_trace",
      "lock_is_held_type", "lock_acquired", "lock_contended", "debug_check_no_locks_*"]),
    ("lock debugging (DEBUG_SPINLOCK, DEBUG_MUTEXES)",
     ["kernel/locking/spinlock_debug.o", "kernel/locking/mutex-debug.o"],
     ["do_raw_spin_*", "do_raw_read_*", "do_raw_write_*", "debug_mutex_*",
      "__raw_spin_lock_init", "__rwlock_init", "__mutex_init"]),
    ("RCU debugging (PROVE_RCU)", [],
     ["rcu_read_lock_held", "rcu_read_lock_held_common", "rcu_read_lock_bh_held",
      "rcu_read_lock_sched_held", "rcu_read_lock_any_held", "rcu_lockdep_current_cpu_online",
      "debug_lockdep_rcu_enabled", "lockdep_rcu_suspicious"]),
    ("debug objects", ["lib/debugobjects.o"], ["debug_object_*", "debug_check_no_obj_freed"]),
    ("DMA-API debugging", ["kernel/dma/debug.o"],
     ["debug_dma_*", "check_unmap", "check_sync", "add_dma_entry", "dma_entry_alloc",
      "dma_debug_*"]),
    ("UBSAN handlers", ["lib/ubsan.o"], ["__ubsan_*"]),
    ("page poisoning, DEBUG_PAGEALLOC", ["mm/page_poison.o", "mm/debug_page_alloc.o"],
     ["__kernel_poison_pages", "__kernel_unpoison_pages", "kernel_poison_pages",
      "check_poison_mem", "__kernel_map_pages", "__set_page_guard", "__clear_page_guard"]),
    ("SLUB debugging", [],
     ["check_slab", "check_object", "alloc_debug_processing", "free_debug_processing",
      "on_freelist", "set_track_prepare", "set_track_update", "check_slab_allocation",
      "slab_pad_check", "check_bytes_and_report", "print_trailer",
      "free_consistency_checks", "alloc_consistency_checks", "setup_object_debug"]),
    ("list debugging (DEBUG_LIST)", ["lib/list_debug.o"], ["__list_*_valid_or_report"]),
    ("net refcount trackers", ["lib/ref_tracker.o"], ["ref_tracker_*"]),
    ("might_sleep checks (DEBUG_ATOMIC_SLEEP)", [],
     ["__might_sleep", "__might_resched", "__might_fault", "__cant_sleep", "__cant_migrate",
      "__might_resched_precision"]),
    ("watchdogs (softlockup, hung task)", ["kernel/watchdog.o", "kernel/hung_task.o"], []),
    ("stack traces (unwinder, stack depot)",
     ["lib/stackdepot.o", "kernel/stacktrace.o", "arch/x86/kernel/stacktrace.o",
      "arch/x86/kernel/unwind_orc.o", "arch/x86/kernel/unwind_frame.o",
      "arch/x86/kernel/unwind_guess.o", "arch/x86/kernel/dumpstack_64.o"],
     ["stack_trace_*", "stack_depot_*", "__stack_depot_*", "arch_stack_walk*", "unwind_*",
      "__unwind_start", "orc_*", "kernel_text_address", "__kernel_text_address",
      "core_kernel_text", "is_module_text_address", "__module_address", "is_bpf_text_address",
      "is_ftrace_trampoline", "get_stack_info", "get_stack_info_noinstr", "in_task_stack",
      "in_entry_stack", "ftrace_graph_ret_addr", "is_kprobe_optinsn_slot",
      "is_kprobe_insn_slot", "bpf_ksym_find", "search_module_extables"]),
    ("spin-waiting on contended locks", [],
     ["queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath",
      "__pv_queued_spin_lock_slowpath", "queued_read_lock_slowpath",
      "queued_write_lock_slowpath", "osq_lock", "mutex_spin_on_owner",
      "rwsem_optimistic_spin", "rwsem_spin_on_owner"]),
    ("idle loop", [],
     ["default_idle", "default_idle_call", "arch_cpu_idle", "arch_cpu_idle_enter",
      "arch_cpu_idle_exit", "do_idle", "cpuidle_idle_call", "cpu_startup_entry",
      "pv_native_safe_halt", "native_safe_halt", "cpu_idle_poll", "tick_nohz_idle_*",
      "acpi_idle_*", "mwait_idle*", "cpu_idle_poll*", "play_idle_precise"]),
]
STACK = "stack traces (unwinder, stack depot)"
# In those files, but what every kernel does: the ORC unwinder's tables
# sorted at boot and at module load.
NOT_DEBUG = ("unwind_init", "unwind_module_init")
# Calls into the stack-trace helpers, by which they are charged to their
# callers: the unwinder's entry points and the stack depot's.
STACK_UNWIND_ENTRIES = ("stack_trace_save", "stack_trace_save_tsk", "stack_trace_save_regs",
                        "arch_stack_walk")
STACK_DEPOT_ENTRIES = ("stack_depot_save", "stack_depot_save_flags", "__stack_depot_save")
STACK_DEPOT_OBJS = ("lib/stackdepot.o",)
# Callees whose calls the report counts by caller.
COUNTED_CALLS = ("kmemleak_scan", "__kmemleak_scan", "kthread_should_stop", "__lookup_object",
                 "lock_acquire", "kasan_save_track", "kasan_save_free_info", "kasan_save_alloc_info",
                 "kasan_record_aux_stack",
                 "kasan_disable_current", "stack_trace_save", "stack_depot_save_flags",
                 "stack_depot_save", "kasan_save_stack", "__create_object", "save_trace",
                 "crc32_le", "crc32_le_base", "crc32_le_arch", "crc32c", "crc32_be",
                 "rcu_is_watching", "kasan_check_range", "__asan_memset", "__asan_memcpy",
                 "__asan_memmove", "__kasan_check_read", "__kasan_check_write",
                 "queued_spin_lock_slowpath")
# kmemleak's functions that scan (the rest track allocations and frees).
KMEMLEAK_SCAN = ("scan_block", "pointer_update_refs", "scan_gray_list", "kmemleak_scan", "__kmemleak_scan",
                 "update_refs", "paint_ptr", "kmemleak_cond_resched", "scan_should_stop",
                 "kmemleak_scan_thread", "scan_object", "scan_large_block", "update_checksum",
                 "kmemleak_seq_start", "kmemleak_seq_next", "kmemleak_seq_show",
                 "kmemleak_seq_stop", "kmemleak_write", "kmemleak_open", "print_unreferenced",
                 "unreferenced_object", "color_gray", "color_white", "paint_it", "__paint_it",
                 "dump_object_info")

# Helpers whose instructions go to the callers that called them (in
# proportion to their calls, callees first): KASAN's out-of-line checks and
# the generic function lockdep and the unwinder call most.
HELPERS = ("kasan_check_range", "kasan_byte_accessible", "__asan_memset", "__asan_memcpy",
           "__asan_memmove", "__kasan_check_read", "__kasan_check_write", "__kasan_check_byte",
           "kasan_disable_current", "kasan_enable_current", "kthread_should_stop",
           "rcu_is_watching", "debug_lockdep_rcu_enabled")
SPIN = "spin-waiting on contended locks"
LOCKDEP = "lockdep (PROVE_LOCKING, irq-flag tracing)"
# lockdep's entry points: its work is charged to the debug feature that
# took the lock, if one did (the unwinder takes the RCU read lock, and
# lockdep tracks it, at every frame), else it stays lockdep's.
LOCKDEP_ENTRIES = ("lock_acquire", "lock_release", "lock_is_held_type", "lock_sync",
                   "lock_acquired", "lock_contended", "lock_pin_lock", "lock_unpin_lock",
                   "lock_repin_lock", "lock_downgrade", "lock_set_class")
OTHER = "not a debug feature"
USER = "[user space]"
LOW = "[firmware, kernel entry: physical addresses]"
# Below 4 GiB: the firmware (real mode below 1 MiB; SeaBIOS's relocated code
# near the top of RAM; the ROM below 4 GiB); from 4 MiB, the programs that
# are not position-independent (python3) and, at boot, the kernel's setup
# code at 1 MiB (a few thousand instructions); from 16 MiB the kernel's
# entry code at its physical address and the decompressor (named).
DECOMP = "kernel decompressor (bzImage)"
UNNAMED = "[kernel, unnamed]"


def match_name(name, pats):
    for p in pats:
        if p.endswith("*"):
            if name.startswith(p[:-1]):
                return True
        elif name == p:
            return True
    return False


# ---------------------------------------------------------------- symbols

def elf_sections_symbols(path):
    """A relocatable ELF's sections [(name, size)] and function symbols
    [(section index, value, size, name)]; a minimal reader, no libraries."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return [], []
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(shnum):
        sh = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
        secs.append(sh)  # name, type, flags, addr, offset, size, link, info, align, entsize

    def cstr(off):
        return data[off:data.index(b"\0", off)].decode(errors="replace")

    stro = secs[shstrndx][4]
    names = [(cstr(stro + s[0]), s[5]) for s in secs]
    funcs = []
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]][4]
        for off in range(s[4], s[4] + s[5], 24):
            st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", data, off)
            if st_info & 0xF == 2 and 0 < st_shndx < len(secs):  # STT_FUNC
                funcs.append((st_shndx, st_value, st_size, cstr(strtab + st_name)))
    return names, funcs


def elf_build_id(path):
    """The hex GNU build-id of an ELF file (its .note.gnu.build-id), or None."""
    names, _ = elf_sections_symbols(path)
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, _ = struct.unpack_from("<HHH", data, 0x3A)
    for i, (name, size) in enumerate(names):
        if name == ".note.gnu.build-id":
            off = struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)[4]
            return data[off + 16:off + size].hex()
    return None


def module_loads(out, ko):
    """[(section name -> address)] for each load of the module pf-mark saw."""
    path = os.path.join(out, "module-sections")
    loads = []
    if not os.path.exists(path):
        return loads
    for line in open(path):
        w = line.split()
        if w and w[0] == "load":
            loads.append({})
        elif len(w) == 2 and w[0] == "build-id" and loads:
            loads[-1]["build-id"] = w[1]
        elif len(w) == 2 and loads:
            try:
                loads[-1][w[0]] = int(w[1], 16)
            except ValueError:
                pass
    return loads


class Symbols:
    """Names the guest's addresses: the kernel's System.map, the module's
    symbols at each of its load addresses, and which feature a function is."""

    def __init__(self, system_map, kdir, ko, loads, module_name):
        addrs, names = load_symbols(None, system_map)
        self.kaddrs, self.knames = addrs, names
        self.text_end = 0
        self.ranges = []  # kernel text ranges [(start, end)]
        marks = {}
        for line in open(system_map):
            w = line.split()
            if len(w) >= 3:
                marks[w[2]] = int(w[0], 16)
        for a, b in (("_stext", "_etext"), ("_sinittext", "_einittext"),
                     ("__entry_text_start", "__entry_text_end")):
            if a in marks and b in marks:
                self.ranges.append((marks[a], marks[b]))
        if not self.ranges and addrs:
            self.ranges.append((addrs[0], addrs[-1] + 4096))
        # The module: its functions at each load, and its sections' extents.
        self.maddrs, self.mnames, self.mranges = [], [], []
        self.module = module_name
        if ko and os.path.exists(ko):
            secnames, funcs = elf_sections_symbols(ko)
            for load in loads:
                for idx, (sname, size) in enumerate(secnames):
                    if sname in load and size:
                        self.mranges.append((load[sname], load[sname] + size))
                for idx, value, size, name in funcs:
                    sname = secnames[idx][0]
                    if sname in load:
                        self.maddrs.append(load[sname] + value)
                        self.mnames.append(f"{name} [{module_name}]")
            order = sorted(range(len(self.maddrs)), key=lambda i: self.maddrs[i])
            self.maddrs = [self.maddrs[i] for i in order]
            self.mnames = [self.mnames[i] for i in order]
        self.feature_of_addr = self._object_features(kdir)
        self.cache = {}
        # The bzImage's decompressor runs at a physical address of its own
        # choosing: its symbols (arch/x86/boot/compressed/vmlinux, linked at
        # 0) and the offset that set_decompressor() finds.
        self.daddrs, self.dnames, self.doff, self.dend = [], [], None, 0
        dv = os.path.join(kdir, "arch/x86/boot/compressed/vmlinux")
        if os.path.exists(dv):
            try:
                nm = subprocess.run(["nm", "-n", dv], capture_output=True, text=True,
                                    check=True).stdout
            except (OSError, subprocess.CalledProcessError):
                nm = ""
            for line in nm.splitlines():
                w = line.split()
                if len(w) == 3 and w[1] in "tT":
                    self.daddrs.append(int(w[0], 16))
                    self.dnames.append(w[2])
                if len(w) == 3 and w[2] == "_etext":
                    self.dend = int(w[0], 16)

    def set_decompressor(self, blocks):
        """The decompressor's load offset: the one that puts the most
        executed blocks (above 16 MiB, below 4 GiB) at its functions'
        starts."""
        if not self.daddrs:
            return
        low = {a for a, _ in blocks if 0x1000000 <= a < USER_MERGED}
        starts = set(self.daddrs)
        count = {}
        for a in low:
            for s in self.daddrs:
                off = a - s
                if off >= 0 and off % 16 == 0:
                    count[off] = count.get(off, 0) + 1
        if count:
            off, n = max(count.items(), key=lambda t: t[1])
            if n >= 8 and sum(1 for a in low if a - off in starts) >= 8:
                self.doff = off
                self.cache = {}

    def _object_features(self, kdir):
        """{symbol address: feature} for the functions of the features'
        object files, placed by the file's names that are unique in the map
        (a static name such as alloc_object is in several files)."""
        by_name = {}
        for a, n in zip(self.kaddrs, self.knames):
            by_name.setdefault(n, []).append(a)
        res = {}
        for feat, objs, _ in FEATURES:
            for obj in objs:
                path = os.path.join(kdir, obj)
                if not os.path.exists(path):
                    continue
                try:
                    nm = subprocess.run(["nm", "--defined-only", path], capture_output=True,
                                        text=True, check=True).stdout
                except (OSError, subprocess.CalledProcessError):
                    continue
                names = {w[2] for w in (l.split() for l in nm.splitlines())
                         if len(w) == 3 and w[1] in "tTwW"}
                unique = [by_name[n][0] for n in names if len(by_name.get(n, ())) == 1]
                if not unique:
                    continue
                lo, hi = min(unique), max(unique)
                for n in names:
                    for a in by_name.get(n, ()):
                        if len(by_name[n]) == 1 or lo - 0x10000 <= a <= hi + 0x10000:
                            res.setdefault(a, feat)
        return res

    def name(self, a):
        """(function name, its start address or None)."""
        r = self.cache.get(a)
        if r:
            return r
        if a < KERNEL_BASE:
            r = (USER if a >= USER_MERGED or 0x100000 <= a < 0x1000000 else LOW), None
            if self.doff is not None and a < USER_MERGED and 0 <= a - self.doff < (
                    self.dend or self.daddrs[-1] + 0x1000):
                i = bisect.bisect_right(self.daddrs, a - self.doff) - 1
                if i >= 0:
                    r = (f"{self.dnames[i]} [decompressor]", None)
            self.cache[a] = r
            return r
        if r:
            return r
        r = (UNNAMED, None)
        if any(lo <= a < hi for lo, hi in self.ranges):
            i = bisect.bisect_right(self.kaddrs, a) - 1
            if i >= 0:
                r = (self.knames[i], self.kaddrs[i])
        elif any(lo <= a < hi for lo, hi in self.mranges):
            i = bisect.bisect_right(self.maddrs, a) - 1
            r = (self.mnames[i], self.maddrs[i]) if i >= 0 else (f"[{self.module}, unnamed]", None)
        self.cache[a] = r
        return r

    def feature(self, name, start):
        if name in (USER, LOW):
            return name
        if name.endswith(" [decompressor]"):
            return DECOMP
        if start is not None and start in self.feature_of_addr and \
                name.split(" ")[0] not in NOT_DEBUG:
            return self.feature_of_addr[start]
        base = name.split(" ")[0]
        if base in NOT_DEBUG:
            return OTHER
        for feat, _, pats in FEATURES:
            if match_name(base, pats):
                return feat
        return OTHER


# ------------------------------------------------------------ disassembly

INSN = re.compile(r"^\s*([0-9a-f]+):\t(\S+)\s*(.*)$")
FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
SECTION = re.compile(r"^Disassembly of section (\S+):$")
RELOC = re.compile(r"^\s*([0-9a-f]+): R_X86_64_\w+\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$")
MEM1 = re.compile(r"\((%\w+),(%\w+),1\)")
REG8 = re.compile(r"^%(?:[abcd]l|[sd]il|[bs]pl|r\d+b|[abcd]h)$")
REG16 = re.compile(r"^%(?:[abcd]x|[sd]i|[bs]p|r\d+w)$")
PREFIXES = {"lock", "rep", "repz", "repnz", "repe", "repne", "notrack", "bnd", "cs", "ds",
            "es", "ss", "fs", "gs", "data16", "addr32", "rex", "rex.W"}
# Flags of an instruction: which inline checks it belongs to.
F_KASAN, F_UBSAN, F_RUST = 1, 2, 3
UBSAN_HANDLER = "__ubsan_handle_"
RUST_CHECK = re.compile(r"panic_const_\w*overflow|panic_bounds_check|panic_const_div|"
                        r"panic_const_rem|panic_const_neg|panic_const_shl|panic_const_shr")


def classify_function(ins):
    """ins: [(addr, mnemonic, operands, call target name or None)] of one
    function in address order; returns a flag per instruction."""
    n = len(ins)
    flags = bytearray(n)
    shadow = set()
    shr_at = {}
    index = {a: i for i, (a, _, _, _) in enumerate(ins)}
    for j, (a, m, ops, _) in enumerate(ins):
        if m == "movabs" and ops.startswith(SHADOW + ","):
            flags[j] = F_KASAN
            shadow.add(ops.split(",")[1])
            continue
        if m == "mov" and ops.count(",") == 1:
            src, dst = ops.split(",")
            if src in shadow and dst.startswith("%"):
                shadow.add(dst)
                flags[j] = F_KASAN
                continue
        if m == "shr" and ops.startswith("$0x3,%"):
            shr_at[ops[5:]] = j
            continue
        mm = MEM1.search(ops)
        if not mm or not shadow:
            continue
        x, y = mm.group(1), mm.group(2)
        if x in shadow:
            other = y
        elif y in shadow:
            other = x
        else:
            continue
        regs = [o for o in ops.split(",") if o.startswith("%") and "(" not in o and ")" not in o]
        small = (m.endswith("b") or m.endswith("w") or m.startswith("movzb") or
                 m.startswith("movsb") or m.startswith("movzw") or m.startswith("movsw") or
                 any(REG8.match(r) or REG16.match(r) for r in regs))
        s = shr_at.get(other)
        recent = s is not None and j - s <= 8
        if not (recent or small):
            continue
        flags[j] = F_KASAN
        if recent:
            flags[s] = F_KASAN
            if s > 0:
                pa, pm, pops, _ = ins[s - 1]
                if pm == "mov" and pops.endswith("," + other) and pops.startswith("%"):
                    flags[s - 1] = F_KASAN
        # The test of a loaded shadow byte and the branch on it.
        for k in range(j + 1, min(j + 4, n)):
            km, kops = ins[k][1], ins[k][2]
            if km == "test" and ops.endswith(kops.split(",")[0]) and kops.split(",")[0] == kops.split(",")[-1]:
                flags[k] = F_KASAN
            elif km.startswith("j") and km != "jmp":
                flags[k] = F_KASAN
                break
    # UBSAN and Rust checks: a conditional jump to code that calls the
    # handler, and the compare or test before it.
    for j, (a, m, ops, _) in enumerate(ins):
        if not m.startswith("j") or m == "jmp" or flags[j]:
            continue
        t = ops.split(" ")[0]
        try:
            k = index.get(int(t, 16))
        except ValueError:
            continue
        if k is None:
            continue
        kind = 0
        for q in range(k, min(k + 6, n)):
            callee = ins[q][3]
            if callee == "__asan_handle_no_return":
                continue  # KASAN's call before a noreturn one (Rust's panics)
            if callee:
                if callee.startswith(UBSAN_HANDLER):
                    kind = F_UBSAN
                elif RUST_CHECK.search(callee):
                    kind = F_RUST
                break
            if ins[q][1] in ("jmp", "ret", "ud2"):
                break
        if kind:
            flags[j] = kind
            if j > 0 and ins[j - 1][1].startswith(("cmp", "test")) and not flags[j - 1]:
                flags[j - 1] = kind
    return flags


def disassemble(path, bases=None):
    """(addresses, flags, {call address: callee name}) of every instruction
    of an ELF file's code; bases: {section: load address} for a module
    (its relocations name the callees)."""
    cmd = ["objdump", "-d", "--no-show-raw-insn"] + (["-r"] if bases is not None else []) + [path]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, errors="replace")
    addrs, flags, calls = array.array("Q"), bytearray(), {}
    func, base = [], 0
    skip = False

    def flush():
        if func:
            fl = classify_function(func)
            for (a, _, _, callee), f in zip(func, fl):
                addrs.append(a + base)
                flags.append(f)
                if callee:
                    calls[a + base] = callee
            func.clear()

    for line in proc.stdout:
        line = line.rstrip("\n")
        m = INSN.match(line)
        if m:
            if skip:
                continue
            a = int(m.group(1), 16)
            mn, ops = m.group(2), m.group(3)
            while mn in PREFIXES and ops:
                parts = ops.split(None, 1)
                mn, ops = parts[0], parts[1] if len(parts) > 1 else ""
            ops = ops.split("#")[0].strip()
            callee = None
            if mn.startswith("call"):
                t = re.search(r"<([^>+]+)(?:\+0x[0-9a-f]+)?>", ops)
                if t and bases is None:
                    callee = t.group(1)
            func.append((a, mn, ops, callee))
            continue
        m = RELOC.match(line)
        if m and func and bases is not None:
            # The relocation of a call's operand names the callee.
            a, mn, ops, _ = func[-1]
            if mn.startswith("call"):
                func[-1] = (a, mn, ops, m.group(2))
            continue
        m = FUNC.match(line)
        if m:
            flush()
            continue
        m = SECTION.match(line)
        if m:
            flush()
            if bases is not None:
                skip = m.group(1) not in bases
                base = bases.get(m.group(1), 0)
    flush()
    proc.wait()
    return addrs, flags, calls


class Code:
    """Instruction flags and call sites of the kernel and the module."""

    def __init__(self, vmlinux, ko, loads, cache_dir):
        key = None
        parts = []
        if vmlinux and os.path.exists(vmlinux):
            st = os.stat(vmlinux)
            key = f"{st.st_size}-{int(st.st_mtime)}-{os.path.abspath(vmlinux)}"
            cache = None
            if cache_dir:
                import hashlib
                cache = os.path.join(cache_dir, "profile-disasm-" +
                                     hashlib.sha256(key.encode()).hexdigest()[:16] + ".pickle")
            if cache and os.path.exists(cache):
                with open(cache, "rb") as f:
                    parts.append(pickle.load(f))
            else:
                parts.append(disassemble(vmlinux))
                if cache:
                    with open(cache + ".tmp", "wb") as f:
                        pickle.dump(parts[-1], f)
                    os.replace(cache + ".tmp", cache)
        if ko and os.path.exists(ko):
            for load in loads:
                parts.append(disassemble(ko, load))
        self.addrs, self.flags, self.calls = array.array("Q"), bytearray(), {}
        for a, f, c in parts:
            self.addrs.extend(a)
            self.flags.extend(f)
            self.calls.update(c)
        if any(self.addrs[i] > self.addrs[i + 1] for i in range(len(self.addrs) - 1)):
            order = sorted(range(len(self.addrs)), key=self.addrs.__getitem__)
            self.addrs = array.array("Q", (self.addrs[i] for i in order))
            self.flags = bytearray(self.flags[i] for i in order)

    def block(self, vaddr, n):
        """(instructions per flag kind, callee of the block's last
        instruction, whether the block was found) of a translated block."""
        i = bisect.bisect_left(self.addrs, vaddr)
        if i >= len(self.addrs) or self.addrs[i] != vaddr:
            return (0, 0, 0), None, False
        fl = self.flags[i:i + n]
        last = self.addrs[min(i + n, len(self.addrs)) - 1]
        return (fl.count(F_KASAN), fl.count(F_UBSAN), fl.count(F_RUST)), self.calls.get(last), True


# ---------------------------------------------------------------- windows

def read_log(out):
    rows = []
    for line in open(os.path.join(out, "insn.log")):
        w = line.split()
        if w and w[0] in ("MARK", "EXIT"):
            v = [int(x) for x in w[1:]]
            while len(v) < 4:
                v.append(0)
            rows.append((w[0], v))
    return rows


def load_prof(out, n):
    blocks = {}
    path = os.path.join(out, f"prof.{n}")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            a, e, i = line.split()
            blocks[(int(a, 16), int(i))] = int(e)
    return blocks


def window_blocks(a, b):
    """Executions per block between two cumulative profiles."""
    if a is None:
        return dict(b)
    return {k: e - a.get(k, 0) for k, e in b.items() if e - a.get(k, 0)}


def analyze_window(blocks, syms, code):
    funcs = {}  # name -> [insns, kasan, ubsan, rust, feature]
    calls = {}  # (callee, caller) -> executions
    found = missing = 0
    for (va, n), e in blocks.items():
        name, start = syms.name(va)
        f = funcs.get(name)
        if f is None:
            f = funcs[name] = [0, 0, 0, 0, syms.feature(name, start)]
        f[0] += e * n
        if va >= KERNEL_BASE and code is not None:
            (k, u, r), callee, ok = code.block(va, n)
            if ok:
                found += e * n
                f[1] += e * k
                f[2] += e * u
                f[3] += e * r
                if callee:
                    key = (callee, name)
                    calls[key] = calls.get(key, 0) + e
            else:
                missing += e * n
    return funcs, calls, found, missing


def stack_attribution(funcs, calls, syms):
    """The stack-trace helpers' instructions charged to the features of
    their callers, in proportion to the callers' calls: the unwinder by the
    calls of its entry points, the stack depot by the calls of its own."""
    depot_names = set()
    for name, f in funcs.items():
        if f[4] == STACK and name.split(" ")[0].startswith(("stack_depot", "__stack_depot",
                                                             "depot_", "find_stack",
                                                             "stack_depot_")):
            depot_names.add(name)
    depot = sum(funcs[n][0] for n in depot_names)
    unwind = sum(f[0] for n, f in funcs.items() if f[4] == STACK) - depot
    res = {}
    for pool, entries, total in (("unwinder", STACK_UNWIND_ENTRIES, unwind),
                                 ("stack depot", STACK_DEPOT_ENTRIES, depot)):
        by = {}
        for (callee, caller), e in calls.items():
            if callee in entries and funcs.get(caller, [0, 0, 0, 0, STACK])[4] != STACK:
                feat = funcs[caller][4]
                by.setdefault(feat, [0, {}])
                by[feat][0] += e
                by[feat][1][caller] = by[feat][1].get(caller, 0) + e
        n = sum(v[0] for v in by.values())
        res[pool] = {"instructions": total, "calls": n,
                     "by_feature": {k: {"calls": v[0], "instructions": total * v[0] / n if n else 0,
                                        "callers": v[1]} for k, v in by.items()}}
    return res


def caller_calls(callers, feat, entries, own):
    """Calls of the entry points by function, from functions of another
    feature than `own` (the feature that pays is the caller's)."""
    cs = {}
    for e in entries:
        for c, n in callers.get(e, {}).items():
            if c in feat and feat[c] != own:
                cs[c] = cs.get(c, 0) + n
    return cs


def charged_features(funcs, calls):
    """Instructions by the feature that caused them: each helper's (HELPERS,
    then the stack-trace functions) charged to its callers in proportion to
    their calls; a caller outside the debug features leaves it with the
    helper's own feature. Inline KASAN checks in functions outside the debug
    features count as KASAN. Returns {feature: instructions}."""
    callers = {}
    for (callee, caller), n in calls.items():
        if caller != callee:
            callers.setdefault(callee, {})[caller] = callers.setdefault(callee, {}).get(caller, 0) + n
    res = {}
    total = {fn: float(f[0]) for fn, f in funcs.items()}
    feat = {fn: f[4] for fn, f in funcs.items()}
    inline = {fn: f[1] for fn, f in funcs.items() if f[4] == OTHER}
    KASAN = FEATURES[0][0]

    def give(fn, n):
        res[feat[fn]] = res.get(feat[fn], 0) + n

    for h in HELPERS:
        t = total.pop(h, 0)
        if not t:
            continue
        cs = {c: n for c, n in callers.get(h, {}).items() if c in feat}
        nall = sum(cs.values())
        if not nall:
            res[feat[h]] = res.get(feat[h], 0) + t
            continue
        for c, n in cs.items():
            share = t * n / nall
            if c in total and (c in HELPERS or feat[c] != OTHER):
                total[c] += share  # passed on, or kept, with the caller
            else:
                res[feat[h]] = res.get(feat[h], 0) + share
    # lockdep's functions, with what they inherited, to the debug features
    # that took the locks (in proportion to the calls of its entry points).
    debug_feats = {f for f, _, _ in FEATURES} - {SPIN, "idle loop", LOCKDEP}
    lpool = 0.0
    for fn in list(total):
        if feat[fn] == LOCKDEP:
            lpool += total.pop(fn)
    cs = caller_calls(callers, feat, LOCKDEP_ENTRIES, LOCKDEP)
    nall = sum(cs.values())
    lockdep_by = {}
    for c, n in cs.items():
        share = lpool * n / nall
        if c in total and feat[c] in debug_feats:
            total[c] += share
            lockdep_by[feat[c]] = lockdep_by.get(feat[c], 0) + share
        else:
            res[LOCKDEP] = res.get(LOCKDEP, 0) + share
    if not nall:
        res[LOCKDEP] = res.get(LOCKDEP, 0) + lpool
    # The stack-trace functions, with what they inherited, to the features
    # that asked for the traces (calls of the entry points).
    pool = {"unwind": 0.0, "depot": 0.0}
    for fn in list(total):
        if feat[fn] == STACK:
            kind = "depot" if fn.startswith(("stack_depot", "__stack_depot", "depot_")) else "unwind"
            pool[kind] += total.pop(fn)
    info = {"unwind": pool["unwind"], "depot": pool["depot"], "lockdep_pool": lpool,
            "lockdep_calls": nall, "lockdep_to": lockdep_by}
    for kind, entries in (("unwind", STACK_UNWIND_ENTRIES), ("depot", STACK_DEPOT_ENTRIES)):
        cs = caller_calls(callers, feat, entries, STACK)
        nall = sum(cs.values())
        info[kind + "_calls"] = nall
        for c, n in cs.items():
            f = feat[c] if feat[c] != OTHER else STACK
            res[f] = res.get(f, 0) + pool[kind] * n / nall
            info.setdefault("stack_to", {})
            info["stack_to"][f] = info["stack_to"].get(f, 0) + pool[kind] * n / nall
        if not nall:
            res[STACK] = res.get(STACK, 0) + pool[kind]
    info["kasan_inline_other"] = 0
    for fn, t in total.items():
        if fn in inline:
            k = min(inline[fn], t)
            info["kasan_inline_other"] += k
            res[KASAN] = res.get(KASAN, 0) + k
            t -= k
        res[feat[fn]] = res.get(feat[fn], 0) + t
    return res, info


def fmt(n):
    if n >= 1e9:
        return f"{n / 1e9:.2f} G"
    if n >= 1e6:
        return f"{n / 1e6:.1f} M"
    if n >= 1e3:
        return f"{n / 1e3:.1f} k"
    return f"{n:.0f}"


def pct(a, b):
    return f"{100 * a / b:.1f}%" if b else "n/a"


def analyze(args):
    d = args.dir
    out = os.path.join(d, "run", "out")
    rows = read_log(out)
    marks = [v for k, v in rows if k == "MARK"]
    exits = [v for k, v in rows if k == "EXIT"]
    smp = 2
    vmopts = open(os.path.join(d, "vm-opts")).read().split() if os.path.exists(
        os.path.join(d, "vm-opts")) else []
    if "--smp" in vmopts:
        smp = int(vmopts[vmopts.index("--smp") + 1])
    kdir = os.path.dirname(args.system_map)
    ko = os.path.join(d, "module.ko")
    loads = module_loads(out, ko)
    mismatch = []
    if os.path.exists(ko):
        bid = elf_build_id(ko)
        mismatch = [i for i, l in enumerate(loads) if l.get("build-id") and l["build-id"] != bid]
    syms = Symbols(args.system_map, kdir, ko, loads, "pagefill")
    code = Code(args.vmlinux, ko, loads, args.cache_dir)
    zero = [0, 0, 0, 0]
    # Windows: (name, start counters, end counters, start profile, end profile).
    wins = []
    nm = len(marks)
    end = exits[0] if exits else None
    if nm >= 1:
        wins.append(("boot", zero, marks[0], None, 0))
    if nm >= 2:
        wins.append(("command", marks[0], marks[-1], 0, nm - 1))
        if end:
            wins.append(("shutdown", marks[-1], end, nm - 1, nm))
    elif nm == 1 and end:
        wins.append(("command (did not reach its second marker)", marks[0], end, 0, 1))
    elif nm == 0 and end:
        wins.append(("boot (no marker reached)", zero, end, None, 0))
    profs = {}

    def prof(i):
        if i is None:
            return None
        if i not in profs:
            profs[i] = load_prof(out, i)
        return profs[i]

    summary = {"flavour": args.flavour, "smp": smp, "windows": [],
               "module_loads": len(loads), "module_mismatch": mismatch}
    for key in ("cmd", "vm-opts", "vm-run.rc"):
        p = os.path.join(d, key)
        if os.path.exists(p):
            summary[key] = open(p).read().strip()
    err = os.path.join(d, "vm-run.err")
    summary["vm_run"] = ""
    if os.path.exists(err):
        for line in open(err):
            if "VM ran for" in line or "FAILED" in line:
                summary["vm_run"] += line.split("] ", 1)[-1].strip() + " "
    tsv = open(os.path.join(d, "functions.tsv"), "w")
    tsv.write("window\tfunction\tfeature\tinstructions\tkasan_inline\tubsan_inline\trust_checks\n")
    for name, s, e, pa, pb in wins:
        total, kern = e[0] - s[0], e[1] - s[1]
        wall, idle = (e[2] - s[2]) / 1e9, (e[3] - s[3]) / 1e9
        w = {"name": name, "wall_s": wall, "halted_vcpu_s": idle, "total": total, "kernel": kern,
             "user": total - kern}
        b = prof(pb)
        if b is not None:
            blocks = window_blocks(prof(pa), b)
            if pa is None:
                syms.set_decompressor(blocks)
            funcs, calls, found, missing = analyze_window(blocks, syms, code)
            profiled = sum(f[0] for f in funcs.values())
            w["profiled"] = profiled
            w["kernel_disassembled"] = found
            w["kernel_not_disassembled"] = missing
            feats = {}
            for fn, f in funcs.items():
                feats[f[4]] = feats.get(f[4], 0) + f[0]
            w["features"] = feats
            w["kasan_inline"] = sum(f[1] for f in funcs.values())
            w["ubsan_inline"] = sum(f[2] for f in funcs.values())
            w["rust_checks"] = sum(f[3] for f in funcs.values())
            w["kasan_inline_in_debug_features"] = sum(f[1] for f in funcs.values()
                                                      if f[4] not in (OTHER, USER, LOW, DECOMP))
            w["stack"] = stack_attribution(funcs, calls, syms)
            w["charged"], w["stack_charged"] = charged_features(funcs, calls)
            # kmemleak's words scanned (scan_block reads each with KASAN
            # off) and those the scanning thread read (its stop test).
            words = calls.get(("kasan_disable_current", "scan_block"), 0)
            thread = calls.get(("kthread_should_stop", "scan_should_stop"), 0)
            w["kmemleak_words"] = words
            w["kmemleak_words_thread"] = thread
            w["calls"] = {}
            for (callee, caller), n in calls.items():
                if callee in COUNTED_CALLS:
                    w["calls"].setdefault(callee, {})[caller] = n
            ftop = {}
            for fn, f in sorted(funcs.items(), key=lambda t: -t[1][0]):
                if f[4] not in (OTHER, USER, LOW, DECOMP) and len(ftop.setdefault(f[4], [])) < 6:
                    ftop[f[4]].append((fn, f[0]))
            w["feature_top"] = ftop
            w["kmemleak_scanning"] = sum(f[0] for fn, f in funcs.items()
                                         if f[4] == "kmemleak" and fn in KMEMLEAK_SCAN)
            # __lookup_object serves both: its share by the calls from scanning.
            lk = {c: n for (e, c), n in calls.items() if e == "__lookup_object"}
            if lk and "__lookup_object" in funcs:
                w["kmemleak_scanning"] += funcs["__lookup_object"][0] * sum(
                    n for c, n in lk.items() if c in KMEMLEAK_SCAN) / sum(lk.values())
            w["top"] = [(fn, f[0], f[4], f[1]) for fn, f in
                        sorted(funcs.items(), key=lambda t: -t[1][0])[:60]]
            for fn, f in sorted(funcs.items(), key=lambda t: -t[1][0]):
                tsv.write(f"{name}\t{fn}\t{f[4]}\t{f[0]}\t{f[1]}\t{f[2]}\t{f[3]}\n")
        summary["windows"].append(w)
    tsv.close()
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print_report(summary)


def feature_table(w, p, show_inline=True):
    total = w["total"]
    feats = dict(w["features"])
    rows = []
    for feat, _, _ in FEATURES:
        if feats.get(feat):
            rows.append((feat, feats.pop(feat)))
    rest = sorted(feats.items(), key=lambda t: -t[1])
    p("| feature | instructions | share of the window |")
    p("| --- | ---: | ---: |")
    dbg = 0
    for feat, n in rows:
        dbg += n
        p(f"| {feat} | {fmt(n)} | {pct(n, total)} |")
    p(f"| **debug features, by function (sum)** | **{fmt(dbg)}** | **{pct(dbg, total)}** |")
    if show_inline:
        k = w["kasan_inline"] - w["kasan_inline_in_debug_features"]
        p(f"| KASAN inline shadow checks in the other functions (estimate) | {fmt(k)} | "
          f"{pct(k, total)} |")
        if w["ubsan_inline"]:
            p(f"| UBSAN inline checks (estimate) | {fmt(w['ubsan_inline'])} | "
              f"{pct(w['ubsan_inline'], total)} |")
        if w["rust_checks"]:
            p(f"| Rust overflow and bounds checks (estimate) | {fmt(w['rust_checks'])} | "
              f"{pct(w['rust_checks'], total)} |")
    for feat, n in rest:
        label = feat if feat != OTHER else "kernel: not a debug feature (checks inlined in it included)"
        p(f"| {label} | {fmt(n)} | {pct(n, total)} |")
    p(f"| **window total (profiled)** | **{fmt(w['profiled'])}** | |")
    p("")


def charged_table(w, p):
    total = w["total"]
    ch = dict(w["charged"])
    p("| caused by | instructions | share of the window |")
    p("| --- | ---: | ---: |")
    dbg = 0
    for feat, _, _ in FEATURES:
        if ch.get(feat) and feat not in (SPIN, "idle loop"):
            dbg += ch[feat]
            label = "KASAN (inline checks, runtime, its alloc/free stack traces)" if feat == FEATURES[0][0] else feat
            p(f"| {label} | {fmt(w['charged'][feat])} | {pct(ch.pop(feat), total)} |")
    p(f"| **debug features** | **{fmt(dbg)}** | **{pct(dbg, total)}** |")
    for feat, n in sorted(ch.items(), key=lambda t: -t[1]):
        p(f"| {feat} | {fmt(n)} | {pct(n, total)} |")
    p("")


def print_report(s):
    p = print
    p(f"# Instruction profile: {s.get('cmd', '?')}\n")
    if s.get("module_mismatch"):
        p(f"**The module's loads {s['module_mismatch']} were another build than module.ko: "
          "their functions are misnamed.**\n")
    p(f"Kernel `{s['flavour']}`, vm-run options `{s.get('vm-opts', '')}`, {s['smp']} vCPUs; "
      f"vm-run.sh exited with {s.get('vm-run.rc', '?')}. {s.get('vm_run', '')}\n")
    p("| window | wall (host) | vCPU time halted | instructions | kernel | user space | "
      "decompressor | firmware |")
    p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for w in s["windows"]:
        f = w.get("features", {})
        p(f"| {w['name']} | {w['wall_s']:.1f} s | {w['halted_vcpu_s']:.1f} s of "
          f"{w['wall_s'] * s['smp']:.1f} ({pct(w['halted_vcpu_s'], w['wall_s'] * s['smp'])}) | "
          f"{fmt(w['total'])} | {fmt(w['kernel'])} | {fmt(f.get(USER, 0))} | "
          f"{fmt(f.get(DECOMP, 0))} | {fmt(f.get(LOW, 0))} |")
    p("")
    p("Wall time is the host's clock; vCPU time halted is the time the vCPUs spent in HLT "
      "(idle), summed over the vCPUs, out of vCPUs x wall time. A halted vCPU executes no "
      "instruction.\n")
    for w in s["windows"]:
        if "features" not in w:
            continue
        p(f"## {w['name']}\n")
        if w["profiled"] != w["total"]:
            p(f"(profiled {fmt(w['profiled'])} of {fmt(w['total'])} instructions)\n")
        p("By the feature that caused them (KASAN's inline checks in the other functions "
          "counted as KASAN; helpers and stack traces charged to their callers):\n")
        charged_table(w, p)
        p("By function (each function's own instructions, by its feature):\n")
        feature_table(w, p)
        p(f"Inline KASAN in all kernel code of the window: {fmt(w['kasan_inline'])} "
          f"({pct(w['kasan_inline'], w['kernel'])} of the kernel's instructions); kernel "
          f"instructions in blocks not found in the disassembly (patched or generated code): "
          f"{fmt(w['kernel_not_disassembled'])}.\n")
        st = w["stack"]
        if any(v["instructions"] for v in st.values()):
            p("Stack traces by the feature that asked for them (in proportion to calls):\n")
            p("| helper | instructions | calls | feature: calls, instructions (est.) |")
            p("| --- | ---: | ---: | --- |")
            for pool, v in st.items():
                parts = "; ".join(f"{k}: {x['calls']}, {fmt(x['instructions'])}" for k, x in
                                  sorted(v["by_feature"].items(), key=lambda t: -t[1]["calls"]))
                p(f"| {pool} | {fmt(v['instructions'])} | {v['calls']} | {parts} |")
            p("")
        sc = w["stack_charged"]
        if sc.get("unwind_calls"):
            p(f"Stack traces, with the KASAN checks and helpers they call: unwinding "
              f"{fmt(sc['unwind'])} for {sc['unwind_calls']} traces "
              f"({fmt(sc['unwind'] / sc['unwind_calls'])} a trace), stack depot "
              f"{fmt(sc['depot'])} for {sc.get('depot_calls', 0)} saves.\n")
        if w.get("kmemleak_words"):
            p(f"kmemleak read {w['kmemleak_words']} words in scan_block, "
              f"{w['kmemleak_words_thread']} of them in its scanning thread "
              f"({pct(w['kmemleak_words_thread'], w['kmemleak_words'])}), the rest in scans "
              f"asked for through /sys/kernel/debug/kmemleak.\n")
        if w["features"].get("kmemleak"):
            p(f"kmemleak: {fmt(w['kmemleak_scanning'])} scanning (scan_block, scan_gray_list, "
              f"... and reading the report), "
              f"{fmt(w['features']['kmemleak'] - w['kmemleak_scanning'])} tracking allocations "
              f"and frees.\n")
        for callee, by in sorted(w["calls"].items()):
            p(f"Calls of `{callee}`: " + ", ".join(
                f"{n} from `{demangle(c)}`" for c, n in sorted(by.items(), key=lambda t: -t[1])[:8])
              + "\n")
        if w.get("feature_top"):
            p("| feature | its biggest functions |")
            p("| --- | --- |")
            for feat, fl in w["feature_top"].items():
                p(f"| {feat} | " + ", ".join(f"`{demangle(fn)}` {fmt(n)}" for fn, n in fl) + " |")
            p("")
        p("| # | function | instructions | share | feature | of which inline KASAN |")
        p("| ---: | --- | ---: | ---: | --- | ---: |")
        kern = [t for t in w["top"] if t[0] not in (USER, LOW) and t[2] != DECOMP]
        for i, (fn, n, feat, k) in enumerate(kern[:30], 1):
            p(f"| {i} | `{demangle(fn)}` | {fmt(n)} | {pct(n, w['total'])} | {feat} | {fmt(k)} |")
        p("")


def compare(args):
    a = json.load(open(os.path.join(args.a, "summary.json")))
    b = json.load(open(os.path.join(args.b, "summary.json")))
    p = print
    p(f"| window | {a['flavour']}: wall | instructions | kernel | {b['flavour']}: wall | "
      f"instructions | kernel | ratio |")
    p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for wa in a["windows"]:
        wb = next((w for w in b["windows"] if w["name"] == wa["name"]), None)
        if not wb:
            continue
        p(f"| {wa['name']} | {wa['wall_s']:.1f} s | {fmt(wa['total'])} | {fmt(wa['kernel'])} | "
          f"{wb['wall_s']:.1f} s | {fmt(wb['total'])} | {fmt(wb['kernel'])} | "
          f"{wa['total'] / wb['total']:.1f} |")
    p("")
    # Functions outside the debug features, in both kernels' command windows.
    fa, fb = {}, {}
    for path, dst in ((os.path.join(args.a, "functions.tsv"), fa),
                      (os.path.join(args.b, "functions.tsv"), fb)):
        with open(path) as f:
            next(f)
            for line in f:
                win, fn, feat, n, k, _, _ = line.rstrip("\n").split("\t")
                if win == "command":
                    dst[fn] = (int(n), feat, int(k))
    common = [fn for fn in fa if fn in fb and fa[fn][1] == OTHER and fb[fn][1] == OTHER
              and fn not in HELPERS]
    na = sum(fa[fn][0] for fn in common)
    ka = sum(fa[fn][2] for fn in common)
    nb = sum(fb[fn][0] for fn in common)
    p(f"Functions outside the debug features that ran in both command windows: {len(common)}; "
      f"{a['flavour']} {fmt(na)} instructions (of which {fmt(ka)} inline KASAN by the "
      f"disassembly), {b['flavour']} {fmt(nb)}; ratio {na / nb:.2f}, "
      f"{(na - ka) / nb:.2f} without the KASAN estimate.\n" if nb else "")
    rows = sorted(common, key=lambda fn: -fa[fn][0])[:20]
    p(f"| function | {a['flavour']} | of which inline KASAN | {b['flavour']} | ratio |")
    p("| --- | ---: | ---: | ---: | ---: |")
    for fn in rows:
        p(f"| `{demangle(fn)}` | {fmt(fa[fn][0])} | {fmt(fa[fn][2])} | {fmt(fb[fn][0])} | "
          f"{fa[fn][0] / fb[fn][0]:.1f} |")
    p("")


def tables(args):
    """Side by side: the windows of each run, and the instructions of each
    run's windows by the feature that caused them."""
    runs = []
    for spec in args.runs:
        label, _, d = spec.partition("=")
        runs.append((label, json.load(open(os.path.join(d, "summary.json")))))
    p = print
    p("| run | window | wall (host) | vCPU time halted | instructions | kernel | user space | "
      "decompressor | firmware |")
    p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, s in runs:
        for w in s["windows"]:
            f = w.get("features", {})
            p(f"| {label} | {w['name']} | {w['wall_s']:.0f} s | {w['halted_vcpu_s']:.0f} s of "
              f"{w['wall_s'] * s['smp']:.0f} | {fmt(w['total'])} | {fmt(w['kernel'])} | "
              f"{fmt(f.get(USER, 0))} | {fmt(f.get(DECOMP, 0))} | {fmt(f.get(LOW, 0))} |")
    p("")
    cols = [(label, w) for label, s in runs for w in s["windows"]
            if "charged" in w and w["name"] in args.windows.split(",")]
    p("| caused by | " + " | ".join(f"{label}: {w['name']}" for label, w in cols) + " |")
    p("| --- | " + " | ".join("---:" for _ in cols) + " |")
    names = [f for f, _, _ in FEATURES if f not in (SPIN, "idle loop")]
    rest = []
    for _, w in cols:
        for f in w["charged"]:
            if f not in names and f not in rest:
                rest.append(f)

    def row(label, get):
        p(f"| {label} | " + " | ".join(
            f"{fmt(get(w))} ({pct(get(w), w['total'])})" for _, w in cols) + " |")

    for f in names:
        if any(w["charged"].get(f, 0) >= 1e6 for _, w in cols):
            label = "KASAN (inline checks, runtime, its alloc/free stack traces)" \
                if f == FEATURES[0][0] else f
            row(label, lambda w, f=f: w["charged"].get(f, 0))
    row("**debug features, all**", lambda w: sum(w["charged"].get(f, 0) for f in names))
    for f in sorted(rest, key=lambda f: -max(w["charged"].get(f, 0) for _, w in cols)):
        row(f, lambda w, f=f: w["charged"].get(f, 0))
    row("**window total**", lambda w: w["total"])
    p("")
    p("| in the window | " + " | ".join(f"{label}: {w['name']}" for label, w in cols) + " |")
    p("| --- | " + " | ".join("---:" for _ in cols) + " |")
    row("KASAN inline checks, all kernel code (estimate)", lambda w: w["kasan_inline"])
    row("UBSAN inline checks (estimate)", lambda w: w["ubsan_inline"])
    row("stack traces: unwinding (with its KASAN checks)",
        lambda w: w["stack_charged"].get("unwind", 0))
    row("stack traces: stack depot", lambda w: w["stack_charged"].get("depot", 0))
    row("stack traces for KASAN (alloc, free, call_rcu/work stacks)",
        lambda w: w["stack_charged"].get("stack_to", {}).get(FEATURES[0][0], 0))
    row("stack traces for kmemleak (allocation stacks)",
        lambda w: w["stack_charged"].get("stack_to", {}).get("kmemleak", 0))
    row("KASAN inline checks in non-debug functions (in KASAN above)",
        lambda w: w["stack_charged"].get("kasan_inline_other", 0))
    row("lockdep work for locks the unwinder took (in stack traces above)",
        lambda w: w["stack_charged"].get("lockdep_to", {}).get(STACK, 0))
    p("| stack traces taken | " + " | ".join(
        str(w["stack_charged"].get("unwind_calls", 0)) for _, w in cols) + " |")
    p("| kmemleak words scanned (by its thread) | " + " | ".join(
        f"{w.get('kmemleak_words', 0)} ({w.get('kmemleak_words_thread', 0)})" for _, w in cols) + " |")
    p("")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("analyze")
    a.add_argument("dir")
    a.add_argument("--flavour", default="?")
    a.add_argument("--system-map", required=True)
    a.add_argument("--vmlinux")
    a.add_argument("--cache-dir")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    t = sub.add_parser("tables")
    t.add_argument("--windows", default="boot,command,shutdown")
    t.add_argument("runs", nargs="+", help="LABEL=DIR")
    args = ap.parse_args()
    if args.what == "analyze":
        analyze(args)
    elif args.what == "tables":
        tables(args)
    else:
        compare(args)


if __name__ == "__main__":
    main()
