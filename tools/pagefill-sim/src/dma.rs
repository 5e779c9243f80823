// SPDX-License-Identifier: GPL-2.0

//! The device's view of host memory: DMA only through the regions the host
//! (QEMU) mapped, and only while the host lets the device master the bus. An
//! access outside the regions is a driver bug (it programmed an address it
//! never mapped for the device) and fails with [`DmaError`], which the engine
//! reports loudly; an access while bus mastering is disabled is refused
//! before it reaches memory ([`BusMaster`]), which is no device error.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why the device could not make a DMA access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmaRefusal {
    /// Some byte of the range lies outside every region mapped for the
    /// device: the driver programmed an address it never mapped.
    Unmapped,
    /// The host has bus mastering disabled in the PCI command register: the
    /// function may not issue memory requests at all.
    NoBusMaster,
}

/// A DMA access the device could not make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmaError {
    pub addr: u64,
    pub len: usize,
    pub cause: DmaRefusal,
}

impl DmaError {
    /// An access to `len` bytes at `addr`, not all of which are mapped.
    pub fn unmapped(addr: u64, len: usize) -> Self {
        Self {
            addr,
            len,
            cause: DmaRefusal::Unmapped,
        }
    }
}

impl fmt::Display for DmaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self.cause {
            DmaRefusal::Unmapped => "DMA to unmapped memory",
            DmaRefusal::NoBusMaster => "DMA refused, bus mastering disabled,",
        };
        write!(f, "{why} at {:#x}, {} bytes", self.addr, self.len)
    }
}

/// Host memory as a bus master sees it.
pub trait Memory: Send {
    /// Copies `buf.len()` bytes at bus address `addr` into `buf`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError>;
    /// Copies `buf` to bus address `addr`.
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError>;
    /// Atomically replaces the aligned u64 at `addr` with 0 and returns what
    /// was there: how the device takes a buffer from a table entry.
    fn take_u64(&self, addr: u64) -> Result<u64, DmaError>;

    fn read_u64(&self, addr: u64) -> Result<u64, DmaError> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    fn read_u32(&self, addr: u64) -> Result<u32, DmaError> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn write_u32(&self, addr: u64, v: u32) -> Result<(), DmaError> {
        self.write(addr, &v.to_le_bytes())
    }
}

/// A mapped region of host memory: bus addresses `iova..iova + len` at
/// `ptr` in this process.
///
/// # Invariants
///
/// `ptr..ptr + len` stays mapped, readable and writable for the region's
/// life (the owner unmaps only after the region is dropped from every
/// [`Regions`]).
struct Region {
    iova: u64,
    len: u64,
    ptr: *mut u8,
    /// Keeps the mapping alive; unmapped on drop.
    _map: Option<Mapping>,
}

// SAFETY: the region is plain shared memory; concurrent access from the host
// is the nature of DMA and every access below copies bytes without forming
// references into it.
unsafe impl Send for Region {}

// SAFETY: shared access only copies bytes in and out (or does an atomic swap)
// through the raw pointer; no reference into the region is ever formed, so
// concurrent use from several threads is as sound as the host's own
// concurrent access to the same memory.
unsafe impl Sync for Region {}

