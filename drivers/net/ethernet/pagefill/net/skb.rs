// SPDX-License-Identifier: GPL-2.0

//! Socket buffers.
//!
//! C header: [`include/linux/skbuff.h`](srctree/include/linux/skbuff.h)

use core::ptr::NonNull;

use kernel::{error::to_result, prelude::*};

use crate::ffi;
use crate::net::netdev::{Device, Operations};
use crate::net::page_pool::PoolPage;

/// What a received frame's flow hash covers beyond its addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HashL4 {
    /// The addresses only.
    None,
    /// And the TCP ports.
    Tcp,
    /// And the UDP ports.
    Udp,
    /// And the ports of a layer 4 protocol the device did not name.
    Unknown,
}

/// A received frame's flow hash, as the device computed it, with what it
/// covers, or no hash ([`Self::NONE`]): the skb's hash (`skb_set_hash()`)
/// and XDP's receive hash metadata. Two words with no `Option` around
/// them, as the receive path carries one per frame.
///
/// # Invariants
///
/// `rss_type` is 0 (no hash), or a combination of `enum xdp_rss_hash_type`
/// bits: one address family, and optionally `XDP_RSS_L4` with at most one
/// protocol bit. Nothing unsafe relies on it: it is what XDP programs and
/// the stack are told the hash covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxHash {
    value: u32,
    rss_type: u32,
}

impl RxHash {
    /// No hash.
    pub const NONE: Self = Self {
        value: 0,
        rss_type: 0,
    };

    /// The hash `value` of an IPv6 (else IPv4) frame, over `l4`'s ports too.
    pub const fn new(value: u32, ipv6: bool, l4: HashL4) -> Self {
        let l3 = if ipv6 {
            ffi::pagefill_rss_PAGEFILL_RSS_L3_IPV6
        } else {
            ffi::pagefill_rss_PAGEFILL_RSS_L3_IPV4
        };
        let any = ffi::pagefill_rss_PAGEFILL_RSS_L4;
        let l4 = match l4 {
            HashL4::None => 0,
            HashL4::Tcp => any | ffi::pagefill_rss_PAGEFILL_RSS_L4_TCP,
            HashL4::Udp => any | ffi::pagefill_rss_PAGEFILL_RSS_L4_UDP,
            HashL4::Unknown => any,
        };
        // INVARIANT: one family bit, and L4 with at most one protocol.
        Self {
            value,
            rss_type: l3 | l4,
        }
    }

    /// The same kind of hash (or none), of value `value`.
    #[inline]
    pub const fn with_value(self, value: u32) -> Self {
        // INVARIANT: the type is kept.
        Self {
            value,
            rss_type: self.rss_type,
        }
    }

    /// Whether there is no hash.
    #[inline]
    pub const fn is_none(&self) -> bool {
        self.rss_type == 0
    }

    /// The hash.
    #[inline]
    pub const fn value(&self) -> u32 {
        self.value
    }

    /// Its `enum xdp_rss_hash_type`; 0 for no hash.
    #[inline]
    pub const fn rss_type(&self) -> u32 {
        self.rss_type
    }
}

/// An owned socket buffer; freed on drop.
///
/// # Invariants
///
/// `self.0` is a valid `sk_buff` that this value owns exclusively.
pub struct SkBuff(NonNull<kernel::bindings::sk_buff>);

// SAFETY: an owned skb may be handed to and freed from any thread.
unsafe impl Send for SkBuff {}

