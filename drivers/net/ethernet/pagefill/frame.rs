// SPDX-License-Identifier: GPL-2.0

//! Frame sizes: the MTU's bounds, and which buffers hold a frame of an MTU
//! (a receive buffer with its record header, an XDP buffer with XDP's
//! headroom and tailroom, an AF_XDP socket's buffers). Ethtool, the
//! interface's operations and the receive paths check against the same
//! rules.

use crate::abi;
use crate::net::page_pool::PagePool;
use crate::net::xdp;

/// Largest MTU: a frame of the largest size the fabric carries, less the
/// Ethernet header. Buffers grow to hold such a frame (`change_mtu`).
pub(crate) const MAX_MTU: u32 = (abi::MAX_FRAME_LEN - ETH_HLEN) as u32;

/// The MTU an interface starts with.
pub(crate) const DEFAULT_MTU: u32 = 1500;

/// Bytes of an Ethernet header.
pub(crate) const ETH_HLEN: usize = 14;

/// Most buffers of an AF_XDP socket's umem a frame spans in zero-copy mode,
/// for a socket that takes frames in several (`XDP_USE_SG`): received as
/// the device's chunks of one frame, sent as descriptors of one frame
/// (the device takes up to 32).
pub(crate) const XSK_MAX_SEGS: u32 = 8;

const _: () = assert!(XSK_MAX_SEGS as usize <= abi::chunk_list::MAX_CHUNKS);

/// Whether a frame of an `mtu`-byte payload fits an AF_XDP socket's
/// buffers with `room` bytes for a frame: one, or [`XSK_MAX_SEGS`] for a
/// socket that takes frames in several (`frags`).
pub(crate) fn xsk_fits(mtu: u32, room: u32, frags: bool) -> bool {
    let segs = if frags { XSK_MAX_SEGS } else { 1 };
    mtu.saturating_add(ETH_HLEN as u32) <= room.saturating_mul(segs)
}

/// Whether a frame of an `mtu`-byte payload fits a 2^`buf_shift` buffer
/// with its record header.
pub(crate) fn mtu_fits(mtu: u32, buf_shift: u32) -> bool {
    abi::record::size(mtu as usize + ETH_HLEN) <= 1 << buf_shift
}

/// Whether an XDP program can see a frame of an `mtu`-byte payload, with
/// the headroom and tailroom XDP promises it, in one buffer of a pool of
/// 2^`buf_shift`-byte buffers (at least a page each).
pub(crate) fn xdp_fits(mtu: u32, buf_shift: u32) -> bool {
    let buf = 1usize << buf_shift.max(kernel::page::PAGE_SHIFT as u32);
    xdp::HEADROOM + mtu as usize + ETH_HLEN + xdp::TAILROOM <= buf
}

/// Whether a program that takes frames in several buffers (`xdp.frags`)
/// can see a frame of an `mtu`-byte payload: in one buffer and at most
/// [`xdp::MAX_FRAGS`] more.
pub(crate) fn xdp_frags_fit(mtu: u32, buf_shift: u32) -> bool {
    let buf = 1usize << buf_shift.max(kernel::page::PAGE_SHIFT as u32);
    xdp::HEADROOM + mtu as usize + ETH_HLEN + xdp::TAILROOM <= buf * (1 + xdp::MAX_FRAGS)
}

/// Largest buffer size (as a power of two) a page pool serves.
pub(crate) const MAX_POOL_BUF_SHIFT: u32 = {
    let shift = kernel::page::PAGE_SHIFT as u32 + PagePool::MAX_ORDER;
    if shift < abi::MAX_BUF_SHIFT {
        shift
    } else {
        abi::MAX_BUF_SHIFT
    }
};

/// The smallest buffer size (as a power of two) that holds a frame of an
/// `mtu`-byte payload, if a pool can serve it.
pub(crate) fn buf_shift_for(mtu: u32) -> Option<u32> {
    (abi::MIN_BUF_SHIFT..=MAX_POOL_BUF_SHIFT).find(|s| mtu_fits(mtu, *s))
}

/// Full-sized frames a buffer holds by default.
///
/// Every buffer costs the driver a completion and a refill, and the device
/// a starvation round trip when it fills the posted one before the driver
/// posts the next: a stream of 1500-byte frames in one-page buffers needs a
/// new buffer every two frames and then costs more per frame than a NIC
/// with one descriptor per frame (benchmarks.rst). Sixteen frames make the
/// per-buffer costs small; short frames pack hundreds into the same buffer.
const DEFAULT_FRAMES_PER_BUF: usize = 16;

/// The buffer size (as a power of two) for MTU `mtu` when the user has not
/// chosen one: [`DEFAULT_FRAMES_PER_BUF`] full-sized frames, within what a
/// pool serves; a page at least. `None` if the largest a pool serves
/// cannot hold one frame.
pub(crate) fn default_buf_shift(mtu: u32) -> Option<u32> {
    let want = abi::record::size(mtu as usize + ETH_HLEN).saturating_mul(DEFAULT_FRAMES_PER_BUF);
    let shift = want
        .checked_next_power_of_two()
        .map_or(MAX_POOL_BUF_SHIFT, |b| b.trailing_zeros())
        .clamp(abi::MIN_BUF_SHIFT, MAX_POOL_BUF_SHIFT);
    // Only the clamp to the largest size can leave a frame out.
    mtu_fits(mtu, shift).then_some(shift)
}
