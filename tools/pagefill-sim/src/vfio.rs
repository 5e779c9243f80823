// SPDX-License-Identifier: GPL-2.0

//! The vfio-user face of the model: QEMU's `vfio-user-pci` client sends
//! config space and BAR0 accesses, DMA mappings of guest RAM, and the
//! eventfds that raise the guest's MSI-X vectors.

use std::fs::File;
use std::io::Write;
use std::mem::size_of;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

use log::{debug, error, warn};
use vfio_bindings::bindings::vfio::{
    vfio_region_info, VFIO_IRQ_INFO_EVENTFD, VFIO_IRQ_SET_ACTION_TRIGGER,
    VFIO_IRQ_SET_DATA_EVENTFD, VFIO_IRQ_SET_DATA_NONE, VFIO_PCI_BAR0_REGION_INDEX,
    VFIO_PCI_CONFIG_REGION_INDEX, VFIO_PCI_MSIX_IRQ_INDEX, VFIO_PCI_NUM_IRQS, VFIO_PCI_NUM_REGIONS,
    VFIO_REGION_INFO_FLAG_READ, VFIO_REGION_INFO_FLAG_WRITE,
};
use vfio_user::{DmaMapFlags, DmaUnmapFlags, IrqInfo, ServerBackend, ServerRegion};

use crate::config_space::{ConfigSpace, CONFIG_SPACE_SIZE};
use crate::dma::{DmaError, Mapping, Memory, Regions};
use crate::nic::{Interrupts, Nic};
use pagefill_abi as abi;

/// The MSI-X vectors as QEMU wired them: an eventfd each.
///
/// QEMU emulates the MSI-X capability and table itself (enable, function
/// mask, per-vector masks) and gives the device an eventfd for each vector
/// the guest enabled, so an eventfd is the device's only signal that a vector
/// may fire.
#[derive(Default)]
pub struct Msix {
    fds: Vec<Option<File>>,
}

/// [`Interrupts`] that signal the eventfds QEMU gave.
pub struct MsixInterrupts(pub Arc<Mutex<Msix>>);

impl Interrupts for MsixInterrupts {
    fn raise(&mut self, vector: u16) {
        let Ok(mut m) = self.0.lock() else { return };
        debug!(
            "raise vector {vector}: eventfd {}",
            matches!(m.fds.get(usize::from(vector)), Some(Some(_)))
        );
        if let Some(Some(fd)) = m.fds.get_mut(usize::from(vector)) {
            let _ = fd.write_all(&1u64.to_le_bytes());
        }
    }
}

/// Guest RAM as QEMU mapped it, shared between the vfio thread (which maps
/// and unmaps) and the engine.
#[derive(Clone, Default)]
pub struct SharedRegions(pub Arc<RwLock<Regions>>);

impl Memory for SharedRegions {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        let err = DmaError::unmapped(addr, buf.len());
        self.0.read().map_err(|_| err)?.read(addr, buf)
    }
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        let err = DmaError::unmapped(addr, buf.len());
        self.0.read().map_err(|_| err)?.write(addr, buf)
    }
    fn take_u64(&self, addr: u64) -> Result<u64, DmaError> {
        self.0
            .read()
            .map_err(|_| DmaError::unmapped(addr, 8))?
            .take_u64(addr)
    }
}

/// One NIC as QEMU sees it.
pub struct Backend {
    pub config: ConfigSpace,
    pub nic: Arc<Mutex<Nic>>,
    pub regions: SharedRegions,
    pub msix: Arc<Mutex<Msix>>,
}

impl Backend {
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
}