impl SkBuff {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` must be a valid socket buffer that the caller owns and gives up.
    pub(crate) unsafe fn from_raw(skb: *mut kernel::bindings::sk_buff) -> Self {
        // INVARIANT: valid and owned, by the caller's guarantee; a valid skb
        // pointer is not null.
        // SAFETY: as above.
        Self(unsafe { NonNull::new_unchecked(skb) })
    }

    /// Gives up ownership, returning the raw pointer.
    pub(crate) fn into_raw(self) -> *mut kernel::bindings::sk_buff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }

    fn as_raw(&self) -> *mut kernel::bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Bytes of the frame, head and fragments.
    pub fn len(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant); `len` is a plain field.
        unsafe { (*self.as_raw()).len }
    }

    /// Appends `data` to the linear part. The skb must have been allocated
    /// with room for it (see [`crate::net::napi::Napi::alloc_skb`]).
    pub fn put_data(&mut self, data: &[u8]) -> Result {
        // SAFETY: the skb is valid and ours (type invariant).
        let tailroom = unsafe { ffi::pagefill_skb_tailroom(self.as_raw()) };
        if usize::try_from(tailroom).map_or(true, |t| t < data.len()) {
            return Err(EINVAL);
        }
        // SAFETY: checked above that the data fits the tailroom.
        unsafe {
            ffi::pagefill_skb_put_data(self.as_raw(), data.as_ptr().cast(), data.len() as u32)
        };
        Ok(())
    }

    /// Sets the protocol from the Ethernet header and strips it, as a
    /// received frame on `dev` needs before it goes to the stack.
    pub fn eth_type_trans<T: Operations>(&mut self, dev: &Device<T>) {
        // SAFETY: the skb is ours and holds at least an Ethernet header
        // (the receive path checks the length); `dev` is registered.
        unsafe { ffi::pagefill_skb_eth_type_trans(self.as_raw(), dev.as_raw()) }
    }

    /// Sets the frame's flow hash, as the device computed it: the stack
    /// then need not compute one (RPS, RFS, flow dissection).
    /// [`RxHash::NONE`] leaves the skb without one.
    pub fn set_hash(&mut self, hash: RxHash) {
        if hash.is_none() {
            return;
        }
        // SAFETY: `self` owns a valid skb (type invariant).
        unsafe { ffi::pagefill_skb_set_hash(self.as_raw(), hash.value(), hash.rss_type()) }
    }

    /// Marks the frame's checksum as checked by the device, so the stack
    /// does not check it again (`CHECKSUM_UNNECESSARY`).
    pub fn set_csum_unnecessary(&mut self) {
        // SAFETY: the skb is ours (type invariant).
        unsafe { ffi::pagefill_skb_csum_unnecessary(self.as_raw()) }
    }

    /// Makes the frame, a UDP datagram whose header starts `udp_offset`
    /// bytes into it, one that stands for `segs` datagrams of `gso_size`
    /// payload bytes each (the last may be shorter): the stack hands it
    /// whole to a socket that takes such (`UDP_GRO`) and splits it for any
    /// other. Its UDP checksum field must hold the pseudo-header sum of the
    /// merged datagram; the payload counts as checked (`CHECKSUM_PARTIAL`).
    pub fn set_udp_gso(&mut self, udp_offset: u16, gso_size: u16, segs: u16) -> Result {
        // SAFETY: the skb is ours (type invariant); the helper checks that
        // the checksum field lies in the linear part.
        to_result(unsafe { ffi::pagefill_skb_udp_gso(self.as_raw(), udp_offset, gso_size, segs) })
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The transmit queue the stack picked for the frame.
    pub fn queue_mapping(&self) -> u16 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { ffi::pagefill_skb_queue_mapping(self.as_raw()) }
    }

    /// The linear part of the frame (all of it once linearised).
    pub fn head(&self) -> &[u8] {
        let mut len = 0;
        // SAFETY: the skb is ours (type invariant); its linear part is
        // `len` readable bytes at the returned address while we hold it.
        unsafe {
            let data = ffi::pagefill_skb_head(self.as_raw(), &mut len);
            core::slice::from_raw_parts(data, len as usize)
        }
    }

    /// Appends bytes `range` of `buf` as the skb's next fragment, without a
    /// copy. The skb takes a pool reference of its own to the buffer and is
    /// marked for page_pool recycling, so the buffer goes back to its pool
    /// when the last skb holding part of it is freed. `truesize` is the
    /// memory the fragment accounts for (at least its length).
    pub fn add_pool_frag(
        &mut self,
        buf: &PoolPage,
        range: core::ops::Range<usize>,
        truesize: u32,
    ) -> Result {
        if range.start > range.end || range.end > buf.len() {
            return Err(EINVAL);
        }
        let len = u32::try_from(range.end - range.start)?;
        let off = u32::try_from(range.start)?;
        if truesize < len {
            return Err(EINVAL);
        }
        // SAFETY: the skb is ours (type invariant); `buf` is a live pool
        // buffer and the fragment lies inside it (checked above); the helper
        // takes the reference the fragment needs before attaching it.
        to_result(unsafe {
            ffi::pagefill_skb_add_pool_frag(self.as_raw(), buf.as_raw(), off, len, truesize)
        })
    }
}

impl SkBuff {
    /// Makes the frame one linear buffer (pulls the fragments in).
    pub fn linearize(&mut self) -> Result {
        // SAFETY: the skb is ours (type invariant).
        to_result(unsafe { ffi::pagefill_skb_linearize(self.as_raw()) })
    }

    /// Page fragments after the linear part.
    pub fn nr_frags(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant).
        unsafe { ffi::pagefill_skb_nr_frags(self.as_raw()) }
    }

    /// Where a checksum the stack left to the device starts in the frame
    /// and where it goes from there (`CHECKSUM_PARTIAL`), if it did.
    pub fn csum_partial(&self) -> Option<(u32, u32)> {
        let (mut start, mut offset) = (0, 0);
        // SAFETY: the skb is valid (type invariant); the out-parameters are
        // plain integers.
        unsafe { ffi::pagefill_skb_csum_partial(self.as_raw(), &mut start, &mut offset) }
            .then_some((start, offset))
    }

    /// Computes a checksum the stack left partial in software.
    pub fn checksum_help(&mut self) -> Result {
        // SAFETY: the skb is ours (type invariant).
        to_result(unsafe { ffi::pagefill_skb_checksum_help(self.as_raw()) })
    }

    /// Maps the frame for `dev`'s device to read: the linear part and each
    /// fragment, in order, as at most [`TX_MAX_PARTS`] parts. On failure the
    /// skb comes back unmapped (too many fragments: linearize first).
    pub fn map_for_tx<T: Operations>(self, dev: &Device<T>) -> Result<TxMapped, (Error, Self)> {
        let frags = self.nr_frags() as usize;
        if frags + 1 > TX_MAX_PARTS {
            return Err((EMSGSIZE, self));
        }
        let len = self.len();
        let mut frame = TxMapped {
            skb: core::mem::ManuallyDrop::new(self),
            parts: TxParts::new(),
            len,
        };
        let mut dma = 0;
        // SAFETY: the skb is ours; `dev` is registered, its parent the bound
        // DMA device. The mapping covers the linear part, `headlen` bytes.
        let ret = unsafe { ffi::pagefill_tx_map(dev.as_raw(), frame.skb.as_raw(), &mut dma) };
        if ret != 0 {
            return Err((Error::from_errno(ret), frame.into_skb()));
        }
        let head = len - frame.skb.data_len();
        // SAFETY: mapped above as a single buffer, for `dev`, `head` bytes;
        // the first part, of at most `TX_MAX_PARTS` (checked above).
        unsafe { frame.parts.push_mapped(dma, head, TxMapping::Single) };
        for i in 0..frags as u32 {
            let (mut dma, mut flen) = (0, 0);
            // SAFETY: as above, for fragment `i` (< nr_frags).
            let ret = unsafe {
                ffi::pagefill_tx_map_frag(dev.as_raw(), frame.skb.as_raw(), i, &mut dma, &mut flen)
            };
            if ret != 0 {
                // SAFETY: mapped above for `dev`, and never shown to it.
                unsafe { frame.parts.unmap(dev) };
                return Err((Error::from_errno(ret), frame.into_skb()));
            }
            // SAFETY: mapped above as a page, for `dev`, `flen` bytes; at
            // most `TX_MAX_PARTS` parts (checked above).
            unsafe { frame.parts.push_mapped(dma, flen, TxMapping::Page) };
        }
        // INVARIANT: every part recorded was mapped above, for `dev`.
        Ok(frame)
    }

    /// Bytes in the fragments (`len` less the linear part).
    fn data_len(&self) -> u32 {
        // SAFETY: the skb is valid (type invariant); a plain field.
        unsafe { (*self.as_raw()).data_len }
    }
}

/// Most page fragments an skb holds.
pub const MAX_FRAGS: usize = kernel::bindings::MAX_SKB_FRAGS as usize;

/// Most parts (the linear part and fragments) a frame is mapped in.
pub const TX_MAX_PARTS: usize = 5;

/// How a part of a frame was mapped for the device, and so how it is
/// unmapped.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TxMapping {
    /// As a single buffer: an skb's linear part, a redirected frame's first
    /// buffer.
    Single,
    /// As a page: an skb's or a redirected frame's fragment.
    Page,
    /// By the page pool the buffer belongs to, for as long as the pool has
    /// it, and synced for the device: nothing to unmap (`XDP_TX`).
    Pool,
}

/// One mapped part of a frame.
#[derive(Clone, Copy)]
struct TxPart {
    dma: u64,
    len: u32,
    mapping: TxMapping,
}

/// The mappings of one frame's parts for a device to read, in order: an
/// skb's, or an XDP frame's in several buffers.
///
/// # Invariants
///
/// `parts[..n]` are live mappings, for reading, of the parent device of one
/// network device, each made as its `mapping` says.
pub struct TxParts {
    /// Written up to `n`: a frame's parts are recorded once each, and the
    /// rest is never read.
    parts: [core::mem::MaybeUninit<TxPart>; TX_MAX_PARTS],
    n: usize,
}

impl TxParts {
    // Inlined, as the transmit paths' other steps: at the kernel's
    // opt-level "s" rustc would call each, for more than its work.

    /// No part.
    #[inline]
    pub const fn new() -> Self {
        Self {
            parts: [const { core::mem::MaybeUninit::uninit() }; TX_MAX_PARTS],
            n: 0,
        }
    }

    /// The parts recorded.
    #[inline]
    fn live(&self) -> &[TxPart] {
        let live = &self.parts[..self.n.min(TX_MAX_PARTS)];
        // SAFETY: the first `n` entries were written by `push_mapped`, and
        // `MaybeUninit<TxPart>` has `TxPart`'s layout.
        unsafe { core::slice::from_raw_parts(live.as_ptr().cast::<TxPart>(), live.len()) }
    }

    /// Records the next part; `false` (and nothing recorded) if the frame
    /// has [`TX_MAX_PARTS`] already.
    ///
    /// # Safety
    ///
    /// `dma` maps `len` bytes for the parent of the network device the other
    /// parts were mapped for, to read, as `mapping` says; only this value
    /// unmaps it, and a [`TxMapping::Pool`] part stays mapped while the
    /// value exists (its buffer belongs to the frame).
    #[inline]
    pub unsafe fn push_mapped(&mut self, dma: u64, len: u32, mapping: TxMapping) -> bool {
        let Some(slot) = self.parts.get_mut(self.n) else {
            return false;
        };
        // INVARIANT: the caller's guarantee.
        slot.write(TxPart { dma, len, mapping });
        self.n += 1;
        true
    }

    /// Part `i`, as (DMA address, length); an empty part (a linear part
    /// with nothing in it) included.
    #[inline]
    pub fn get(&self, i: usize) -> Option<(u64, u32)> {
        self.live().get(i).map(|p| (p.dma, p.len))
    }

    /// How many parts have bytes in them.
    #[inline]
    pub fn nonempty(&self) -> usize {
        let mut n = 0;
        for p in self.live() {
            n += usize::from(p.len > 0);
        }
        n
    }

    /// How many parts there are.
    #[inline]
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there is no part.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Bytes in all parts.
    #[inline]
    pub fn bytes(&self) -> u32 {
        let mut bytes = 0u32;
        for p in self.live() {
            bytes = bytes.wrapping_add(p.len);
        }
        bytes
    }

    /// Unmaps every part from `dev`'s parent.
    ///
    /// # Safety
    ///
    /// The parts were mapped for `dev`, and the device will not read them
    /// again: it never saw them, it reported them done, or it was reset.
    pub unsafe fn unmap<T: Operations>(&mut self, dev: &Device<T>) {
        for p in self.live() {
            // SAFETY: mapped for `dev`'s parent with this address and
            // length, as `mapping` says (type invariant, and the caller's
            // guarantee of the device); not read any more (the caller's
            // guarantee).
            unsafe {
                match p.mapping {
                    TxMapping::Page => ffi::pagefill_tx_unmap_frag(dev.as_raw(), p.dma, p.len),
                    TxMapping::Single => ffi::pagefill_tx_unmap(dev.as_raw(), p.dma, p.len),
                    TxMapping::Pool => (),
                }
            };
        }
        // INVARIANT: none left mapped.
        self.n = 0;
    }
}

impl Default for TxParts {
    fn default() -> Self {
        Self::new()
    }
}

/// An skb whose linear part and fragments are mapped for the device to
/// read.
///
/// # Invariants
///
/// `parts[..n]` are mappings of the skb's linear part (first) and of its
/// fragments, for the parent device of the network device they were mapped
/// for; `len` is the frame's length.
pub struct TxMapped {
    skb: core::mem::ManuallyDrop<SkBuff>,
    parts: TxParts,
    len: u32,
}

impl TxMapped {
    /// The frame's parts, in order; an skb's empty linear part included.
    #[inline]
    pub fn parts(&self) -> &TxParts {
        &self.parts
    }

    /// The frame's length.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The skb back, every mapping undone (the caller did).
    fn into_skb(mut self) -> SkBuff {
        // SAFETY: taken once; `self` is forgotten below so `Drop` does not
        // see the taken value.
        let skb = unsafe { core::mem::ManuallyDrop::take(&mut self.skb) };
        core::mem::forget(self);
        skb
    }

    /// Unmaps the frame from `dev` (the device it was mapped for) and frees
    /// the skb.
    ///
    /// # Safety
    ///
    /// The device will not read the frame again: it never saw it, it
    /// reported it done, or it was reset.
    pub unsafe fn unmap<T: Operations>(mut self, dev: &Device<T>) {
        // SAFETY: mapped for `dev` (type invariant); not read any more (the
        // caller's guarantee).
        unsafe { self.parts.unmap(dev) };
        drop(self.into_skb());
    }

    /// Gives up the frame for good: the device may still read it (a reset
    /// that failed). The mappings and the skb stay, and kmemleak is told
    /// the skb is no leak: nothing points at it any more, and a scan that
    /// finds no stale copy of its address would report it.
    pub fn leak(self) {
        // SAFETY: the skb is live and ours (type invariant); marking it for
        // kmemleak changes nothing of it.
        unsafe { ffi::pagefill_skb_abandon(self.skb.as_raw()) };
        core::mem::forget(self);
    }
}

impl Drop for TxMapped {
    fn drop(&mut self) {
        // Dropped without `unmap` or `leak`: a driver bug. Freeing memory
        // the device may still read is worse than leaking it, so leak
        // (kmemleak and the DMA API debugging will say so) and warn, once.
        static WARNED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
        kernel::warn_on!(!WARNED.swap(true, core::sync::atomic::Ordering::Relaxed));
    }
}

impl Drop for SkBuff {
    fn drop(&mut self) {
        // SAFETY: we own the skb (type invariant); this context may be any,
        // which `dev_kfree_skb_any` handles.
        unsafe { ffi::pagefill_dev_kfree_skb_any(self.as_raw()) }
    }
}
