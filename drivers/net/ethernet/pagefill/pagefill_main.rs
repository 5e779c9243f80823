// SPDX-License-Identifier: GPL-2.0

//! Driver for the pagefill page-fill DMA NIC.
//!
//! The NIC packs many short frames into whole pages that the driver posts in
//! advance in a group/node pointer table in host memory. See
//! `Documentation/networking/device_drivers/ethernet/pagefill/` for the
//! hardware and the driver's design.

use kernel::{
    device::Core,
    io::Io,
    pci,
    prelude::*, //
};

// The ABI is shared with the device model, which uses parts the driver does
// not (and declares them `pub` for its own crate).
#[allow(dead_code, unreachable_pub)]
#[path = "../../../../include/pagefill/abi.rs"]
mod abi;
mod ffi;

/// BAR0 of a pagefill NIC, sized so register offsets are checked at build time.
type Bar0<'bound> = pci::Bar<'bound, { abi::BAR0_SIZE }>;

/// A bound pagefill NIC.
struct PagefillDevice<'bound> {
    pdev: &'bound pci::Device,
    _bar: Bar0<'bound>,
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

impl PagefillDevice<'_> {
    /// Reads the identity registers and checks that this driver speaks the
    /// device's interface.
    fn check_identity(pdev: &pci::Device, bar: &Bar0<'_>) -> Result<u32> {
        let id = bar.read32(abi::reg::ID);
        if id != abi::ID_MAGIC {
            dev_err!(pdev, "not a pagefill NIC: id register reads {:#010x}\n", id);
            return Err(ENODEV);
        }
        let version = bar.read32(abi::reg::VERSION);
        if abi::version_major(version) != abi::VERSION_MAJOR {
            dev_err!(
                pdev,
                "unsupported interface version {}.{} (driver speaks {}.x)\n",
                abi::version_major(version),
                abi::version_minor(version),
                abi::VERSION_MAJOR
            );
            return Err(ENODEV);
        }
        Ok(version)
    }
}

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
        let version = PagefillDevice::check_identity(pdev, &bar)?;
        dev_info!(
            pdev,
            "pagefill NIC, interface {}.{}\n",
            abi::version_major(version),
            abi::version_minor(version)
        );
        Ok(PagefillDevice { pdev, _bar: bar })
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
