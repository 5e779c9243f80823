// SPDX-License-Identifier: GPL-2.0

//! Driver for the pagefill page-fill DMA NIC.
//!
//! The NIC packs many short frames into whole pages that the driver posts in
//! advance in a group/node pointer table in host memory. See
//! `Documentation/networking/device_drivers/ethernet/pagefill/` for the
//! hardware and the driver's design.

use kernel::{
    device::Core,
    pci,
    prelude::*, //
};

// The ABI is shared with the device model, which uses parts the driver does
// not (and declares them `pub` for its own crate).
#[allow(dead_code, unreachable_pub)]
#[path = "../../../../include/pagefill/abi.rs"]
mod abi;
mod ffi;
mod groups;
mod hw;
// The abstraction layer is written as the public API it would be in
// `rust/kernel/net/`, and is a library for the whole data path: parts of it
// are not used until the rings land.
#[allow(dead_code, unreachable_pub)]
mod net;
mod netdev;
mod rings;
mod rx;
mod tx;

/// A bound pagefill NIC.
struct PagefillDevice<'bound> {
    pdev: &'bound pci::Device,
    /// Dropped first: the interface frees its interrupts when it stops.
    netdev: net::netdev::Registration<netdev::PagefillNetdev>,
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
        pdev.set_master();
        let bar = pdev.iomap_region_sized::<{ abi::BAR0_SIZE }>(0, c"pagefill")?;
        let id = hw::Identity::read(pdev, &bar)?;
        hw::reset(&bar)?;
        dev_info!(
            pdev,
            "pagefill NIC, interface {}.{}, node {}, MAC {:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}, \
             {} groups x {} nodes, {} queues, buffers 2^{}..2^{}, {} Mb/s\n",
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
        let cfg = net::netdev::Config {
            tx_queues: 1,
            rx_queues: 1,
            mac: id.mac,
            mtu: 1500,
            min_mtu: 68,
            max_mtu: netdev::MAX_MTU,
        };
        let rings = rings::Rings::new(pdev.as_ref())?;
        // Vector 0 is the misc vector, 1 queue 0's.
        let msix = pci::IrqTypes::default().with(pci::IrqType::MsiX);
        let vectors = pdev.alloc_irq_vectors(2, 2, msix)?;
        let misc_irq = kernel::irq::IrqRequest::from(vectors.index(abi::MISC_VECTOR.into())?).irq();
        let irq = kernel::irq::IrqRequest::from(vectors.index(1)?).irq();
        let data = netdev::NetdevData::new(
            bar.into_devres()?,
            rings,
            irq,
            misc_irq,
            id.link_mbps,
            id.node,
        );
        let netdev = net::netdev::Registration::new(pdev.as_ref(), &cfg, data)?;
        Ok(PagefillDevice {
            pdev,
            netdev,
            _vectors: vectors,
        })
    }

    fn unbind<'bound>(pdev: &'bound pci::Device<Core<'_>>, this: Pin<&Self::Data<'bound>>) {
        // Nothing may stay with the device once the driver lets go.
        let reset = this.netdev.device().data().reset();
        if reset.is_err() {
            dev_warn!(pdev, "reset on unbind failed\n");
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