impl ServerBackend for Backend {
    fn region_read(&mut self, region: u32, offset: u64, data: &mut [u8]) -> std::io::Result<()> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => self.config.read(offset, data),
            VFIO_PCI_BAR0_REGION_INDEX => match self.nic.lock() {
                Ok(mut n) => n.bar0_read(offset, data),
                Err(_) => data.fill(0xff),
            },
            _ => {
                warn!("read of absent region {region} at {offset:#x}");
                data.fill(0xff);
            }
        }
        Ok(())
    }

    fn region_write(&mut self, region: u32, offset: u64, data: &[u8]) -> std::io::Result<()> {
        match region {
            VFIO_PCI_CONFIG_REGION_INDEX => {
                self.config.write(offset, data);
                // The command register gates the NIC's DMA; QEMU forwards
                // the guest's config writes, pci_set_master() included.
                if let Ok(mut n) = self.nic.lock() {
                    n.set_bus_master(self.config.bus_master());
                }
            }
            VFIO_PCI_BAR0_REGION_INDEX => {
                if let Ok(mut n) = self.nic.lock() {
                    n.bar0_write(offset, data, Instant::now());
                }
            }
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
        debug!("dma_map {flags:?} iova {address:#x} size {size:#x} offset {offset:#x}");
        let Some(fd) = fd else {
            // Without a file descriptor the region is reachable only by
            // messages, which this model does not use.
            debug!("dma_map of {address:#x} without a file descriptor: unreachable");
            return Ok(());
        };
        let map = Mapping::new(&fd, offset, size)?;
        match self.regions.0.write() {
            Ok(mut r) => r.add_mapping(address, map),
            Err(_) => error!("region table poisoned"),
        }
        Ok(())
    }

    fn dma_unmap(&mut self, flags: DmaUnmapFlags, address: u64, size: u64) -> std::io::Result<()> {
        debug!("dma_unmap {flags:?} iova {address:#x} size {size:#x}");
        if let Ok(mut r) = self.regions.0.write() {
            r.remove(address, size);
        }
        Ok(())
    }

    fn reset(&mut self) -> std::io::Result<()> {
        debug!("device reset");
        if let Ok(mut n) = self.nic.lock() {
            n.reset();
        }
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
        debug!(
            "set_irqs index {index} flags {flags:#x} start {start} count {count} fds {}",
            fds.len()
        );
        if index != VFIO_PCI_MSIX_IRQ_INDEX || flags & VFIO_IRQ_SET_ACTION_TRIGGER == 0 {
            return Ok(());
        }
        let Ok(mut m) = self.msix.lock() else {
            return Ok(());
        };
        if m.fds.is_empty() {
            m.fds = (0..abi::MSIX_VECTORS).map(|_| None).collect();
        }
        let start = start as usize;
        let end = start.saturating_add(count as usize).min(m.fds.len());
        if flags & VFIO_IRQ_SET_DATA_NONE != 0 && count == 0 {
            m.fds.iter_mut().for_each(|v| *v = None);
        } else if flags & VFIO_IRQ_SET_DATA_EVENTFD != 0 {
            let mut fds = fds.into_iter();
            for slot in m.fds.get_mut(start..end).into_iter().flatten() {
                *slot = fds.next();
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::RecordingPort;

    fn backend() -> Backend {
        let regions = SharedRegions::default();
        let msix = Arc::new(Mutex::new(Msix::default()));
        let nic = Nic::new(
            1,
            Box::new(regions.clone()),
            Box::new(MsixInterrupts(msix.clone())),
            Box::new(RecordingPort::default()),
        );
        Backend {
            config: ConfigSpace::new(),
            nic: Arc::new(Mutex::new(nic)),
            regions,
            msix,
        }
    }

    #[test]
    fn only_config_and_bar0_exist() {
        let sized: Vec<u32> = Backend::regions()
            .iter()
            .filter(|r| r.region_info.size != 0)
            .map(|r| r.region_info.index)
            .collect();
        assert_eq!(
            sized,
            [VFIO_PCI_BAR0_REGION_INDEX, VFIO_PCI_CONFIG_REGION_INDEX]
        );
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
        let mut b = backend();
        let mut v = [0u8; 4];
        b.region_read(VFIO_PCI_BAR0_REGION_INDEX, abi::reg::ID as u64, &mut v)
            .unwrap();
        assert_eq!(u32::from_le_bytes(v), abi::ID_MAGIC);
    }

    #[test]
    fn the_command_register_opens_and_closes_the_nics_dma() {
        let mut b = backend();
        let bus_master = |b: &Backend| b.nic.lock().unwrap().bus_master();
        assert!(!bus_master(&b), "closed at power-on");
        // Memory space and bus master, as pci_set_master() leaves them.
        b.region_write(VFIO_PCI_CONFIG_REGION_INDEX, 0x04, &[0x06, 0x00])
            .unwrap();
        assert!(bus_master(&b));
        b.region_write(VFIO_PCI_CONFIG_REGION_INDEX, 0x04, &[0x02, 0x00])
            .unwrap();
        assert!(!bus_master(&b));
    }

    #[test]
    fn interrupts_go_to_the_eventfd_qemu_gave() {
        use std::io::Read;
        let mut b = backend();
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
        let mut irq = MsixInterrupts(b.msix.clone());
        r.set_nonblocking(true).unwrap();
        let mut got = [0u8; 8];
        irq.raise(2);
        (&r).read_exact(&mut got).unwrap();
        assert_eq!(u64::from_le_bytes(got), 1);
        irq.raise(1);
        assert!((&r).read(&mut got).is_err(), "vector 1 has no eventfd");
    }
}
