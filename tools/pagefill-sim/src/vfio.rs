// SPDX-License-Identifier: GPL-2.0

//! The vfio-user face of the model: QEMU's `vfio-user-pci` client sends
//! config space and BAR0 accesses, DMA mappings of guest RAM, and the
//! eventfds that raise the guest's MSI-X vectors.

use std::fs::File;
use std::io::Write;
use std::mem::size_of;

use log::{debug, warn};
use vfio_bindings::bindings::vfio::{
    vfio_region_info, VFIO_IRQ_INFO_EVENTFD, VFIO_IRQ_SET_ACTION_TRIGGER,
    VFIO_IRQ_SET_DATA_EVENTFD, VFIO_IRQ_SET_DATA_NONE, VFIO_PCI_BAR0_REGION_INDEX,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_PCI_NUM_IRQS,
    VFIO_PCI_NUM_REGIONS, VFIO_REGION_INFO_FLAG_READ, VFIO_REGION_INFO_FLAG_WRITE,
};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, ServerBackend, ServerRegion};

use crate::config_space::{ConfigSpace, CONFIG_SPACE_SIZE};
use crate::device::Nic;
use pagefill_abi as abi;

/// One NIC instance as QEMU sees it.
pub struct Backend {
    pub config: ConfigSpace,
    pub nic: Nic,
    /// The eventfd behind each MSI-X vector, once the guest enabled it.
    msix: Vec<Option<File>>,
}

impl Default for Backend {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend {
    /// A backend for a NIC fresh from power-on.
    pub fn new() -> Self {
        Self {
            config: ConfigSpace::new(),
            nic: Nic::new(),
            msix: (0..abi::MSIX_VECTORS).map(|_| None).collect(),
        }
    }

    /// The regions QEMU asks about: config space and BAR0, nothing else.
    pub fn regions() -> Vec<ServerRegion> {
        (0..VFIO_PCI_NUM_REGIONS)
            .map(|index| {
                let size = match index {
                    VFIO_PCI_CONFIG_REGION_INDEX => CONFIG_SPACE_SIZE as u64,
                    VFIO_PCI_BAR0_REGION_INDEX => abi::BAR0_SIZE as u64,
                    _ => 0,
                };
                let flags = if size != 0 {
                    VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE
                } else {
                    0
                };
                ServerRegion {
                    region_info: vfio_region_info {
                        argsz: size_of::<vfio_region_info>() as u32,
                        index,
                        size,
                        flags,
                        ..Default::default()
                    },
                    sparse_areas: Vec::new(),
                    mmap_fd: None,
                }
            })
            .collect()
    }

    /// The interrupts: MSI-X only.
    pub fn irqs() -> Vec<IrqInfo> {
        (0..VFIO_PCI_NUM_IRQS)
            .map(|index| {
                let (count, flags) = if index == VFIO_PCI_MSIX_IRQ_INDEX {
                    (u32::from(abi::MSIX_VECTORS), VFIO_IRQ_INFO_EVENTFD)
                } else {
                    (0, 0)
                };
                IrqInfo {
                    index,
                    count,
                    flags,
                }
            })
            .collect()
    }

    /// Raises MSI-X `vector` if the guest has wired it up; returns whether an
    /// interrupt was sent.
    pub fn raise(&mut self, vector: usize) -> bool {
        if !self.config.msix_enabled() {
            return false;
        }
        match self.msix.get_mut(vector) {
            Some(Some(fd)) => fd.write_all(&1u64.to_le_bytes()).is_ok(),
            _ => false,
        }
    }
}

impl ServerBackend for Backend {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> std::io::Result<()> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => self.config.read(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => self.nic.bar0_read(offset, data),
            _ => {
                warn!("read of absent region {region} at {offset:#x}");
                data.fill(0xff);
            }
        }
        Ok(())
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> std::io::Result<()> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => self.config.write(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => self.nic.bar0_write(offset, data),
            _ => warn!("write to absent region {region} at {offset:#x}"),
        }
        Ok(())
    }

