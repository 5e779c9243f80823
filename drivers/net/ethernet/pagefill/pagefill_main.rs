// SPDX-License-Identifier: GPL-2.0

//! Driver for the pagefill page-fill DMA NIC.
//!
//! The NIC packs many short frames into whole pages that the driver posts in
//! advance in a group/node pointer table in host memory. See
//! `Documentation/networking/device_drivers/ethernet/pagefill/` for the
//! hardware and the driver's design.
//!
//! The modules stand in layers, lowest first. A module uses modules of its
//! own layer and of those before it, never of a later one, and their uses
//! form no cycle:
//!
//! - `net`, the safe abstractions over the kernel's networking API, with
//!   `abi` (the device's interface) and `ffi` (bindings): no driver module.
//! - The device: `hw` (its registers: identity, reset, counters), `rings`
//!   (the memory it shares with the host), `steering` (RSS and flow rules),
//!   `groups` (group sets and node tables), `frame` (the MTU's bounds and
//!   the buffers that hold a frame).
//! - A queue pair's paths, each with its per-queue state: `tx`; and for
//!   receive, `udp_merge`, `rx_stats`, `rx_mailbox` and `rx_slot` (a
//!   stream's buffers), the per-buffer paths `rx_skb` (skbs), `rx_xdp` (an
//!   XDP program) and `rx_xsk` (zero-copy AF_XDP), each over the one
//!   before, `coalesce` (its coalescing timer), and `rx`, a queue's receive
//!   state, which lends each written buffer and the part of its state it
//!   needs to the path its frames take.
//! - `settings` (what ethtool sets) and `iface`: the per-device state,
//!   which owns the queue pairs, the group tables and the settings, and
//!   brings the interface up and down.
//! - The interface's entry points: `ndo`, `ethtool_ops`, `interrupts`.
//! - This file: the PCI driver, whose probe registers the interface.

use kernel::{
    device::Core,
    dma::{Device as _, DmaMask},
    pci,
    prelude::*, //
};

// The ABI is shared with the device model, which uses parts the driver does
// not (and declares them `pub` for its own crate).
#[allow(dead_code, unreachable_pub)]
#[path = "../../../../include/pagefill/abi.rs"]
mod abi;
mod coalesce;
mod ethtool_ops;
mod ffi;
mod frame;
mod groups;
mod hw;
mod iface;
mod interrupts;
mod ndo;
// The abstraction layer is written as the public API it would be in
// `rust/kernel/net/`, and is a library for the whole data path: parts of it
// are not used until the rings land.
#[allow(dead_code, unreachable_pub)]
mod net;
mod rings;
mod rx;
mod rx_mailbox;
mod rx_skb;
mod rx_slot;
mod rx_stats;
mod rx_xdp;
mod rx_xsk;
mod settings;
mod steering;
mod tx;
mod udp_merge;

/// A bound pagefill NIC.
struct PagefillDevice<'bound> {
    pdev: &'bound pci::Device,
    /// Dropped first: the interface frees its interrupts when it stops.
    netdev: net::registration::Registration<iface::PagefillNetdev>,
    _vectors: pci::IrqVectorRegistration<'bound>,
}

struct PagefillDriver;

kernel::pci_device_table!(
    PCI_TABLE,
    <PagefillDriver as pci::Driver>::IdInfo,
    [(
        pci::DeviceId::from_id(pci::Vendor::REDHAT, abi::PCI_DEVICE_ID as u32),
        ()
    )]
);

impl pci::Driver for PagefillDriver {
    type IdInfo = ();
    type Data<'bound> = PagefillDevice<'bound>;

    const ID_TABLE: pci::IdTable<Self::IdInfo> = &PCI_TABLE;

