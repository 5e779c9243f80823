#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# module-graph.py: the driver's module dependency graph, from the paths
# its code names (`use crate::x`, `crate::x::...`; comments left out), and
# the proof that it has no cycle. A module is a top-level file of
# drivers/net/ethernet/pagefill/ with its child modules (rx.rs and rx/);
# net/ is one module, which may use abi and ffi only. Prints each module
# with the modules it uses, lowest layer first, and exits 1 on a cycle or
# on net/ using the driver.
#
# Usage: module-graph.py [DRIVER_DIR]
import os
import re
import sys

top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
drv = sys.argv[1] if len(sys.argv) > 1 else os.path.join(top, "drivers/net/ethernet/pagefill")
ROOT = "pagefill_main"
# The crate's modules that live elsewhere or are generated: used, never users.
LEAVES = {"abi", "ffi"}
NET_MAY_USE = LEAVES


def code(path):
    """The file's text without its comments (`//` to the end of the line)."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            out.append(re.sub(r"(^|\s)//.*", "", line.rstrip("\n")))
    return "\n".join(out)


def files():
    """(module, path) of every Rust file of the driver."""
    for dirpath, _, names in os.walk(drv):
        for name in sorted(names):
            if not name.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, name), drv)
            first = rel.split(os.sep)[0]
            yield (first[:-3] if first.endswith(".rs") else first), os.path.join(dirpath, name)


mods = {m for m, _ in files()} | LEAVES
deps = {m: set() for m in mods}
for mod, path in files():
    text = code(path)
    if mod == ROOT:
        # The crate root declares every module and names them without
        # `crate::`: it stands above them all.
        used = set(re.findall(r"\bmod ([a-z_][a-z0-9_]*);", text))
    else:
        used = set(re.findall(r"\bcrate::([a-z_][a-z0-9_]*)\b", text))
    deps[mod] |= {m for m in used if m in mods and m != mod}

bad = sorted(deps["net"] - NET_MAY_USE) if "net" in deps else []
if bad:
    print(f"net/ uses driver modules: {', '.join(bad)}")

# Layers: a module's layer is one above the highest of those it uses.
layer, state, cycle = {}, {}, []


def visit(m, path):
    if state.get(m) == "done":
        return
    if state.get(m) == "open":
        cycle.append(path[path.index(m):] + [m])
        return
    state[m] = "open"
    for d in sorted(deps[m]):
        visit(d, path + [m])
    state[m] = "done"
    layer[m] = 1 + max((layer.get(d, 0) for d in deps[m]), default=-1)


for m in sorted(mods):
    visit(m, [])
for c in cycle:
    print("cycle: " + " -> ".join(c))
for m in sorted(mods, key=lambda m: (layer.get(m, 0), m)):
    print(f"{layer.get(m, 0)} {m}: {' '.join(sorted(deps[m]))}")
sys.exit(1 if cycle or bad else 0)
