# SPDX-License-Identifier: GPL-2.0
#
# pagefill: top-level entry points.
#
#   make                 build pagefill.ko against the cached fast test kernel
#                        (creating the toolchain root and kernel if needed)
#   make KDIR=<dir>      build against any Rust-enabled kernel build or its
#                        installed headers, e.g. /lib/modules/$(uname -r)/build
#                        (scripts/kdir.sh: what a distribution's headers lack
#                        is made from the kernel's source, once)
#   make CLIPPY=1        the same, with clippy over the Rust code
#   make sim             build the device model (tools/pagefill-sim)
#   make check           the test command (tests/run.sh)
#   make bench           pagefill against virtio-net (scripts/bench.sh; not a
#                        test: it writes Documentation/.../pagefill/bench/)
#   make clean

ifneq ($(KERNELRELEASE),)
# Kbuild reads ./Kbuild; nothing to do here.
else

ifeq ($(KDIR),)
PF_DEFAULT_KDIR := 1
endif
JOBS ?= $(shell nproc)

.PHONY: all modules sim check bench clean

all: modules

ifdef PF_DEFAULT_KDIR
modules:
	scripts/in-root.sh $(MAKE) -j$(JOBS) KDIR="$$(scripts/build-kernel.sh fast)" LLVM=1 \
		$(if $(CLIPPY),CLIPPY=$(CLIPPY)) $(if $(W),W=$(W)) modules
else
# scripts/kdir.sh checks the compilers against the kernel's, makes the Rust
# metadata that installed headers lack (once, in the cache), and gives the
# make arguments: the build directory and the C compiler (CC= or LLVM=1).
modules:
	+args=$$(scripts/kdir.sh "$(KDIR)") && $(MAKE) $$args M=$(CURDIR) \
		$(if $(CLIPPY),CLIPPY=$(CLIPPY)) $(if $(W),W=$(W)) modules
endif

sim:
	cargo build --release -p pagefill-sim

bench:
	scripts/bench.sh

check:
	tests/run.sh

clean:
	rm -rf .tmp_versions Module.symvers modules.order .modules.order.cmd
	find drivers -name '*.o' -o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name '*_generated.rs' -o -name '*.rmeta' -o -name '.*.d' \
		| xargs rm -f
endif