    fn dma_map(
        &mut self,
        flags: DmaMapFlags,
        offset: u64,
        address: u64,
        size: u64,
        fd: Option<File>,
    ) -> std::io::Result<()> {
        debug!("dma_map {flags:?} iova {address:#x} size {size:#x} offset {offset:#x} fd {fd:?}");
        Ok(())
    }

    fn dma_unmap(
        &mut self,
        flags: DmaUnmapFlags,
        address: u64,
        size: u64,
    ) -> std::io::Result<()> {
        debug!("dma_unmap {flags:?} iova {address:#x} size {size:#x}");
        Ok(())
    }

    fn reset(&mut self) -> std::io::Result<()> {
        debug!("device reset");
        self.nic = Nic::new();
        Ok(())
    }

    fn set_irqs(
        &mut self,
        index: u32,
        flags: u32,
        start: u32,
        count: u32,
        fds: Vec<File>,
    ) -> std::io::Result<()> {
        debug!("set_irqs index {index} flags {flags:#x} start {start} count {count} fds {}", fds.len());
        if index != VFIO_PCI_MSIX_IRQ_INDEX || flags & VFIO_IRQ_SET_ACTION_TRIGGER == 0 {
            return Ok(());
        }
        let start = start as usize;
        let end = start.saturating_add(count as usize).min(self.msix.len());
        if flags & VFIO_IRQ_SET_DATA_NONE != 0 && count == 0 {
            self.msix.iter_mut().for_each(|v| *v = None);
        } else if flags & VFIO_IRQ_SET_DATA_EVENTFD != 0 {
            let mut fds = fds.into_iter();
            for slot in self.msix.get_mut(start..end).into_iter().flatten() {
                *slot = fds.next();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_config_and_bar0_exist() {
        let regions = Backend::regions();
        let sized: Vec<u32> = regions
            .iter()
            .filter(|r| r.region_info.size != 0)
            .map(|r| r.region_info.index)
            .collect();
        assert_eq!(sized, [VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX]);
    }

    #[test]
    fn msix_is_the_only_interrupt() {
        let irqs = Backend::irqs();
        let msix: Vec<_> = irqs.iter().filter(|i| i.count != 0).collect();
        assert_eq!(msix.len(), 1);
        assert_eq!(msix[0].index, VFIO_PCI_MSIX_IRQ_INDEX);
        assert_eq!(msix[0].count, u32::from(abi::MSIX_VECTORS));
    }

    #[test]
    fn bar0_reads_through_the_backend() {
        let mut b = Backend::new();
        let mut v = [0u8; 4];
        b.region_read(VFIO_PCI_BAR0_REGION_INDEX, abi::reg::ID as u64, &mut v)
            .unwrap();
        assert_eq!(u32::from_le_bytes(v), abi::ID_MAGIC);
    }

    #[test]
    fn raise_needs_msix_enabled_and_an_eventfd() {
        let mut b = Backend::new();
        assert!(!b.raise(0));
        let (r, w) = std::os::unix::net::UnixStream::pair().unwrap();
        let fd: File = std::os::fd::OwnedFd::from(w).into();
        b.set_irqs(
            VFIO_PCI_MSIX_IRQ_INDEX,
            VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER,
            2,
            1,
            vec![fd],
        )
        .unwrap();
        assert!(!b.raise(2), "MSI-X not enabled yet");
        b.config.write(0x43, &[0x80]);
        assert!(b.raise(2));
        assert!(!b.raise(1), "vector 1 has no eventfd");
        let mut got = [0u8; 8];
        use std::io::Read;
        (&r).read_exact(&mut got).unwrap();
        assert_eq!(u64::from_le_bytes(got), 1);
        b.set_irqs(
            VFIO_PCI_MSIX_IRQ_INDEX,
            VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
            0,
            0,
            vec![],
        )
        .unwrap();
        assert!(!b.raise(2));
    }
}
