#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py report DIR | profile DIR SYSTEM_MAP | profile-report DIR | rst DIR | guard RAW FIGURES

report: reads DIR/raw-*.txt but raw-prof.txt (scripts/bench/guest.sh's lines
from the boots of scripts/bench.sh), prints the
markdown results and writes DIR/cost.svg (instructions per frame against
frame size, both NICs, median with the runs' range) and DIR/lat-cdf.svg
(the distribution of each latency case's round trips).

profile: reads DIR/raw-prof.txt and the pf-insn plugin's per-block counts in
DIR/run-prof/out, names the blocks with the guest's /proc/kallsyms (or the
kernel's System.map), writes every function's count to DIR/profile.tsv and
prints it as markdown (profile-report: the markdown again from the tsv): the
instructions per delivered frame by category and by function.

rst: the main tables of DIR's raw lines (and profile.tsv) as reStructuredText,
each between the comments ".. NAME-start" and ".. NAME-end" that
benchmarks.rst includes it by, so the page shows the run's own figures.

guard: reads guest.sh's lines in RAW and the recorded figures in FIGURES
(lines "NIC SIZE INSTRUCTIONS", # comments), and prints a KTAP point per
figure: the median instructions per frame of NIC at SIZE, which fails when
it is more than GUARD_MARGIN above the recorded one.

Medians are of the runs; "a-b" is the runs' range. Instructions per frame
are the window's instructions, less the idle rate (instructions per second
of an idle window with the sink waiting) times the window's length,
divided by the frames delivered.
"""
import bisect
import os
import statistics
import sys

NICS = {"pf": "pagefill", "vn": "virtio-net", "pfpage": "pagefill, one-page buffers",
        "pfgro": "pagefill, UDP_GRO socket", "vngro": "virtio-net, UDP_GRO socket",
        "pfmerge": "pagefill merging, UDP_GRO socket",
        "pfmergeplain": "pagefill merging, plain socket",
        "pfxdpdrop": "pagefill XDP_DROP", "vnxdpdrop": "virtio-net XDP_DROP",
        "pfxdptx": "pagefill XDP_TX", "vnxdptx": "virtio-net XDP_TX",
        "pfxdppass": "pagefill XDP_PASS", "vnxdppass": "virtio-net XDP_PASS",
        "pfxskzc": "pagefill AF_XDP zero-copy", "vnxskzc": "virtio-net AF_XDP zero-copy",
        "pfxskcopy": "pagefill AF_XDP copy", "vnxskcopy": "virtio-net AF_XDP copy"}
# The ratios the cost tables give: (numerator, denominator, heading).
RATIOS = [("pf", "vn", "pagefill/virtio-net"), ("pfpage", "vn", "one page/virtio-net"),
          ("pfgro", "vngro", "pagefill/virtio-net"),
          ("pfmerge", "vngro", "merging/virtio-net, both UDP_GRO"),
          ("pfmerge", "vn", "merging, UDP_GRO/virtio-net, plain"),
          ("pfmergeplain", "vn", "merging, plain/virtio-net, plain"),
          ("pfxdpdrop", "vnxdpdrop", "XDP_DROP: pagefill/virtio-net"),
          ("pfxdpdrop", "pf", "pagefill: XDP_DROP/socket"),
          ("pfxdptx", "vnxdptx", "XDP_TX: pagefill/virtio-net"),
          ("pfxdppass", "pf", "pagefill: XDP_PASS/no program"),
          ("pfxskzc", "pf", "pagefill: AF_XDP zero-copy/UDP socket"),
          ("pfxskzc", "vnxskzc", "AF_XDP zero-copy: pagefill/virtio-net"),
          ("pfxskzc", "vnxskcopy", "pagefill zero-copy/virtio-net copy"),
          ("pfxskcopy", "vnxskcopy", "AF_XDP copy: pagefill/virtio-net")]


def parse(path):
    """Lines as (kind, {key: value}); the generator's answer as gen_KEY."""
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path):
        words = line.split()
        if not words or words[0].startswith("#") or words[0] not in (
                "idle", "cost", "multi", "rate", "mem", "lat", "prof"):
            continue
        kind, d, prefix, i = words[0], {}, "", 1
        while i < len(words):
            w = words[i]
            if w in ("gen", "rtt_us"):
                prefix = "gen_" if w == "gen" else ""
                i += 1
                continue
            if i + 1 < len(words):
                v = words[i + 1]
                try:
                    v = int(v)
                except ValueError:
                    pass
                d[prefix + w] = v
            i += 2
        rows.append((kind, d))
    return rows


# A part run again on its own (bench.sh --what PART --out ELSEWHERE, its
# raw-PART.txt copied beside the others) stands for that part: its lines
# replace, in the other raw files, those of the kinds that part alone
# prints. The parts, those kinds, and the section of results.md they make.
OWN_KINDS = {"coal": ("lat",), "mem": ("mem",), "multi": ("multi",)}
SECTION = {"lat": "section 4", "mem": "section 3", "multi": "section 1c"}


def raw_files(d):
    """DIR's raw files but the profile's: (name, its parsed lines less those
    a part's own raw file replaces (OWN_KINDS), (kind, file) for each kind
    of line another file replaces)."""
    names = [f for f in sorted(os.listdir(d))
             if f.startswith("raw-") and f.endswith(".txt") and f != "raw-prof.txt"]
    alone = {k: f for f in names for k in OWN_KINDS.get(f[4:-4], ())}
    files = []
    for f in names:
        rows = parse(os.path.join(d, f))
        files.append((f, [(k, x) for k, x in rows if alone.get(k, f) == f],
                      sorted({(k, alone[k]) for k, _ in rows if alone.get(k, f) != f})))
    return files


def raw_rows(d):
    """Every raw line of DIR but the profile's, parsed (raw_files)."""
    return [r for _, rows, _ in raw_files(d) for r in rows]


def load_profile(d):
    """DIR/profile.tsv as {(nic, size, frames): {function: instructions}}."""
    runs = {}
    with open(os.path.join(d, "profile.tsv")) as f:
        next(f)
        for line in f:
            nic, size, frames, func, n = line.rstrip("\n").split("\t")
            runs.setdefault((nic, int(size), int(frames)), {})[func] = int(n)
    return runs


def med(xs):
    return statistics.median(xs) if xs else None


def rng(xs, fmt="{:.0f}"):
    if not xs:
        return "n/a"
    return (fmt + "-" + fmt).format(min(xs), max(xs)) if len(xs) > 1 else fmt.format(xs[0])


def fnum(x, fmt="{:.0f}"):
    return "n/a" if x is None else fmt.format(x)


def idle_rates(rows):
    idle = [d for k, d in rows if k == "idle" and d.get("window_ns")]
    if not idle:
        return 0.0, 0.0, []
    tot = med([d["insns"] / d["window_ns"] for d in idle])
    ker = med([d["kinsns"] / d["window_ns"] for d in idle])
    return tot, ker, idle


def per_frame(d, tot_rate, ker_rate):
    # XDP rows: the frames the program saw, of which only the last reached
    # the sink where it dropped or sent back the rest.
    n = d.get("frames", d.get("received", 0))
    if not n:
        return None, None
    w = d["window_ns"]
    return (d["insns"] - tot_rate * w) / n, (d["kinsns"] - ker_rate * w) / n


def offers_of(rs, s):
    """The offered rates of size s, paced ascending, unpaced (0) last."""
    return sorted({x["offered"] for x in rs if x["size"] == s}, key=lambda o: (o == 0, o))


def xdp_loss(rate, p):
    """The loss runs with a native XDP program (rows with "seen")."""
    nics = [n for n in ("pfxdpdrop", "vnxdpdrop", "pfxdptx", "vnxdptx")
            if any(x["nic"] == n for x in rate)]

    def lost(x):
        return max(0, x.get("gen_frames", 0) - x["seen"])

    p("## 2b. Offered rate and loss with a native XDP program (paced senders)\n")
    p("The program drops or sends back every frame but the run's last, which reaches the "
      "sink. Seen: the frames the program saw (the interface's `rx_packets` over the run; both "
      "drivers count every frame a program saw there), over the sink's window (guest clock). "
      "Lost: the generator's frames less those seen.\n")
    p("| size | offered/s | program | seen/s | range | lost (all runs) | pagefill xoffs |")
    p("| ---: | ---: | --- | ---: | ---: | ---: | ---: |")
    for s in sorted({x["size"] for x in rate}):
        for o in offers_of(rate, s):
            for nic in nics:
                rs = [x for x in rate if x["size"] == s and x["offered"] == o and x["nic"] == nic]
                if not rs:
                    continue
                sr = [x["seen"] / (x["window_ns"] / 1e9) for x in rs if x.get("window_ns")]
                xo = med([x["gen_xoffs"] for x in rs if "gen_xoffs" in x])
                p(f"| {s} | {o or 'unpaced'} | {NICS[nic]} | {fnum(med(sr))} | {rng(sr)} | "
                  f"{sum(lost(x) for x in rs)} | {fnum(xo) if nic.startswith('pf') else '-'} |")
    p("")
    p("Zero-loss rate with the program: the highest offered rate up to which no run lost a "
      "frame (unpaced counts as the highest):\n")
    for s in sorted({x["size"] for x in rate}):
        for nic in nics:
            best = None
            for o in offers_of(rate, s):
                rs = [x for x in rate if x["size"] == s and x["offered"] == o and x["nic"] == nic]
                if not rs or any(lost(x) for x in rs):
                    break
                best = o
            text = "none of those offered" if best is None else (
                "unpaced" if best == 0 else f"{best}/s")
            p(f"- {s} bytes, {NICS[nic]}: {text}")
    p("")


def svg_plot(path, sizes, series):
    """series: {nic: [(size, median, lo, hi)]}; plain SVG, no libraries."""
    W, H, L, R, T, B = 640, 400, 70, 20, 30, 50
    ymax = max(hi for s in series.values() for _, _, _, hi in s) * 1.1
    xmin, xmax = min(sizes), max(sizes)

    def x(v):
        return L + (v - xmin) / (xmax - xmin) * (W - L - R)

    def y(v):
        return H - B - v / ymax * (H - T - B)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle">Guest instructions per delivered frame '
           f'(median, bars: range of runs)</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>',
           f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">UDP frame size (bytes)</text>',
           f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" '
           f'transform="rotate(-90 16 {(T + H - B) / 2})">instructions per frame</text>']
    step = 10 ** (len(str(int(ymax))) - 1)
    if ymax / step < 4:
        step //= 2
    v = 0
    while v <= ymax:
        out.append(f'<line x1="{L - 4}" y1="{y(v):.1f}" x2="{W - R}" y2="{y(v):.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{L - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
        v += step
    for s in sizes:
        out.append(f'<text x="{x(s):.1f}" y="{H - B + 16}" text-anchor="middle">{s}</text>')
    colours = {"pf": "#c0392b", "vn": "#2471a3", "pfpage": "#e67e22"}
    for i, (nic, pts) in enumerate(series.items()):
        c = colours.get(nic, "black")
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>' % (
            c, " ".join(f"{x(s):.1f},{y(m):.1f}" for s, m, _, _ in pts)))
        for s, m, lo, hi in pts:
            out.append(f'<line x1="{x(s):.1f}" y1="{y(lo):.1f}" x2="{x(s):.1f}" y2="{y(hi):.1f}" '
                       f'stroke="{c}"/>')
            out.append(f'<circle cx="{x(s):.1f}" cy="{y(m):.1f}" r="3" fill="{c}"/>')
        out.append(f'<rect x="{L + 16}" y="{T + 10 + i * 18}" width="12" height="12" fill="{c}"/>')
        out.append(f'<text x="{L + 34}" y="{T + 20 + i * 18}">{NICS[nic]}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def cost_table(cost, order, tot_rate, ker_rate):
    """Prints the cost rows of the NICs in order as two tables; returns the
    plot's series, {nic: [(size, median, lo, hi)]}."""
    p = print
    nics = [n for n in order if any(x["nic"] == n for x in cost)]
    ratios = [r for r in RATIOS if r[0] in nics and r[1] in nics]
    head = "| size |" + "".join(f" {NICS[n]} | range |" for n in nics)
    head += "".join(f" {h} |" for _, _, h in ratios)
    head2 = "| size |" + "".join(f" {NICS[n]}: kernel | lost | delivered/s |" for n in nics)
    lines = [head, "|" + " ---: |" * (1 + 2 * len(nics) + len(ratios))]
    lines2 = [head2, "|" + " ---: |" * (1 + 3 * len(nics))]
    sizes = sorted({x["size"] for x in cost})
    series = {n: [] for n in nics}
    for s in sizes:
        line, line2, meds = f"| {s} |", f"| {s} |", {}
        for nic in nics:
            rs = [x for x in cost if x["size"] == s and x["nic"] == nic]
            pf = [per_frame(x, tot_rate, ker_rate) for x in rs]
            t = [a for a, _ in pf if a is not None]
            k = [b for _, b in pf if b is not None]
            meds[nic] = med(t)
            lost = sum(x.get("gen_frames", 0) - x["received"] for x in rs)
            over = sum(x["overflow"] for x in rs if isinstance(x.get("overflow"), int))
            if any("frames" in x for x in rs):
                # A program dropped or sent back all but the last.
                lost = "-"
            elif not nic.startswith("vn") and any("overflow" in x for x in rs):
                lost = f"{lost} ({over})"
            dr = med([x["received"] / (x["span_ns"] / 1e9) for x in rs if x.get("span_ns")])
            line += f" {fnum(meds[nic])} | {rng(t)} |"
            line2 += f" {fnum(med(k))} | {lost} | {fnum(dr)} |"
            if t:
                series[nic].append((s, meds[nic], min(t), max(t)))
        for a, b, _ in ratios:
            r = meds[a] / meds[b] if meds.get(a) and meds.get(b) else None
            line += f" {fnum(r, '{:.2f}')} |"
        lines.append(line)
        lines2.append(line2)
    p("\n".join(lines) + "\n")
    p("\n".join(lines2))
    runs = max(x["run"] for x in cost)
    p(f"\n{runs} runs per point, {max(x.get('gen_frames', 0) for x in cost)} frames per run, "
      "one stream (node 1, group 0 for pagefill), senders unpaced. Median of the runs, their "
      "range, the kernel's part (median), frames lost (sent by the generator, not delivered "
      "to the sink, summed over the runs; in brackets, where recorded, those the pagefill "
      "device counted in `dev_drop_overflow`), and the delivered rate (median; guest clock "
      "under TCG, from the first to the last batch the sink read). Lost frames are not "
      "counted as delivered, so a run with losses costs a little more per delivered frame.\n")
    return series


def commits(d):
    """The commit each raw file says it measured (bench.sh's first line)."""
    found = {}
    for f in sorted(os.listdir(d)):
        if f.startswith("raw-") and f.endswith(".txt"):
            with open(os.path.join(d, f)) as raw:
                words = raw.readline().split()
            if len(words) == 2 and words[0] == "commit":
                found.setdefault(words[1], []).append(f)
    return found


def report(d):
    rows = raw_rows(d)
    tot_rate, ker_rate, idle = idle_rates(rows)
    p = print
    p("# pagefill vs virtio-net: results\n")
    p("Made by `scripts/bench.sh` (see Documentation/networking/device_drivers/ethernet/"
      "pagefill/benchmarks.rst). Raw lines: `raw-*.txt`.\n")
    replaced = {f: kinds for f, _, kinds in raw_files(d)}
    for c, files in commits(d).items():
        names = []
        for f in files:
            but = ", ".join(f"{SECTION[k]}, from `{g}`" for k, g in replaced.get(f, ()))
            names.append(f"`{f}`" + (f" (but {but})" if but else ""))
        p(f"Measured at commit `{c}`: every table from " + ", ".join(names) + ".\n")
    if idle:
        p(f"Idle baseline: {len(idle)} windows of the sink waiting, "
          f"{tot_rate * 1e9:.0f} instructions/s (kernel {ker_rate * 1e9:.0f}/s), subtracted "
          f"over each window's length.\n")
    cost = [x for k, x in rows if k == "cost" and x["nic"] in ("pf", "vn", "pfpage")]
    if cost:
        p("## 1. Guest instructions per delivered frame (unpaced senders)\n")
        series = cost_table(cost, ("pf", "vn", "pfpage"), tot_rate, ker_rate)
        sizes = sorted({x["size"] for x in cost})
        if all(series.values()):
            svg_plot(os.path.join(d, "cost.svg"), sizes, series)
            p("![instructions per frame](cost.svg)\n")
    gro = [x for k, x in rows if k == "cost" and x["nic"] in ("pfgro", "vngro")]
    if gro:
        p("## 1a. The same with a UDP_GRO socket (unpaced senders)\n")
        p("The sink asks for `UDP_GRO`: the stack merges a flow's frames into one buffer before "
          "IP and UDP see them, and the sink splits it by the segment size.\n")
        cost_table(gro, ("pfgro", "vngro"), tot_rate, ker_rate)
    merge = [x for k, x in rows if k == "cost"
             and x["nic"] in ("pfmerge", "pfmergeplain", "vngro", "vn")]
    if any(x["nic"] == "pfmerge" for x in merge):
        p("## 1b. pagefill merging (`ethtool --set-priv-flags DEV rx-udp-merge on`)\n")
        p("The driver hands a buffer's run of the stream's datagrams up as one `SKB_GSO_UDP_L4` "
          "skb: a `UDP_GRO` socket takes it whole (the sink splits it by the segment size), "
          "for a plain socket the stack splits it again. virtio-net as above, with either "
          "socket.\n")
        cost_table(merge, ("pfmerge", "pfmergeplain", "vngro", "vn"), tot_rate, ker_rate)
    xdp = [x for k, x in rows if k == "cost" and (x["nic"].startswith(("pfxdp", "vnxdp"))
                                                 or x["nic"] == "pf")]
    if any(x["nic"] != "pf" for x in xdp):
        p("## 1d. Native XDP (unpaced senders)\n")
        p("A native XDP program on each NIC (`tests/kselftest/xdp_pagefill.bpf.c`) drops, sends "
          "back or passes every frame of the run; one that drops or sends back passes the "
          "run's last frame to the sink, whose markers bound the run. Instructions per frame "
          "the program saw; pagefill without a program (the socket path, above) for the "
          "ratios. Lost and delivered rate are not measured for XDP_DROP and XDP_TX (\"-\").\n")
        cost_table(xdp, ("pfxdpdrop", "vnxdpdrop", "pfxdptx", "vnxdptx", "pfxdppass",
                         "vnxdppass", "pf"), tot_rate, ker_rate)
    xsk_sizes = {x["size"] for k, x in rows if k == "cost" and x["nic"].startswith("pfxsk")}
    xsk = [x for k, x in rows if k == "cost" and x["size"] in xsk_sizes and
           (x["nic"].startswith(("pfxsk", "vnxsk")) or x["nic"] == "pf")]
    if any(x["nic"] != "pf" for x in xsk):
        p("## 1e. AF_XDP (unpaced senders)\n")
        p("`pf_xsk` (`tests/kselftest/pf_xsk.c`) receives every frame of the run on an AF_XDP "
          "socket of the NIC's queue, fed by its own XSKMAP redirect program, and checks each "
          "stream's order, in zero-copy mode (the device writes each frame into a buffer of "
          "the socket's umem) and in copy mode (the core copies it there). A NIC that does not "
          "bind in a mode has no row. pagefill's UDP socket path (above) for the ratios.\n")
        cost_table(xsk, ("pfxskzc", "vnxskzc", "pfxskcopy", "vnxskcopy", "pf"), tot_rate,
                   ker_rate)
    multi = [x for k, x in rows if k == "multi"]
    if multi:
        p("## 1c. With 31 streams (nodes 1-31 of group 0, unpaced)\n")
        p("| size | pagefill | range | lost | virtio-net | range | lost | pagefill/virtio-net |")
        p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for s in sorted({x["size"] for x in multi}):
            line, meds = f"| {s} |", {}
            for nic in ("pf", "vn"):
                rs = [x for x in multi if x["size"] == s and x["nic"] == nic]
                t = [a for a, _ in (per_frame(x, tot_rate, ker_rate) for x in rs) if a is not None]
                meds[nic] = med(t)
                lost = sum(x.get("gen_frames", 0) - x["received"] for x in rs)
                line += f" {fnum(meds[nic])} | {rng(t)} | {lost} |"
            r = meds["pf"] / meds["vn"] if meds["pf"] and meds["vn"] else None
            p(line + f" {fnum(r, '{:.2f}')} |")
        p("")
    rate = [x for k, x in rows if k == "rate" and "seen" not in x]
    xrate = [x for k, x in rows if k == "rate" and "seen" in x]
    if rate:
        p("## 2. Offered rate, delivered rate and loss (paced senders)\n")
        p("Delivered rate: frames received over the time from the first to the last batch the "
          "sink read (guest clock; TCG, so far below real hardware). Offered 0: unpaced.\n")
        p("| size | offered/s | NIC | delivered/s | range | lost (all runs) | instructions/frame | "
          "pagefill xoffs |")
        p("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
        for s in sorted({x["size"] for x in rate}):
            offers = sorted({x["offered"] for x in rate if x["size"] == s}, key=lambda o: (o == 0, o))
            for o in offers:
                for nic in ("pf", "vn"):
                    rs = [x for x in rate if x["size"] == s and x["offered"] == o and x["nic"] == nic]
                    if not rs:
                        continue
                    dr = [x["received"] / (x["span_ns"] / 1e9) for x in rs if x.get("span_ns")]
                    lost = sum(x.get("gen_frames", 0) - x["received"] for x in rs)
                    ipf = [per_frame(x, tot_rate, ker_rate)[0] for x in rs if x.get("received")]
                    xo = med([x["gen_xoffs"] for x in rs if "gen_xoffs" in x])
                    p(f"| {s} | {o or 'unpaced'} | {NICS[nic]} | {fnum(med(dr))} | {rng(dr)} | "
                      f"{lost} | {fnum(med(ipf))} | {fnum(xo) if nic == 'pf' else '-'} |")
        p("")
        p("Zero-loss rate: the highest offered rate up to which no run lost a frame (unpaced "
          "counts as the highest):\n")
        for s in sorted({x["size"] for x in rate}):
            for nic in ("pf", "vn"):
                best = None
                for o in sorted({x["offered"] for x in rate if x["size"] == s}, key=lambda o: (o == 0, o)):
                    rs = [x for x in rate if x["size"] == s and x["offered"] == o and x["nic"] == nic]
                    if not rs or any(x.get("gen_frames", 0) != x["received"] for x in rs):
                        break
                    best = o
                text = "none of those offered" if best is None else (
                    "unpaced" if best == 0 else f"{best}/s")
                p(f"- {s} bytes, {NICS[nic]}: {text}")
        p("")
    if xrate:
        xdp_loss(xrate, p)
    mem = [x for k, x in rows if k == "mem"]
    if mem:
        p("## 3. Memory of the pagefill receive side\n")
        p("Pinned pages: the page pool's pages in flight (`ynl page-pool-get`; they include the "
          "pool's own cache, which it fills 64 pages at a time). Table bytes: the master table (4096 x 8 B) plus the node tables the driver "
          "allocates at probe (`MAX_JOINED` = 64 tables of 32 x 8 B), fixed; ideal: the master table "
          "plus one node table per joined group. Seed design: one pinned page per member node of "
          "each joined group (31 remote nodes here, all members). Target: memory that "
          "grows with active streams, one posted page each. 4 KiB pages, one queue.\n")
        p("| state | active streams | groups joined | pinned pages | pinned bytes | "
          "table bytes | ideal table bytes | seed design pages | target pages |")
        p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for x in mem:
            g = x.get("groups", 0)
            p(f"| {x['label']} | {x['streams']} | {g} | {x.get('inflight', 'n/a')} | "
              f"{x.get('inflight_mem', 'n/a')} | "
              f"{32768 + 64 * 256} | {32768 + g * 256} | {31 * g} | {x['streams']} |")
        p("")
        p("Worst case of the layout, 4096 groups x 32 nodes (computed, not measured: the driver "
          "joins at most 64 groups, and posts at most `ethtool -G rx` buffers per queue, 1024 by "
          "default, 16384 at most): tables 32768 + 4096 x 256 = 1081344 bytes; one posted buffer "
          "per remote node of every group, 4096 x 31 = 126976 pages (496 MiB of 4 KiB pages), and "
          "as many again while every stream fills one. The driver's own bound: 64 x 31 = 1984 "
          "posted buffers, capped by the ring limit.\n")
    lat = [x for k, x in rows if k == "lat"]
    if lat:
        lat_section(d, lat)


# The latency lines' histogram: bin i holds the round trips from
# 10^(i/BINS) up to 10^((i+1)/BINS) microseconds (scripts/bench/lat.py).
BINS = 100


def lat_key(x):
    """A latency line's case: NIC, rx-usecs, EOT, busy-poll time, mode
    ("-", "dim" for adaptive-rx, "threaded" for threaded NAPI) and the
    background load in frames/s (0: none)."""
    return (x["nic"], x["usecs"], x["eot"], x.get("poll", "-"), x.get("mode", "-"),
            x.get("load", 0))


def lat_keys(lat):
    """The latency cases, idle ones first, each in the order of its first line."""
    keys = []
    for x in lat:
        if lat_key(x) not in keys:
            keys.append(lat_key(x))
    return sorted(keys, key=lambda k: k[5] != 0)


def lat_runs(lat):
    """The runs of the case with most."""
    return max(len([x for x in lat if lat_key(x) == k]) for k in lat_keys(lat))


def lat_name(k):
    """A case's configuration in words (without its load)."""
    nic, usecs, eot, poll, mode, _ = k
    words = [NICS[nic]]
    if mode == "dim":
        words.append("adaptive-rx")
    elif usecs != "-":
        words.append(f"rx-usecs {usecs}")
    if mode == "threaded":
        words.append("threaded NAPI")
    if eot != "-":
        words.append(f"EOT {eot}")
    if poll != "-":
        words.append(f"busy poll {poll} us")
    return ", ".join(words)


def lat_hist(rs):
    """The runs' histograms pooled: {bin: count}."""
    pooled = {}
    for x in rs:
        h = x.get("hist")
        if not isinstance(h, str) or ":" not in h:
            continue
        first, counts = h.split(":", 1)
        for i, c in enumerate(counts.split(","), int(first)):
            if int(c):
                pooled[i] = pooled.get(i, 0) + int(c)
    return pooled


def hist_pct(pooled, permille):
    """The nearest-rank percentile of a pooled histogram: the middle of the
    bin of the ceil(permille/1000 n)-th smallest round trip (within 1.2%)."""
    n = sum(pooled.values())
    if not n:
        return None
    rank, seen = max(1, -(-permille * n // 1000)), 0
    for i in sorted(pooled):
        seen += pooled[i]
        if seen >= rank:
            return 10 ** ((i + 0.5) / BINS)
    return None


def lat_stats(lat, k):
    """A case's pooled figures: n, p50, p90, p99, p99.9 (histogram), max
    (the runs' largest), interrupts and guest instructions per received
    frame, busy-polled work per frame, lost."""
    rs = [x for x in lat if lat_key(x) == k and x.get("n", 0) > 0]
    pooled = lat_hist(rs)
    st = {"runs": len(rs), "n": sum(pooled.values()),
          "lost": sum(x.get("lost", 0) for x in lat if lat_key(x) == k),
          "max": max([x["max"] for x in rs if "max" in x], default=None),
          "p50_runs": [x["p50"] for x in rs]}
    lo = min([x["min"] for x in rs if "min" in x], default=None)
    for pm in (500, 900, 990, 999):
        # A bin's middle, kept within the measured extremes.
        st[pm] = hist_pct(pooled, pm)
        if st[pm] is not None and st["max"] is not None:
            st[pm] = max(min(st[pm], st["max"]), lo)
    st["hist"] = pooled
    rx = [x for x in rs if x.get("rxp")]
    st["irq"] = (sum(x["irqs"] for x in rx) / sum(x["rxp"] for x in rx)) if rx else None
    ins = [x for x in rx if isinstance(x.get("insns"), int)]
    st["insns"] = (sum(x["insns"] for x in ins) / sum(x["rxp"] for x in ins)) if ins else None
    busy = [x for x in rs if "busy" in x]
    st["busy"] = (sum(x["busy"] for x in busy) / sum(x["n"] for x in busy)
                  if busy and k[3] != "-" else None)
    bg = [x for x in rs if x.get("bg_us")]
    st["bg_rate"] = (sum(x["bg_frames"] for x in bg) / sum(x["bg_us"] for x in bg) * 1e6
                     if bg else None)
    return st


def lat_default(lat, nic, load):
    """The case of NIC's default configuration at LOAD: virtio-net as it
    comes, pagefill at its default rx-usecs (the first idle case's) with EOT 1."""
    for k in lat_keys(lat):
        if k[0] == nic and k[3] == "-" and k[4] == "-" and k[5] == load and (
                nic == "vn" or k[2] == 1):
            return k
    return None


def lat_targets(lat):
    """The latency targets against the measurements, as sentences."""
    out = []
    loads = sorted({k[5] for k in lat_keys(lat)})
    for load in loads:
        pf, vn = lat_default(lat, "pf", load), lat_default(lat, "vn", load)
        if not pf or not vn:
            out.append(f"- {'idle' if not load else f'under {load}/s'}: no default case of "
                       "both NICs measured.")
            continue
        a, b = lat_stats(lat, pf), lat_stats(lat, vn)
        cmp = []
        ok = True
        for pm, name in ((500, "p50"), (900, "p90"), (990, "p99")):
            if a[pm] is None or b[pm] is None:
                ok = False
                continue
            below = a[pm] < b[pm]
            ok = ok and below
            cmp.append(f"{name} {a[pm]:.0f} {'<' if below else '>='} {b[pm]:.0f}")
        out.append(f"- {'Idle' if not load else f'Under load ({load}/s)'}: every percentile up "
                   f"to p99 of {lat_name(pf)} below virtio-net's: "
                   f"{'met' if ok else 'not met'} ({', '.join(cmp)} us).")
        if load and a[500] and a[999]:
            r = a[999] / a[500]
            out.append(f"- Under load ({load}/s): p99.9 within 2x of p50 ({lat_name(pf)}): "
                       f"{'met' if r <= 2 else 'not met'} (p99.9 {a[999]:.0f} us, "
                       f"p50 {a[500]:.0f} us, {r:.1f}x).")
    return out


LAT_COLOURS = {"pf": "#c0392b", "vn": "#2471a3"}


def lat_svg(path, lat):
    """One panel per latency case: the CDF of its pooled round trips
    (log microseconds), and in grey that of virtio-net as it comes at the
    same load. Plain SVG, no libraries."""
    keys = lat_keys(lat)
    cols = 4
    rows_n = -(-len(keys) // cols)
    PW, PH, L, T, B, G = 250, 190, 42, 34, 34, 14
    W, H = cols * PW + 20, rows_n * PH + 50
    lo, hi = 2.0, 5.0  # log10 microseconds: 100 us to 100 ms
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="10">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="13">Round trip of a lone '
           f'64-byte frame: CDF of each case\'s pooled runs (grey: virtio-net as it comes, same '
           f'load)</text>']

    def curve(pooled, px, py, w, h, colour, dash=""):
        n = sum(pooled.values())
        if not n:
            return ""
        pts, seen = [], 0
        # The occupied bins' edges (pooled has no empty bin: between two
        # occupied ones the CDF is flat), each point once.
        for i in sorted(pooled):
            for edge, part in ((i, 0), (i + 1, pooled[i])):
                seen += part
                v = min(max(edge / BINS, lo), hi)
                pt = f"{px + (v - lo) / (hi - lo) * w:.1f},{py + h - seen / n * h:.1f}"
                if not pts or pts[-1] != pt:
                    pts.append(pt)
        return (f'<polyline fill="none" stroke="{colour}" stroke-width="1.5"{dash} '
                f'points="{" ".join(pts)}"/>')

    for j, k in enumerate(keys):
        ox, oy = 10 + (j % cols) * PW, 30 + (j // cols) * PH
        px, py, w, h = ox + L, oy + T, PW - L - G, PH - T - B
        st = lat_stats(lat, k)
        title = lat_name(k)
        load = "idle" if not k[5] else f"under {k[5]}/s"
        out.append(f'<text x="{ox + PW / 2}" y="{oy + 12}" text-anchor="middle" font-size="9">{title}</text>')
        out.append(f'<text x="{ox + PW / 2}" y="{oy + 24}" text-anchor="middle">{load}, '
                   f'n {st["n"]}</text>')
        out.append(f'<rect x="{px}" y="{py}" width="{w}" height="{h}" fill="none" stroke="black"/>')
        for dec in range(int(lo), int(hi) + 1):
            x = px + (dec - lo) / (hi - lo) * w
            out.append(f'<line x1="{x:.1f}" y1="{py}" x2="{x:.1f}" y2="{py + h}" stroke="#ddd"/>')
            label = {2: "100us", 3: "1ms", 4: "10ms", 5: "100ms"}[dec]
            out.append(f'<text x="{x:.1f}" y="{py + h + 12}" text-anchor="middle">{label}</text>')
        for f in (0.5, 0.9, 0.99):
            y = py + h - f * h
            out.append(f'<line x1="{px}" y1="{y:.1f}" x2="{px + w}" y2="{y:.1f}" stroke="#eee"/>')
            out.append(f'<text x="{px - 3}" y="{y + 3:.1f}" text-anchor="end">{f:g}</text>')
        ref = lat_default(lat, "vn", k[5])
        if ref and ref != k:
            out.append(curve(lat_stats(lat, ref)["hist"], px, py, w, h, "#999",
                             ' stroke-dasharray="4 2"'))
        out.append(curve(st["hist"], px, py, w, h, LAT_COLOURS.get(k[0], "black")))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def lat_section(d, lat):
    """results.md's section 4 (and DIR/lat-cdf.svg)."""
    p = print
    frames = sorted({x.get("n", 0) + x.get("lost", 0) for x in lat})
    gaps = sorted({x.get("gap_ms", 20) for x in lat})
    polls = sorted({x.get("poll", "-") for x in lat} - {"-"})
    loads = sorted({x.get("load", 0) for x in lat} - {0})
    p("## 4. Round trip of a lone 64-byte frame (host clock)\n")
    p("The host sends one UDP frame, the guest's pf-echo sends it back through the same NIC, "
      f"and the next frame leaves {'/'.join(map(str, gaps))} ms after the answer; "
      f"{'/'.join(map(str, frames))} frames per run, {lat_runs(lat)} runs a case. EOT 1: the "
      "sender marks the frame end of transmission (the device writes the buffer at once); "
      "EOT 0: the coalescing timer (`rx-usecs`) writes it. Adaptive-rx: `ethtool -C DEV "
      "adaptive-rx on` (the kernel's net_dim sets the coalescing per queue). Threaded NAPI: "
      "`/sys/class/net/DEV/threaded` 1, at the default `rx-usecs`. Microseconds; TCG on a "
      "shared 2-core host, which inflates the tails, so only the differences mean much.\n")
    if loads:
        p(f"Under load: meanwhile {'/'.join(map(str, loads))} frames/s of 64 bytes in all come "
          "to the same NIC from 30 other senders (nodes 1-29 and 31 of group 0; node 30 is the "
          "timer's), to a sink on another port: pagefill's from pagefill-sim gen (every stream "
          "open-ended until the run ends, so no frame of theirs is marked end of transmission "
          "but a stream's last), virtio-net's from vnet-gen.py into its socket, where the "
          "timed frame waits behind them while the socket is full. Load: the rate asked for, "
          "and the generators' frames over their time (pagefill's pacing pauses while the "
          "device holds a stream off, xoff).\n")
    if polls:
        p("Busy poll: pf-echo's socket has `SO_BUSY_POLL` set to that many microseconds, "
          "`SO_PREFER_BUSY_POLL` and `SO_BUSY_POLL_BUDGET` 16, and still blocks in "
          "`recvfrom`, which polls the NIC's NAPI instance for that long before it sleeps; "
          "the NIC has `napi_defer_hard_irqs` 100 and `gro_flush_timeout` 50000 ns "
          "(sysfs), pagefill `rx-usecs` 0 and EOT 1. Busy-polled: the NAPI work busy "
          "polling did (`BusyPollRxPackets`, which adds up what the polls returned) per "
          "frame that came back: virtio-net counts one per frame, pagefill two (the "
          "completion by which the device claims a buffer, and the one of the frame it "
          "wrote there), so 1 and 2 mean that busy polling "
          "took every frame and 0 that it took none (an interrupt or the GRO flush timer's "
          "poll did).\n")
    p("Percentiles over every round trip of a case's runs, pooled (n), nearest rank (pX: the "
      "ceil(X/100 n)-th smallest), each the middle of its bin in lat.py's histogram (bins "
      "2.3% wide, so within 1.2%); max: the largest measured. p50 of runs: the range of the "
      "runs' own medians. Interrupts and instructions per frame: those of the NIC's MSI-X "
      "vectors (`/proc/interrupts`) and the guest's (pf-insn, between pf-echo's markers, idle "
      "time included) over the run, per frame the NIC received (`rx_packets`: the echoed "
      "frames, and under load the background's too). Lost: frames not back within 1 s.\n")
    p("| configuration | load/s | n | p50 | p90 | p99 | p99.9 | max | p50 of runs | "
      "interrupts/frame | instructions/frame | busy-polled | lost |")
    p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for k in lat_keys(lat):
        st = lat_stats(lat, k)
        load = "idle" if not k[5] else (
            f"{k[5]} (sent {fnum(st['bg_rate'])})" if st["bg_rate"] else str(k[5]))
        p(f"| {lat_name(k)} | {load} | {st['n']} | {fnum(st[500])} | {fnum(st[900])} | "
          f"{fnum(st[990])} | {fnum(st[999])} | {fnum(st['max'])} | {rng(st['p50_runs'])} | "
          f"{fnum(st['irq'], '{:.2f}')} | {fnum(st['insns'])} | "
          f"{fnum(st['busy'], '{:.2f}')} | {st['lost']} |")
    p("")
    lat_svg(os.path.join(d, "lat-cdf.svg"), lat)
    p("![round-trip CDFs](lat-cdf.svg)\n")
    targets = lat_targets(lat)
    if targets:
        p("Targets, default configurations (pagefill: its default `rx-usecs`, EOT 1; "
          "virtio-net as it comes):\n")
        for t in targets:
            p(t)
        p("")


def load_symbols(kallsyms, system_map):
    syms = []
    for path in (kallsyms, system_map):
        if not path or not os.path.exists(path):
            continue
        for line in open(path):
            w = line.split()
            if len(w) < 3 or w[1] not in "tTwW":
                continue
            a = int(w[0], 16)
            if a:
                name = w[2] + (" " + w[3] if len(w) > 3 else "")
                syms.append((a, name))
        if syms:
            break
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def demangle(name):
    """A readable form of a Rust v0 symbol: its identifiers joined by ::.

    Identifiers are <length><name>; a length right after "s" or "B" is a
    disambiguator or a back reference, not an identifier.
    """
    base, _, mod = name.partition(" ")
    if not base.startswith("_R"):
        return name
    parts, i = [], 2
    while i < len(base):
        if base[i].isdigit() and base[i - 1] not in "sB" and not base[i - 1].isdigit():
            j = i
            while j < len(base) and base[j].isdigit():
                j += 1
            n = int(base[i:j])
            ident = base[j:j + n]
            if len(ident) == n and n and (ident[0].isalpha() or ident[0] == "_"):
                parts.append(ident)
                i = j + n
                continue
        i += 1
    return ("::".join(parts) or base) + (" " + mod if mod else "")


VIRTIO = ("virtnet", "virtqueue", "vring", "virtio", "receive_buf", "receive_small", "receive_mergeable",
          "page_to_skb", "try_fill_recv", "add_recvbuf", "detach_buf", "vp_", "skb_recv_done",
          "mergeable_")

# Where a function's instructions go, by name; first match wins.
CATEGORIES = [
    ("driver", lambda f: "[pagefill]" in f or f.startswith(VIRTIO)),
    ("page pool", lambda f: "page_pool" in f or "netmem" in f),
    ("skb alloc/free", lambda f: any(k in f for k in ("skb", "kmem_cache", "kfree", "slab", "freelist",
                                                      "__alloc", "alloc_pages", "free_unref",
                                                      "__free_pages", "rmqueue", "build_detached"))
     and "recv" not in f and "gro" not in f),
    ("GRO/netif", lambda f: any(k in f for k in ("gro", "netif_receive", "napi", "__netif",
                                                 "net_rx_action", "process_backlog", "eth_type"))),
    ("IP/UDP", lambda f: any(k in f for k in ("ip_", "udp", "fib_", "inet_", "raw_local", "ip4",
                                              "nf_hook", "icmp"))),
    ("copy", lambda f: "copy" in f or "memcpy" in f or "memmove" in f or "memset" in f),
    ("syscall/socket (sink)", lambda f: any(k in f for k in ("recvmsg", "sys_", "sock", "entry_SYSCALL",
                                                             "syscall", "msghdr", "do_syscall"))),
    ("interrupts/irq/sched", lambda f: any(k in f for k in ("irq", "apic", "sched", "idle", "timer",
                                                            "hrtimer", "tick", "softirq", "wake",
                                                            "msi", "enqueue_task", "dequeue_task",
                                                            "switch", "schedule"))),
    ("user space", lambda f: f == "[user space]"),
]


def category(f):
    for name, test in CATEGORIES:
        if test(f):
            return name
    return "other"


def profile(d, system_map):
    """Per-function counts of the profiled windows into DIR/profile.tsv."""
    rows = parse(os.path.join(d, "raw-prof.txt"))
    out = os.path.join(d, "run-prof", "out")
    addrs, names = load_symbols(os.path.join(out, "kallsyms"), system_map)

    def load(n):
        blocks = {}
        with open(os.path.join(out, f"prof.{n}")) as f:
            for line in f:
                a, e, i = line.split()
                blocks[(int(a, 16), int(i))] = int(e)
        return blocks

    def name(a):
        if a < 0xFFFF800000000000:
            return "[user space]"
        i = bisect.bisect_right(addrs, a) - 1
        return demangle(names[i]) if i >= 0 else hex(a)

    with open(os.path.join(d, "profile.tsv"), "w") as tsv:
        tsv.write("nic\tsize\tframes\tfunction\tinstructions\n")
        for k, x in rows:
            if k != "prof" or not x.get("received"):
                continue
            m = x.get("marks", x.get("gen_marks"))
            a, b = load(m - 2), load(m - 1)
            funcs = {}
            for key, e in b.items():
                n = (e - a.get(key, 0)) * key[1]
                if n:
                    f = name(key[0])
                    funcs[f] = funcs.get(f, 0) + n
            for f, v in sorted(funcs.items(), key=lambda t: -t[1]):
                frames = x.get("frames", x["received"])
                tsv.write(f"{x['nic']}\t{x['size']}\t{frames}\t{f}\t{v}\n")


def profile_report(d):
    """DIR/profile.tsv as markdown."""
    runs = load_profile(d)
    p = print
    p("# Instructions per delivered frame, by function\n")
    p("From `scripts/bench.sh` (its `prof` part): the pf-insn plugin's per-block execution counts "
      "over one sink window per case, unpaced sender, one stream; a block is charged to the "
      "function it starts in. `profile.tsv` has every function.\n")
    for c, files in commits(d).items():
        if "raw-prof.txt" in files:
            p(f"Measured at commit `{c}`.\n")
    p("## By category\n")
    keys = sorted(runs, key=lambda k: (k[1], k[0]))
    cats = [c for c, _ in CATEGORIES] + ["other"]
    p("| category | " + " | ".join(f"{NICS[k[0]]} {k[1]} B" for k in keys) + " |")
    p("| --- | " + " | ".join("---:" for _ in keys) + " |")
    sums = {}
    for k in keys:
        for f, n in runs[k].items():
            c = category(f)
            sums[(k, c)] = sums.get((k, c), 0) + n
    for c in cats:
        p(f"| {c} | " + " | ".join(f"{sums.get((k, c), 0) / k[2]:.0f}" for k in keys) + " |")
    p("| **total** | " + " | ".join(f"**{sum(runs[k].values()) / k[2]:.0f}**" for k in keys) + " |")
    p("")
    p("Driver: the pagefill module's functions, or virtio-net's and the virtio ring's "
      "(`virtnet_*`, `virtqueue_*`, `vring_*`, `receive_buf`, `page_to_skb`, `try_fill_recv`, ...). "
      "The categories are by function name, so they are approximate.\n")
    for k in keys:
        funcs, frames = runs[k], k[2]
        total = sum(funcs.values())
        p(f"## {NICS[k[0]]}, {k[1]}-byte frames: {total / frames:.0f} instructions per frame "
          f"({frames} frames)\n")
        p("| function | instructions/frame | share |")
        p("| --- | ---: | ---: |")
        for f, v in sorted(funcs.items(), key=lambda t: -t[1])[:25]:
            p(f"| `{f}` | {v / frames:.0f} | {100 * v / total:.1f}% |")
        p("")
        drv = [(f, v) for f, v in funcs.items() if category(f) == "driver"]
        p(f"Driver functions ({sum(v for _, v in drv) / frames:.0f} per frame):\n")
        p("| driver function | instructions/frame |")
        p("| --- | ---: |")
        for f, v in sorted(drv, key=lambda t: -t[1]):
            if v / frames >= 0.5:
                p(f"| `{f}` | {v / frames:.1f} |")
        p("")


def rst_table(name, title, head, rows):
    """A simple reStructuredText table between include markers. head: a
    list of columns, each a list of header lines; rows: lists of cells."""
    cols = len(head)
    depth = max(len(h) for h in head)
    head = [h + [""] * (depth - len(h)) for h in head]
    widths = [max([len(x) for x in head[c]] + [len(str(r[c])) for r in rows] + [1])
              for c in range(cols)]
    rule = "  ".join("=" * w for w in widths)
    out = [f".. {name}-start", "", f".. table:: {title}", f"   :name: {name}", ""]
    out.append("   " + rule)
    for i in range(depth):
        out.append("   " + "  ".join(head[c][i].ljust(widths[c]) for c in range(cols)).rstrip())
    out.append("   " + rule)
    for r in rows:
        out.append("   " + "  ".join(str(r[c]).ljust(widths[c]) for c in range(cols)).rstrip())
    out.append("   " + rule)
    out += ["", f".. {name}-end", ""]
    print("\n".join(out))


def rst(d):
    """The tables benchmarks.rst shows, from DIR's raw lines."""
    rows = raw_rows(d)
    tot_rate, ker_rate, _ = idle_rates(rows)

    def cost(nic, size, kind="cost"):
        t = [per_frame(x, tot_rate, ker_rate)[0] for k, x in rows
             if k == kind and x["nic"] == nic and x["size"] == size]
        return med([a for a in t if a is not None])

    def n(x):
        return "\\-" if x is None else f"{x:.0f}"

    def r(a, b):
        return "\\-" if a is None or not b else f"{a / b:.2f}"

    def sizes(kind, nic):
        return sorted({x["size"] for k, x in rows if k == kind and x["nic"] == nic})

    print(".. SPDX-License-Identifier: GPL-2.0\n")
    print(".. Made by scripts/bench/report.py rst from the raw lines beside it; "
          "benchmarks.rst includes each table by its markers.\n")
    body = []
    for s in sizes("cost", "pf"):
        pf, vn, pg = cost("pf", s), cost("vn", s), cost("pfpage", s)
        body.append([s, n(pf), n(vn), n(pg), r(pf, vn), r(pg, vn)])
    if body:
        rst_table("bench-cost", "Guest instructions per delivered UDP frame",
                  [["size", "bytes"], ["pagefill"], ["virtio-net"], ["pagefill,", "one-page buffers"],
                   ["pagefill /", "virtio-net"], ["one page /", "virtio-net"]], body)
    body = []
    for s in sizes("cost", "pfmerge"):
        m, mp, vg, vn = cost("pfmerge", s), cost("pfmergeplain", s), cost("vngro", s), cost("vn", s)
        body.append([s, n(m), n(mp), n(vg), n(vn), r(m, vg), r(mp, vn)])
    if body:
        rst_table("bench-cost-merge", "Guest instructions per frame, pagefill merging",
                  [["size", "bytes"], ["pagefill", "merging,", "UDP_GRO"],
                   ["pagefill", "merging,", "plain"], ["virtio-net", "UDP_GRO"],
                   ["virtio-net", "plain"], ["merging,", "UDP_GRO /", "virtio-net", "UDP_GRO"],
                   ["merging,", "plain /", "virtio-net", "plain"]], body)
    body = []
    for s in sizes("multi", "pf"):
        pf, vn = cost("pf", s, "multi"), cost("vn", s, "multi")
        body.append([s, n(pf), n(vn), r(pf, vn)])
    if body:
        rst_table("bench-cost-streams", "Guest instructions per frame, 31 streams",
                  [["size", "bytes"], ["pagefill"], ["virtio-net"], ["pagefill /", "virtio-net"]],
                  body)
    body = []
    for s in sizes("cost", "pfgro"):
        pf, vn = cost("pfgro", s), cost("vngro", s)
        body.append([s, n(pf), n(vn), r(pf, vn)])
    if body:
        rst_table("bench-cost-gro", "Guest instructions per frame, UDP_GRO socket, no merging",
                  [["size", "bytes"], ["pagefill"], ["virtio-net"], ["pagefill /", "virtio-net"]],
                  body)
    body = []
    for s in sizes("cost", "pfxdpdrop"):
        c = {k: cost(k, s) for k in ("pfxdpdrop", "vnxdpdrop", "pfxdptx", "vnxdptx",
                                     "pfxdppass", "vnxdppass", "pf")}
        body.append([s] + [n(v) for v in c.values()] +
                    [r(c["pfxdpdrop"], c["vnxdpdrop"]), r(c["pfxdptx"], c["vnxdptx"]),
                     r(c["pfxdpdrop"], c["pf"]), r(c["pfxdppass"], c["pf"])])
    if body:
        rst_table("bench-xdp", "Guest instructions per frame with a native XDP program",
                  [["size", "bytes"], ["pagefill", "XDP_DROP"], ["virtio-net", "XDP_DROP"],
                   ["pagefill", "XDP_TX"], ["virtio-net", "XDP_TX"], ["pagefill", "XDP_PASS"],
                   ["virtio-net", "XDP_PASS"], ["pagefill,", "no", "program"],
                   ["XDP_DROP", "pagefill /", "virtio-net"], ["XDP_TX", "pagefill /", "virtio-net"],
                   ["pagefill", "XDP_DROP /", "socket"], ["pagefill", "XDP_PASS /", "no program"]],
                  body)
    body = []
    for s in sizes("cost", "pfxskzc"):
        c = {k: cost(k, s) for k in ("pfxskzc", "vnxskzc", "pfxskcopy", "vnxskcopy", "pf")}
        body.append([s] + [n(v) for v in c.values()] +
                    [r(c["pfxskzc"], c["pf"]), r(c["pfxskzc"], c["vnxskzc"]),
                     r(c["pfxskzc"], c["vnxskcopy"]), r(c["pfxskcopy"], c["vnxskcopy"])])
    if body:
        rst_table("bench-xsk", "Guest instructions per frame to an AF_XDP socket",
                  [["size", "bytes"], ["pagefill", "zero-copy"], ["virtio-net", "zero-copy"],
                   ["pagefill", "copy"], ["virtio-net", "copy"], ["pagefill,", "UDP", "socket"],
                   ["pagefill", "zero-copy /", "UDP socket"],
                   ["pagefill", "zero-copy /", "virtio-net", "zero-copy"],
                   ["pagefill", "zero-copy /", "virtio-net", "copy"],
                   ["copy:", "pagefill /", "virtio-net"]], body)
    xrate = [x for k, x in rows if k == "rate" and "seen" in x and x["offered"] == 0]
    body = []
    for s in sorted({x["size"] for x in xrate}):
        line = [s]
        for nic in ("pfxdpdrop", "vnxdpdrop", "pfxdptx", "vnxdptx"):
            sr = [x["seen"] / (x["window_ns"] / 1e9) for x in xrate
                  if x["size"] == s and x["nic"] == nic and x.get("window_ns")]
            line.append(n(med(sr)))
        body.append(line)
    if body:
        rst_table("bench-xdp-rate", "Frames per second a native XDP program saw, unpaced",
                  [["size", "bytes"], ["pagefill", "XDP_DROP"], ["virtio-net", "XDP_DROP"],
                   ["pagefill", "XDP_TX"], ["virtio-net", "XDP_TX"]], body)
    rate = [x for k, x in rows if k == "rate" and "seen" not in x]
    body = []
    for s in sorted({x["size"] for x in rate}):
        for o in offers_of(rate, s):
            line = [s, o or "unpaced"]
            for nic in ("pf", "vn"):
                rs = [x for x in rate if x["size"] == s and x["offered"] == o and x["nic"] == nic]
                dr = [x["received"] / (x["span_ns"] / 1e9) for x in rs if x.get("span_ns")]
                line += [n(med(dr)), sum(x.get("gen_frames", 0) - x["received"] for x in rs)]
            body.append(line)
    if body:
        rst_table("bench-rate", "Delivered frames per second and frames lost, paced senders",
                  [["size", "bytes"], ["offered/s"], ["pagefill", "delivered/s"],
                   ["pagefill", "lost"], ["virtio-net", "delivered/s"], ["virtio-net", "lost"]],
                  body)
    mem = [x for k, x in rows if k == "mem"]
    states = {"open": "interface up", "1-stream": "one stream",
              "joined-2-groups": "a second group", "32-streams": "32 streams",
              "joined-33-groups": "33 groups", "1023-streams": "1023 streams",
              "left-to-1-group": "left 32 groups"}
    body = [[states.get(x["label"], x["label"]), x["streams"], x.get("groups", 0),
             x.get("inflight", "\\-"),
             x.get("inflight_mem", "\\-"), 31 * x.get("groups", 0), x["streams"]] for x in mem]
    if body:
        rst_table("bench-memory", "Pinned buffers against groups and streams",
                  [["state"], ["active", "streams"], ["groups", "joined"], ["pinned", "buffers"],
                   ["pinned", "bytes"], ["seed's", "design:", "one per", "member node"],
                   ["target:", "one per", "stream"]], body)
    lat = [x for k, x in rows if k == "lat"]
    body = []
    for k in lat_keys(lat):
        st = lat_stats(lat, k)
        load = "idle" if not k[5] else (
            f"{k[5]} (sent {st['bg_rate']:.0f})" if st["bg_rate"] else k[5])
        body.append([lat_name(k), load, st["n"], n(st[500]), n(st[900]), n(st[990]),
                     n(st[999]), n(st["max"]),
                     "\\-" if st["irq"] is None else f"{st['irq']:.2f}", n(st["insns"]),
                     st["lost"]])
    if body:
        rst_table("bench-latency", "Round trip of a lone 64-byte frame, microseconds",
                  [["configuration"], ["load,", "frames/s"], ["round", "trips"], ["p50"],
                   ["p90"], ["p99"], ["p99.9"], ["max"], ["interrupts", "per frame"],
                   ["instructions", "per frame"], ["lost"]], body)
    if os.path.exists(os.path.join(d, "profile.tsv")):
        runs = load_profile(d)
        # The cases the page discusses, narrow headings.
        short = {"pf": ["pagefill"], "pfmergeplain": ["merging,", "plain"],
                 "pfmerge": ["merging,", "UDP_GRO"], "vn": ["virtio-", "net"],
                 "pfpage": ["one-page", "buffers"], "pfxdpdrop": ["pagefill", "XDP_DROP"],
                 "vnxdpdrop": ["virtio-", "net", "XDP_DROP"], "pfxdptx": ["pagefill", "XDP_TX"],
                 "vnxdptx": ["virtio-", "net", "XDP_TX"]}
        want = [(64, k) for k in ("pf", "pfmergeplain", "pfmerge", "vn", "pfxdpdrop",
                                  "vnxdpdrop", "pfxdptx", "vnxdptx")]
        want += [(1500, k) for k in ("pf", "pfpage", "vn")]
        keys = [k for w in want for k in runs if (k[1], k[0]) == w]
        cats = [c for c, _ in CATEGORIES] + ["other", "total"]
        body = []
        for c in cats:
            line = [c]
            for k in keys:
                funcs = runs[k]
                v = sum(funcs.values()) if c == "total" else sum(
                    x for f, x in funcs.items() if category(f) == c)
                line.append(f"{v / k[2]:.0f}")
            body.append(line)
        rst_table("bench-profile", "Instructions per frame by where they are spent",
                  [["category"]] + [short[k[0]] + [f"{k[1]} B"] for k in keys], body)


# How far above its recorded figure a guarded path may cost.
GUARD_MARGIN = 0.15


def guard(raw, figures):
    """KTAP points: each recorded figure against the runs in RAW."""
    rows = parse(raw)
    tot_rate, ker_rate, _ = idle_rates(rows)
    recorded = []
    for line in open(figures):
        words = line.split("#", 1)[0].split()
        if len(words) == 3:
            recorded.append((words[0], int(words[1]), float(words[2])))
    print("TAP version 13")
    print(f"1..{len(recorded)}")
    if tot_rate == 0:
        print("# no idle window: the baseline is not known")
    failed = 0
    for i, (nic, size, want) in enumerate(recorded, 1):
        runs = [per_frame(d, tot_rate, ker_rate)[0] for k, d in rows
                if k == "cost" and d.get("nic") == nic and d.get("size") == size]
        runs = [x for x in runs if x is not None]
        name = f"{NICS.get(nic, nic)}, {size} B"
        limit = want * (1 + GUARD_MARGIN)
        if not runs or tot_rate == 0:
            print(f"not ok {i} {name}: not measured")
            failed += 1
            continue
        got = med(runs)
        print(f"# {name}: {got:.0f} instructions per frame (runs {rng(runs)}), "
              f"recorded {want:.0f}, limit {limit:.0f} (+{GUARD_MARGIN:.0%}), {got / want:.2f}x")
        if got > limit:
            print(f"not ok {i} {name}: {got:.0f} instructions per frame, over {limit:.0f}")
            failed += 1
        else:
            if got < want * (1 - GUARD_MARGIN):
                print(f"# {name}: more than {GUARD_MARGIN:.0%} below the recorded figure; "
                      "record the new one")
            print(f"ok {i} {name}: {got:.0f} instructions per frame")
    return failed


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "profile":
        profile(sys.argv[2], sys.argv[3])
        profile_report(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "profile-report":
        profile_report(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "rst":
        rst(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "guard":
        sys.exit(1 if guard(sys.argv[2], sys.argv[3]) else 0)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