    fn probe<'bound>(
        pdev: &'bound pci::Device<Core<'_>>,
        _info: Option<&'bound Self::IdInfo>,
    ) -> impl PinInit<Self::Data<'bound>, Error> + 'bound {
        pdev.enable_device_mem()?;
        // Off until the device was reset (below).
        net::registration::Registration::<iface::PagefillNetdev>::clear_bus_master(pdev.as_ref());
        let bar = pdev.iomap_region_sized::<{ abi::BAR0_SIZE }>(0, c"pagefill")?;
        let id = hw::Identity::read(pdev, &bar)?;
        // Whatever a previous driver (or firmware) left running stops
        // before the device may master the bus: it could otherwise write
        // memory that is no longer its own.
        hw::reset(&bar)?;
        // The device takes 64-bit bus addresses everywhere (tables, rings,
        // buffers): without this the 32-bit default bounces every mapping
        // above 4 GiB through swiotlb.
        // SAFETY: nothing of this device allocates or maps DMA memory
        // concurrently: probe is the device's only user so far, and its
        // first DMA allocation (`Rings::new`) comes below.
        unsafe { pdev.dma_set_mask_and_coherent(DmaMask::new::<64>())? };
        pdev.set_master();
        dev_info!(
            pdev,
            "pagefill NIC, interface {}.{}, node {}, \
             MAC {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}, {} groups x {} nodes, \
             {} queues, buffers 2^{}..2^{}, {} Mb/s\n",
            abi::version_major(id.version),
            abi::version_minor(id.version),
            id.node,
            id.mac[0],
            id.mac[1],
            id.mac[2],
            id.mac[3],
            id.mac[4],
            id.mac[5],
            id.max_groups,
            id.max_nodes,
            id.max_queues,
            id.min_buf_shift,
            id.max_buf_shift,
            id.link_mbps
        );
        // Queue pairs: the device's, as far as MSI-X vectors go (one each,
        // after the misc vector).
        let max_queues = (id.max_queues as usize).clamp(1, abi::MAX_QUEUES);
        let msix = pci::IrqTypes::default().with(pci::IrqType::MsiX);
        let vectors = pdev.alloc_irq_vectors(2, 1 + max_queues as u32, msix)?;
        let max_queues = max_queues.min(vectors.len() - 1);
        let misc_irq = kernel::irq::IrqRequest::from(vectors.index(abi::MISC_VECTOR.into())?).irq();
        let mut queue_irqs = [0; abi::MAX_QUEUES];
        for (i, irq) in queue_irqs.iter_mut().enumerate().take(max_queues) {
            let v = rings::queue_vector(i) as usize;
            *irq = kernel::irq::IrqRequest::from(vectors.index(v)?).irq();
        }
        // One queue pair per core by default, as other multi-queue NICs;
        // ethtool -L changes it.
        let queues = net::netdev::default_rss_queues().min(max_queues as u32);
        let mut features = net::netdev::Features::SG
            .with(net::netdev::Features::HW_CSUM)
            .with(net::netdev::Features::RXCSUM)
            .with(net::netdev::Features::NTUPLE)
            .with(net::netdev::Features::LOOPBACK);
        if id.has_rx_hash() {
            features = features.with(net::netdev::Features::RXHASH);
        }
        let cfg = net::registration::Config {
            tx_queues: max_queues as u32,
            rx_queues: max_queues as u32,
            real_queues: queues,
            mac: id.mac,
            mtu: frame::DEFAULT_MTU,
            min_mtu: 68,
            max_mtu: frame::MAX_MTU,
            features,
            // A NIC is on its link until the user asks otherwise.
            features_off: net::netdev::Features::LOOPBACK,
            xdp_features: net::xdp::Features::BASIC
                .with(net::xdp::Features::REDIRECT)
                .with(net::xdp::Features::NDO_XMIT)
                .with(net::xdp::Features::RX_SG)
                .with(net::xdp::Features::NDO_XMIT_SG)
                .with(net::xdp::Features::XSK_ZEROCOPY),
            xsk_max_segs: frame::XSK_MAX_SEGS,
            irq_affinity_auto: true,
        };
        let rings = rings::Rings::new(pdev.as_ref(), max_queues)?;
        let data = iface::NetdevData::new(iface::Probed {
            bar: bar.into_devres()?,
            rings,
            queue_irqs,
            max_queues: max_queues as u32,
            queues,
            misc_irq,
            link_mbps: id.link_mbps,
            node_id: id.node,
            rx_hash: id.has_rx_hash(),
            queue_coalesce: id.has_queue_coalesce(),
        });
        let netdev = net::registration::Registration::new(pdev.as_ref(), &cfg, data)?;
        Ok(PagefillDevice {
            pdev,
            netdev,
            _vectors: vectors,
        })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        // Nothing may stay with the device once the driver lets go. A
        // device that did not take the reset may still be writing: with bus
        // mastering off it cannot reach the rings and tables freed next.
        let dev = this.netdev.device();
        if dev.data().reset().is_err() {
            dev.set_bus_master(false);
            dev_warn!(pdev, "reset on unbind failed: bus mastering off\n");
        }
    }
}

impl Drop for PagefillDevice<'_> {
    fn drop(&mut self) {
        dev_info!(self.pdev, "pagefill NIC unbound\n");
    }
}

kernel::module_pci_driver! {
    type: PagefillDriver,
    name: "pagefill",
    authors: ["pagefill developers"],
    description: "pagefill page-fill DMA NIC driver",
    license: "GPL v2",
}
