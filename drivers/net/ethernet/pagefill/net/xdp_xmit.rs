// SPDX-License-Identifier: GPL-2.0

//! Frames that XDP programs elsewhere redirect to a device
//! (`ndo_xdp_xmit`).
//!
//! C header: [`include/net/xdp.h`](srctree/include/net/xdp.h)
//!
//! The core offers a driver an array of frames and is told how many it
//! took: [`XmitFrames`] hands them over one at a time, each an owned
//! [`XdpFrame`], so that the count is the frames the driver owns. A frame
//! mapped for the device to read is an [`XdpFrameTx`], given back only by
//! its `unsafe` `unmap`.

use core::{ptr::NonNull, sync::atomic::Ordering};

use kernel::{ffi::c_int, prelude::*};

use crate::ffi;
use crate::net::netdev::{Device, Operations};
use crate::net::skb::{TxMapping, TxParts, TX_MAX_PARTS};

/// A frame an XDP program elsewhere redirected to this device, owned: when
/// dropped, it goes back to the owner of its memory (`xdp_return_frame`).
///
/// # Invariants
///
/// `frame` is a live frame this value owns, whose `len` bytes at `data` the
/// CPU may read.
pub struct XdpFrame {
    frame: NonNull<ffi::xdp_frame>,
}

// SAFETY: a frame may be sent and returned from any CPU.
unsafe impl Send for XdpFrame {}

impl XdpFrame {
    /// The frame's bytes.
    pub fn data(&self) -> &[u8] {
        // SAFETY: a live, owned frame (type invariant), whose `len` bytes
        // at `data` nobody writes while it is in flight.
        unsafe {
            let f = self.frame.as_ptr();
            core::slice::from_raw_parts(
                ffi::pagefill_xdp_frame_data(f).cast(),
                ffi::pagefill_xdp_frame_len(f) as usize,
            )
        }
    }

    /// The frame's fragments beyond [`Self::data`] (multi-buffer XDP).
    pub fn nr_frags(&self) -> usize {
        // SAFETY: a live frame (type invariant).
        unsafe { ffi::pagefill_xdp_frame_nr_frags(self.frame.as_ptr()) as usize }
    }

    /// The frame's length, its first buffer and its fragments.
    pub fn total_len(&self) -> usize {
        // SAFETY: a live frame (type invariant).
        unsafe { ffi::pagefill_xdp_get_frame_len(self.frame.as_ptr()) as usize }
    }

    /// Maps the frame, its first buffer and each fragment, for `dev`'s
    /// parent to read; the frame back if a mapping failed, or if it has more
    /// parts than [`TX_MAX_PARTS`].
    pub fn map_for_tx<T: Operations>(
        self,
        dev: &Device<T>,
    ) -> core::result::Result<XdpFrameTx, Self> {
        let frags = self.nr_frags();
        if frags + 1 > TX_MAX_PARTS {
            return Err(self);
        }
        let len = self.data().len() as u32;
        let mut parts = TxParts::new();
        let mut dma = 0;
        // SAFETY: the device is registered, its parent bound; the frame is
        // live and owned (type invariant), and stays so while mapped (the
        // mapping owns it).
        if unsafe { ffi::pagefill_xdp_frame_map(dev.as_raw(), self.frame.as_ptr(), &mut dma) } != 0
        {
            return Err(self);
        }
        // SAFETY: mapped above as a single buffer, for `dev`, to read; the
        // first of at most `TX_MAX_PARTS` parts (checked above).
        unsafe { parts.push_mapped(dma, len, TxMapping::Single) };
        for i in 0..frags as u32 {
            let (mut dma, mut flen) = (0, 0);
            // SAFETY: as above, for fragment `i` (< its fragments).
            let r = unsafe {
                ffi::pagefill_xdp_frame_frag_map(
                    dev.as_raw(),
                    self.frame.as_ptr(),
                    i,
                    &mut dma,
                    &mut flen,
                )
            };
            if r != 0 {
                // SAFETY: mapped above for `dev`, and never shown to it.
                unsafe { parts.unmap(dev) };
                return Err(self);
            }
            // SAFETY: mapped above as a page, for `dev`, to read; at most
            // `TX_MAX_PARTS` parts (checked above).
            unsafe { parts.push_mapped(dma, flen, TxMapping::Page) };
        }
        // INVARIANT: every part of the frame mapped above, for reading.
        Ok(XdpFrameTx {
            frame: core::mem::ManuallyDrop::new(self),
            parts,
        })
    }
}

impl Drop for XdpFrame {
    fn drop(&mut self) {
        // SAFETY: owned (type invariant), given back once.
        unsafe { ffi::pagefill_xdp_return_frame(self.frame.as_ptr()) }
    }
}

