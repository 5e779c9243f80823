#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""report.py report DIR | profile DIR SYSTEM_MAP

report: reads DIR/raw-main.txt (scripts/bench/guest.sh's lines), prints the
markdown results and writes DIR/cost.svg (instructions per frame against
frame size, both NICs, median with the runs' range).

profile: reads DIR/raw-prof.txt and the pf-insn plugin's per-block counts in
DIR/run-prof/out, names the blocks with the guest's /proc/kallsyms (or the
kernel's System.map), and prints, for each profiled run, the functions that
executed the most instructions per delivered frame.

Medians are of the runs; "a-b" is the runs' range. Instructions per frame
are the window's instructions, less the idle rate (instructions per second
of an idle window with the sink waiting) times the window's length,
divided by the frames delivered.
"""
import bisect
import os
import statistics
import sys

NICS = {"pf": "pagefill", "vn": "virtio-net"}


def parse(path):
    """Lines as (kind, {key: value}); the generator's answer as gen_KEY."""
    rows = []
    if not os.path.exists(path):
        return rows
    for line in open(path):
        words = line.split()
        if not words or words[0].startswith("#") or words[0] not in (
                "idle", "cost", "rate", "mem", "lat", "prof"):
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
    n = d.get("received", 0)
    if not n:
        return None, None
    w = d["window_ns"]
    return (d["insns"] - tot_rate * w) / n, (d["kinsns"] - ker_rate * w) / n


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
    colours = {"pf": "#c0392b", "vn": "#2471a3"}
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


def report(d):
    rows = parse(os.path.join(d, "raw-main.txt"))
    tot_rate, ker_rate, idle = idle_rates(rows)
    p = print
    p("# pagefill vs virtio-net: results\n")
    p("Made by `scripts/bench.sh` (see Documentation/networking/device_drivers/ethernet/"
      "pagefill/benchmarks.rst). Raw lines: `raw-main.txt`, `raw-prof.txt`.\n")
    if idle:
        p(f"Idle baseline: {len(idle)} windows of the sink waiting, "
          f"{tot_rate * 1e9:.0f} instructions/s (kernel {ker_rate * 1e9:.0f}/s), subtracted "
          f"over each window's length.\n")
    cost = [x for k, x in rows if k == "cost"]
    if cost:
        p("## 1. Guest instructions per delivered frame (unpaced senders)\n")
        p("| size | pagefill | runs | virtio-net | runs | pagefill/virtio-net | pagefill kernel | "
          "virtio-net kernel | pagefill frames lost | virtio-net frames lost |")
        p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        sizes = sorted({x["size"] for x in cost})
        series = {"pf": [], "vn": []}
        for s in sizes:
            cols, meds = [], {}
            kmed, lost = {}, {}
            for nic in ("pf", "vn"):
                rs = [x for x in cost if x["size"] == s and x["nic"] == nic]
                pf = [per_frame(x, tot_rate, ker_rate) for x in rs]
                t = [a for a, _ in pf if a is not None]
                k = [b for _, b in pf if b is not None]
                meds[nic], kmed[nic] = med(t), med(k)
                lost[nic] = sum(x.get("missing", 0) + max(0, x.get("gen_frames", 0) - x["received"]
                                                          - x.get("missing", 0)) for x in rs)
                cols.append((fnum(meds[nic]), rng(t)))
                if t:
                    series[nic].append((s, meds[nic], min(t), max(t)))
            ratio = meds["pf"] / meds["vn"] if meds["pf"] and meds["vn"] else None
            p(f"| {s} | {cols[0][0]} | {cols[0][1]} | {cols[1][0]} | {cols[1][1]} | "
              f"{fnum(ratio, '{:.2f}')} | {fnum(kmed['pf'])} | {fnum(kmed['vn'])} | "
              f"{lost['pf']} | {lost['vn']} |")
        runs = max(x["run"] for x in cost)
        p(f"\n{runs} runs per point, {max(x.get('gen_frames', 0) for x in cost)} frames per run, "
          "one stream (node 1, group 0 for pagefill). Frames lost: sent by the generator and not "
          "delivered to the sink, summed over the runs.\n")
        if all(series.values()):
            svg_plot(os.path.join(d, "cost.svg"), sizes, series)
            p("![instructions per frame](cost.svg)\n")
    rate = [x for k, x in rows if k == "rate"]
    if rate:
        p("## 2. Offered rate, delivered rate and loss (paced senders)\n")
        p("Delivered rate: frames received over the time from the first to the last batch the "
          "sink read (guest clock; TCG, so far below real hardware). Offered 0: unpaced.\n")
        p("| size | offered/s | NIC | delivered/s | runs | lost (all runs) | instructions/frame | "
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
        p("Zero-loss rate (highest offered rate with no frame lost in any run):\n")
        for s in sorted({x["size"] for x in rate}):
            for nic in ("pf", "vn"):
                ok = []
                for o in sorted({x["offered"] for x in rate if x["size"] == s}):
                    rs = [x for x in rate if x["size"] == s and x["offered"] == o and x["nic"] == nic]
                    if rs and all(x.get("gen_frames", 0) == x["received"] for x in rs):
                        ok.append(o)
                best = "unpaced" if 0 in ok else (str(max(ok)) + "/s" if ok else "none of those offered")
                p(f"- {s} bytes, {NICS[nic]}: {best}")
        p("")
    mem = [x for k, x in rows if k == "mem"]
    if mem:
        p("## 3. Memory of the pagefill receive side\n")
        p("Pinned pages: the page pool's in-flight pages (`ynl page-pool-get`); buffers: "
          "`rx0_buffers_allocated - rx0_buffers_recycled` (`ethtool -S`). Table bytes: the "
          "master table (4096 x 8 B) plus the node tables the driver allocates at probe "
          "(`MAX_JOINED` = 64 tables of 32 x 8 B) -- fixed; the design's ideal is the master table "
          "plus one node table per joined group. Pages ideal: one posted page per active stream "
          "(the issue's target: memory grows with active streams).\n")
        p("| state | active streams | groups joined | pinned pages | pinned bytes | buffers out | "
          "table bytes | ideal table bytes | ideal pages |")
        p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for x in mem:
            g = x.get("groups", 0)
            p(f"| {x['label']} | {x['streams']} | {g} | {x.get('inflight', 'n/a')} | "
              f"{x.get('inflight_mem', 'n/a')} | {x['allocated'] - x['recycled']} | "
              f"{32768 + 64 * 256} | {32768 + g * 256} | {x['streams']} |")
        p("")
    lat = [x for k, x in rows if k == "lat"]
    if lat:
        p("## 4. Round trip of a lone 64-byte frame (host clock)\n")
        p("The host sends one UDP frame, the guest's pf-echo sends it back through the same NIC, "
          "and the next frame leaves 20 ms after the answer; 100 frames per run. EOT 1: the "
          "sender marks the frame end of transmission (the device writes the buffer at once); "
          "EOT 0: the coalescing timer (`rx-usecs`) writes it. Microseconds; TCG and a loaded "
          "host, so only the differences mean much.\n")
        p("| NIC | rx-usecs | EOT | median of run p50 | runs' p50 | best min | lost |")
        p("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        keys = []
        for x in lat:
            k = (x["nic"], x["usecs"], x["eot"])
            if k not in keys:
                keys.append(k)
        for k in keys:
            rs = [x for x in lat if (x["nic"], x["usecs"], x["eot"]) == k and x.get("n", 0) > 0]
            p50 = [x["p50"] for x in rs]
            p(f"| {NICS[k[0]]} | {k[1]} | {k[2]} | {fnum(med(p50))} | {rng(p50)} | "
              f"{fnum(min([x['min'] for x in rs]) if rs else None)} | "
              f"{sum(x.get('lost', 0) for x in lat if (x['nic'], x['usecs'], x['eot']) == k)} |")
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


def profile(d, system_map):
    rows = parse(os.path.join(d, "raw-prof.txt"))
    tot_rate, ker_rate, _ = idle_rates(rows)
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
        return names[i] if i >= 0 else hex(a)

    print("# Instructions per delivered frame, by function\n")
    print("From `scripts/bench.sh --what prof`: the pf-insn plugin's per-block execution counts "
          "over each sink window (a block is charged to the function it starts in).\n")
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
        total = sum(funcs.values())
        frames = x["received"]
        print(f"## {NICS[x['nic']]}, {x['size']}-byte frames: {total / frames:.0f} instructions "
              f"per frame ({frames} frames)\n")
        drv = sum(v for f, v in funcs.items() if "[pagefill]" in f or f.split()[0].startswith(
            ("virtnet", "virtqueue", "vring", "virtio", "receive_buf", "page_to_skb", "vp_")))
        print(f"Driver's own functions (module pagefill, or virtnet_/virtqueue_/vring_/virtio_): "
              f"{drv / frames:.0f} per frame.\n")
        print("| function | instructions/frame | share |")
        print("| --- | ---: | ---: |")
        for f, v in sorted(funcs.items(), key=lambda t: -t[1])[:30]:
            print(f"| `{f}` | {v / frames:.0f} | {100 * v / total:.1f}% |")
        print("")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "profile":
        profile(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