/// An `mmap` of a file descriptor, unmapped on drop.
pub struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned memory of the process; moving the owner to
// another thread is fine.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` at `offset`, shared and read-write.
    pub fn new(fd: &std::fs::File, offset: u64, len: u64) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        let len = usize::try_from(len).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        let off = libc::off_t::try_from(offset).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        // SAFETY: a fresh shared mapping chosen by the kernel; no existing
        // memory is affected. The result is checked before use.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                off,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self {
            ptr: ptr.cast(),
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr, len` is the mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// The regions of host memory the device may reach.
#[derive(Default)]
pub struct Regions {
    regions: Vec<Region>,
}

impl Regions {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a region backed by `map`, at bus address `iova`.
    pub fn add_mapping(&mut self, iova: u64, map: Mapping) {
        let len = map.len as u64;
        let ptr = map.ptr;
        self.regions.retain(|r| r.iova != iova);
        // INVARIANT: `map` owns `ptr..ptr + len` and moves into the region.
        self.regions.push(Region {
            iova,
            len,
            ptr,
            _map: Some(map),
        });
    }

    /// Adds a region of memory this process owns (the in-process fake host
    /// memory of the tests and benchmarks).
    ///
    /// # Safety
    ///
    /// `ptr..ptr + len` must stay valid for reads and writes until the region
    /// is removed or `self` is dropped.
    pub unsafe fn add_raw(&mut self, iova: u64, ptr: *mut u8, len: usize) {
        // INVARIANT: the caller guarantees the memory outlives the region.
        self.regions.push(Region {
            iova,
            len: len as u64,
            ptr,
            _map: None,
        });
    }

    /// Removes the regions that start in `iova..iova + len`.
    pub fn remove(&mut self, iova: u64, len: u64) {
        let end = iova.saturating_add(len);
        self.regions.retain(|r| r.iova < iova || r.iova >= end);
    }

    /// Removes every region.
    pub fn clear(&mut self) {
        self.regions.clear();
    }

    /// A pointer to `len` bytes at `addr` if one region holds all of them.
    fn locate(&self, addr: u64, len: usize) -> Result<*mut u8, DmaError> {
        let err = DmaError::unmapped(addr, len);
        let end = addr.checked_add(len as u64).ok_or(err)?;
        let r = self
            .regions
            .iter()
            .find(|r| addr >= r.iova && end <= r.iova + r.len)
            .ok_or(err)?;
        // SAFETY: `addr - r.iova + len <= r.len`, so the offset stays inside
        // the region's mapping (type invariant).
        Ok(unsafe { r.ptr.add((addr - r.iova) as usize) })
    }

    /// Calls `f(host_ptr, offset, n)` for each piece of `addr..addr + len`
    /// split at region boundaries, in order, once the whole range was found
    /// mapped. Behind an IOMMU every I/O page is a mapping of its own, so a
    /// buffer contiguous on the bus (a transmit payload crossing a page)
    /// spans several regions, as for a real DMA engine.
    fn pieces(
        &self,
        addr: u64,
        len: usize,
        mut f: impl FnMut(*mut u8, usize, usize),
    ) -> Result<(), DmaError> {
        // Most accesses lie in one region: one lookup.
        if let Ok(p) = self.locate(addr, len) {
            f(p, 0, len);
            return Ok(());
        }
        let err = DmaError::unmapped(addr, len);
        let end = addr.checked_add(len as u64).ok_or(err)?;
        let piece = |at: u64| {
            self.regions
                .iter()
                .find(|r| at >= r.iova && at < r.iova + r.len)
                .map(|r| (r, (end.min(r.iova + r.len) - at) as usize))
        };
        // Refused whole if any byte is unmapped: nothing is copied then.
        let mut at = addr;
        while at < end {
            at += piece(at).ok_or(err)?.1 as u64;
        }
        let mut at = addr;
        while at < end {
            let (r, n) = piece(at).ok_or(err)?;
            // SAFETY: `at - r.iova + n <= r.len`, so the piece stays inside
            // the region's mapping (type invariant).
            f(
                unsafe { r.ptr.add((at - r.iova) as usize) },
                (at - addr) as usize,
                n,
            );
            at += n as u64;
        }
        Ok(())
    }
}

impl Memory for Regions {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        let dst = buf.as_mut_ptr();
        self.pieces(addr, buf.len(), |p, off, n| {
            // SAFETY: `pieces` hands out pieces of live mappings that add up
            // to `buf.len()`, so `off + n <= buf.len()`; `buf` is our own
            // memory and cannot overlap guest memory.
            unsafe { std::ptr::copy_nonoverlapping(p, dst.add(off), n) }
        })
    }

    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        let src = buf.as_ptr();
        self.pieces(addr, buf.len(), |p, off, n| {
            // SAFETY: as in `read`, with the copy going the other way.
            unsafe { std::ptr::copy_nonoverlapping(src.add(off), p, n) }
        })
    }

    fn take_u64(&self, addr: u64) -> Result<u64, DmaError> {
        if !addr.is_multiple_of(8) {
            return Err(DmaError::unmapped(addr, 8));
        }
        let p = self.locate(addr, 8)?;
        // SAFETY: `p` is 8-byte aligned (bus addresses and mappings are page
        // aligned, `addr` is 8-aligned) and inside a live mapping; the host
        // accesses table entries only with aligned 64-bit stores, so an atomic
        // view of them is sound.
        let v = unsafe { AtomicU64::from_ptr(p.cast()) }.swap(0, Ordering::AcqRel);
        Ok(u64::from_le(v))
    }
}

impl<M: Memory + Sync> Memory for std::sync::Arc<M> {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        (**self).read(addr, buf)
    }
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        (**self).write(addr, buf)
    }
    fn take_u64(&self, addr: u64) -> Result<u64, DmaError> {
        (**self).take_u64(addr)
    }
}

/// Host memory as the device reaches it: through its bus-master port, which
/// the host opens and closes with Bus Master Enable in the PCI command
/// register. While it is closed the function may issue no memory request:
/// every access is refused with [`DmaRefusal::NoBusMaster`] before it reaches
/// memory. It is closed at power-on, as the command register is.
pub struct BusMaster {
    mem: Box<dyn Memory>,
    enabled: bool,
}

impl BusMaster {
    /// The port to `mem`, closed.
    pub fn new(mem: Box<dyn Memory>) -> Self {
        Self {
            mem,
            enabled: false,
        }
    }

    /// Whether the host lets the device master the bus.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// Opens or closes the port, as the command register says.
    pub fn set_enabled(&mut self, enabled: bool) {
        self.enabled = enabled;
    }

    fn check(&self, addr: u64, len: usize) -> Result<(), DmaError> {
        if self.enabled {
            Ok(())
        } else {
            Err(DmaError {
                addr,
                len,
                cause: DmaRefusal::NoBusMaster,
            })
        }
    }
}

impl Memory for BusMaster {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        self.check(addr, buf.len())?;
        self.mem.read(addr, buf)
    }
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        self.check(addr, buf.len())?;
        self.mem.write(addr, buf)
    }
    fn take_u64(&self, addr: u64) -> Result<u64, DmaError> {
        self.check(addr, 8)?;
        self.mem.take_u64(addr)
    }
}

/// Host memory for tests and benchmarks: one zeroed block at a bus address.
pub struct FakeMemory {
    base: u64,
    mem: Box<[u64]>,
    regions: Regions,
}

impl FakeMemory {
    /// `len` bytes (rounded up to 8) of zeroed memory at bus address `base`.
    pub fn new(base: u64, len: usize) -> Self {
        let mut mem = vec![0u64; len.div_ceil(8)].into_boxed_slice();
        let mut regions = Regions::new();
        // SAFETY: `mem` is owned by the same struct as `regions`, is never
        // resized, and is dropped after `regions` (field order).
        unsafe { regions.add_raw(base, mem.as_mut_ptr().cast(), mem.len() * 8) };
        Self { base, mem, regions }
    }

    pub fn base(&self) -> u64 {
        self.base
    }

    pub fn len(&self) -> usize {
        self.mem.len() * 8
    }

    pub fn is_empty(&self) -> bool {
        self.mem.is_empty()
    }

    pub fn write_u64(&self, addr: u64, v: u64) {
        self.write(addr, &v.to_le_bytes())
            .expect("fake memory address in range");
    }
}

impl Memory for FakeMemory {
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), DmaError> {
        self.regions.read(addr, buf)
    }
    fn write(&self, addr: u64, buf: &[u8]) -> Result<(), DmaError> {
        self.regions.write(addr, buf)
    }
    fn take_u64(&self, addr: u64) -> Result<u64, DmaError> {
        self.regions.take_u64(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_inside_a_region_works() {
        let m = FakeMemory::new(0x10_0000, 4096);
        m.write(0x10_0010, &[1, 2, 3]).unwrap();
        let mut b = [0u8; 3];
        m.read(0x10_0010, &mut b).unwrap();
        assert_eq!(b, [1, 2, 3]);
    }

    #[test]
    fn access_outside_or_across_the_end_is_refused() {
        let m = FakeMemory::new(0x10_0000, 4096);
        let mut b = [0u8; 8];
        assert!(m.read(0x0f_fff8, &mut b).is_err());
        assert!(m.read(0x10_0ffc, &mut b).is_err(), "straddles the end");
        assert!(m.write(0x10_1000, &b).is_err());
        assert!(m.read(u64::MAX - 2, &mut b).is_err(), "wraps");
    }

    #[test]
    fn take_returns_the_entry_and_zeroes_it() {
        let m = FakeMemory::new(0x10_0000, 4096);
        m.write_u64(0x10_0100, 0xdead_b000);
        assert_eq!(m.take_u64(0x10_0100).unwrap(), 0xdead_b000);
        assert_eq!(m.read_u64(0x10_0100).unwrap(), 0);
        assert_eq!(m.take_u64(0x10_0100).unwrap(), 0);
        assert!(m.take_u64(0x10_0104).is_err(), "misaligned");
    }

    #[test]
    fn an_access_spans_adjacent_regions_but_not_a_hole() {
        let mut r = Regions::new();
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        // SAFETY: `a` and `b` outlive `r`'s use of them below.
        unsafe {
            r.add_raw(0x1000, a.as_mut_ptr(), 4096);
            r.add_raw(0x2000, b.as_mut_ptr(), 4096);
        }
        r.write(0x1ffe, &[1, 2, 3, 4]).unwrap();
        let mut got = [0u8; 4];
        r.read(0x1ffe, &mut got).unwrap();
        assert_eq!(got, [1, 2, 3, 4]);
        assert!(
            r.read(0x2ffe, &mut got).is_err(),
            "runs into unmapped 0x3000"
        );
        drop(r);
        assert_eq!((&a[4094..], &b[..2]), (&[1u8, 2][..], &[3u8, 4][..]));
    }

    #[test]
    fn a_closed_bus_master_port_refuses_every_access_untouched() {
        let m = std::sync::Arc::new(FakeMemory::new(0x10_0000, 4096));
        m.write_u64(0x10_0100, 0xdead_b000);
        let mut port = BusMaster::new(Box::new(m.clone()));
        let mut b = [0u8; 8];
        let refused = |r: Result<(), DmaError>| r.map_err(|e| e.cause);
        assert_eq!(
            refused(port.read(0x10_0100, &mut b)),
            Err(DmaRefusal::NoBusMaster)
        );
        assert_eq!(
            refused(port.write(0x10_0100, &[0; 8])),
            Err(DmaRefusal::NoBusMaster)
        );
        assert_eq!(
            port.take_u64(0x10_0100).map_err(|e| e.cause),
            Err(DmaRefusal::NoBusMaster)
        );
        assert_eq!(m.read_u64(0x10_0100).unwrap(), 0xdead_b000, "untouched");
        port.set_enabled(true);
        assert_eq!(port.take_u64(0x10_0100).unwrap(), 0xdead_b000);
        assert_eq!(
            port.read(0x7000_0000, &mut b).map_err(|e| e.cause),
            Err(DmaRefusal::Unmapped)
        );
    }

    #[test]
    fn removed_regions_are_unreachable() {
        let mut r = Regions::new();
        let mut backing = vec![0u8; 64];
        // SAFETY: `backing` outlives `r`'s use of it below.
        unsafe { r.add_raw(0x1000, backing.as_mut_ptr(), 64) };
        assert!(r.write(0x1000, &[1]).is_ok());
        r.remove(0x1000, 64);
        assert!(r.write(0x1000, &[1]).is_err());
    }
}