/// A redirected frame mapped for the device to read. As for
/// [`super::xdp::XdpTxFrame`], only the `unsafe` [`Self::unmap`] gives it back.
///
/// # Invariants
///
/// `parts` maps `frame`'s first buffer and its fragments, in order, for the
/// parent of the network device it was mapped for, to read.
pub struct XdpFrameTx {
    frame: core::mem::ManuallyDrop<XdpFrame>,
    parts: TxParts,
}

impl XdpFrameTx {
    /// The frame's parts, in order.
    #[inline]
    pub fn parts(&self) -> &TxParts {
        &self.parts
    }

    /// The frame's length.
    pub fn len(&self) -> u32 {
        self.parts.bytes()
    }

    /// Whether the frame is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Unmaps the frame and gives it back.
    ///
    /// # Safety
    ///
    /// The device does not read the frame any more: it reported it sent, it
    /// was reset, or it never saw the frame's descriptors.
    pub unsafe fn unmap<T: Operations>(self, dev: &Device<T>) -> XdpFrame {
        let mut this = core::mem::ManuallyDrop::new(self);
        // SAFETY: mapped for `dev`'s parent (type invariant); the device is
        // done (the caller's guarantee).
        unsafe { this.parts.unmap(dev) };
        // SAFETY: `frame` is taken once, and `this` is not dropped.
        unsafe { core::mem::ManuallyDrop::take(&mut this.frame) }
    }

    /// Gives up the frame for good: the device may still read it (a reset
    /// that failed). The mappings and the frame stay.
    pub fn leak(self) {
        core::mem::forget(self);
    }
}

impl Drop for XdpFrameTx {
    fn drop(&mut self) {
        // As for `XdpTxFrame`: a driver bug, the frame leaked, warned once.
        static WARNED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
        kernel::warn_on!(!WARNED.swap(true, Ordering::Relaxed));
    }
}

/// The frames of one `ndo_xdp_xmit` call, taken by the driver in order. The
/// frames it does not take stay the caller's, who drops them (and counts
/// them as the target's drops).
pub struct XmitFrames<'a> {
    frames: &'a [*mut ffi::xdp_frame],
    taken: usize,
}

impl XmitFrames<'_> {
    /// Frames not taken yet.
    pub fn remaining(&self) -> usize {
        self.frames.len() - self.taken
    }

    /// Gives the frames, in order, to `send`, until `send` gives one back
    /// (it cannot take it: that one and those after stay the caller's) or
    /// none is left.
    pub fn send_each(
        &mut self,
        mut send: impl FnMut(XdpFrame) -> core::result::Result<(), XdpFrame>,
    ) {
        while let Some(&raw) = self.frames.get(self.taken) {
            let Some(frame) = NonNull::new(raw) else {
                return;
            };
            // INVARIANT: the caller moved the frame into the call, and it is
            // taken once: `taken` passes it whatever `send` does with it.
            match send(XdpFrame { frame }) {
                Ok(()) => self.taken += 1,
                Err(back) if back.frame == frame => {
                    // The caller's again: not dropped here.
                    core::mem::forget(back);
                    return;
                }
                Err(other) => {
                    // `send` kept the frame it was given and gave back
                    // another it owned: that one is dropped, and the
                    // frame counts as taken.
                    drop(other);
                    self.taken += 1;
                }
            }
        }
    }
}

/// `ndo_xdp_xmit` of `T`.
///
/// # Safety
///
/// `dev` must be a device registered for `T` and `frames` an array of `n`
/// frames whose ownership the caller offers; the core calls it with bottom
/// halves off, in an RCU read-side critical section.
pub(crate) unsafe extern "C" fn ndo_xdp_xmit<T: Operations>(
    dev: *mut kernel::bindings::net_device,
    n: c_int,
    frames: *mut *mut ffi::xdp_frame,
    flags: u32,
) -> c_int {
    let flush = ffi::pagefill_xdp_xmit_flags_PAGEFILL_XDP_XMIT_FLUSH;
    let Ok(n) = usize::try_from(n) else {
        return EINVAL.to_errno();
    };
    if flags & !flush != 0 || frames.is_null() {
        return EINVAL.to_errno();
    }
    // SAFETY: the core calls `ndo_xdp_xmit` with a registered device and
    // `n` frames, which stay put for the call.
    let (dev, frames) = unsafe {
        (
            Device::<T>::from_raw(dev),
            core::slice::from_raw_parts(frames, n),
        )
    };
    let mut batch = XmitFrames { frames, taken: 0 };
    let r = T::xdp_xmit(dev, &mut batch, flags & flush != 0);
    // The frames taken are the driver's whatever it says: an error is only
    // an error where none was taken (the caller then drops them all).
    match r {
        Err(e) if batch.taken == 0 => e.to_errno(),
        _ => batch.taken as c_int,
    }
}
