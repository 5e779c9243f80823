// SPDX-License-Identifier: GPL-2.0

//! Registering a network device.
//!
//! C header: [`include/linux/netdevice.h`](srctree/include/linux/netdevice.h)
//!
//! A [`Registration`] owns a registered Ethernet device: it allocates the
//! device with room for the driver's data and its restart work (see
//! [`super::restart`]) in the private area, initialises the data in place,
//! registers the device, and at drop unregisters it, waits for its restart
//! work and frees it.

use core::{marker::PhantomData, mem::size_of, ptr::NonNull};

use kernel::{
    device::{self, Bound},
    error::to_result,
    ffi::c_int,
    prelude::*,
    sync::Arc, //
};

use crate::ffi;
use crate::net::netdev::{Device, Features, Operations, OpsTable, NETDEV_ALIGN};
use crate::net::qstats::StatOpsTable;
use crate::net::restart::Restart;

/// Parameters of a new Ethernet device.
pub struct Config {
    /// Transmit queues.
    pub tx_queues: u32,
    /// Receive queues.
    pub rx_queues: u32,
    /// Transmit and receive queues in use at registration (at most
    /// `tx_queues` and `rx_queues`).
    pub real_queues: u32,
    /// Its MAC address.
    pub mac: [u8; 6],
    /// MTU at registration.
    pub mtu: u32,
    /// Smallest MTU the device accepts.
    pub min_mtu: u32,
    /// Largest MTU the device accepts.
    pub max_mtu: u32,
    /// Offloads the device offers, on at registration but for those in
    /// `features_off` (the user turns each on or off with `ethtool -K`).
    pub features: Features,
    /// Offloads of `features` off at registration.
    pub features_off: Features,
    /// The XDP actions the driver carries out (`xdp_features`).
    pub xdp_features: crate::net::xdp::Features,
    /// Most buffers a frame of an AF_XDP socket in zero-copy mode spans
    /// (`xdp_zc_max_segs`), received or sent; 1: a frame fits one.
    pub xsk_max_segs: u32,
    /// The core spreads the interrupts of the NAPI instances over the CPUs
    /// (`netif_set_affinity_auto()`), one each, and keeps a user's choice
    /// across restarts.
    pub irq_affinity_auto: bool,
}

/// The private area of a device with operations `T`.
#[repr(C)]
pub(super) struct Priv<T: Operations> {
    /// The restart work, if `T` restarts (see [`Operations::restart`]).
    pub(super) restart: Option<Arc<Restart<T>>>,
    pub(super) data: T::Data,
}

/// A registered Ethernet device with operations `T`; unregistered and freed
/// on drop. It starts with no carrier.
///
/// # Invariants
///
/// `dev` is a registered `net_device` allocated by `pagefill_alloc_etherdev` with
/// room for a `Priv<T>` in its private area, which holds an initialised
/// value until drop; its restart work, if any, is for `dev`.
pub struct Registration<T: Operations> {
    dev: NonNull<kernel::bindings::net_device>,
    _t: PhantomData<T>,
}

// SAFETY: the registration only unregisters and frees the device, which the
// networking core allows from any thread; `T::Data` is `Send + Sync`.
unsafe impl<T: Operations> Send for Registration<T> {}
// SAFETY: shared references only give out `&Device<T>`, whose methods are
// safe from any thread.
unsafe impl<T: Operations> Sync for Registration<T> {}

impl<T: Operations> Registration<T> {
    /// Stops `parent`, if it is a PCI device, mastering the bus
    /// (`pci_clear_master`): for probe, before it resets the device, as a
    /// previous owner (a crashed kernel's driver, before kdump) may have
    /// left the bit set with the device running.
    pub fn clear_bus_master(parent: &device::Device<Bound>) {
        // `device::Device` is `#[repr(transparent)]` over `bindings::device`.
        let raw = core::ptr::from_ref(parent)
            .cast::<kernel::bindings::device>()
            .cast_mut();
        // SAFETY: a bound device, valid for the call.
        unsafe { ffi::pagefill_clear_bus_master(raw) }
    }

    /// Allocates an Ethernet device under `parent`, initialises the driver's
    /// data in place and registers the device.
    pub fn new(
        parent: &device::Device<Bound>,
        cfg: &Config,
        data: impl PinInit<T::Data, Error>,
    ) -> Result<Self> {
        const { assert!(core::mem::align_of::<Priv<T>>() <= NETDEV_ALIGN) };
        let ops: &'static ffi::net_device_ops = &OpsTable::<T>::TABLE;
        // SAFETY: plain allocation, the result checked.
        let raw = unsafe {
            ffi::pagefill_alloc_etherdev(
                size_of::<Priv<T>>() as c_int,
                cfg.tx_queues,
                cfg.rx_queues,
            )
        };
        let dev = NonNull::new(raw).ok_or(ENOMEM)?;
        let restart = if T::HAS_RESTART {
            // SAFETY: `dev` was allocated for `T` here; its registration
            // disables the work before it frees it (`Self::destroy`).
            match unsafe { Restart::new(dev) } {
                Ok(restart) => Some(restart),
                Err(e) => {
                    // SAFETY: `raw` was allocated above and never
                    // registered.
                    unsafe { ffi::free_netdev(raw) };
                    return Err(e);
                }
            }
        } else {
            None
        };
        // SAFETY: the private area is `size_of::<Priv<T>>()` bytes aligned to
        // NETDEV_ALIGN (checked above against `Priv<T>`'s alignment).
        let priv_ptr = unsafe { ffi::pagefill_netdev_priv(raw) }.cast::<Priv<T>>();
        // SAFETY: `priv_ptr` is valid for writes of a `Priv<T>` and never
        // moves (the device does not move); on failure of the data's
        // initialiser only `restart` was written, and is dropped.
        if let Err(e) = unsafe {
            core::ptr::addr_of_mut!((*priv_ptr).restart).write(restart);
            data.__init(core::ptr::addr_of_mut!((*priv_ptr).data))
        } {
            // SAFETY: `raw` was allocated above and never registered: no
            // restart was asked for, and nobody else can reach it.
            unsafe {
                core::ptr::drop_in_place(core::ptr::addr_of_mut!((*priv_ptr).restart));
                ffi::free_netdev(raw);
            }
            return Err(e);
        }
        // `device::Device` is `#[repr(transparent)]` over `bindings::device`.
        let parent_raw = core::ptr::from_ref(parent)
            .cast::<kernel::bindings::device>()
            .cast_mut();
        // SAFETY: `raw` is a valid, unregistered device that we own;
        // `parent` is a bound device that outlives the registration (the
        // driver drops it at unbind at the latest); `ops` is static and `mac`
        // is read during the call only.
        unsafe {
            ffi::pagefill_netdev_setup(
                raw,
                parent_raw,
                ops,
                T::ETHTOOL.map_or(core::ptr::null(), |e| core::ptr::from_ref(e).cast()),
                if T::HAS_QUEUE_STATS_RX {
                    core::ptr::from_ref(&StatOpsTable::<T>::TABLE)
                } else {
                    core::ptr::null()
                },
                cfg.features.0,
                cfg.features_off.0,
                cfg.mac.as_ptr(),
                cfg.mtu,
                cfg.min_mtu,
                cfg.max_mtu,
                cfg.xdp_features.bits(),
                cfg.xsk_max_segs.max(1),
            )
        };
        // A new interface has no carrier until the driver says the link is up.
        // SAFETY: the device is valid and not registered yet.
        unsafe { ffi::netif_carrier_off(raw) };
        if cfg.irq_affinity_auto {
            // SAFETY: the device is valid and not registered yet; its NAPI
            // configs were allocated with it.
            unsafe { ffi::netif_set_affinity_auto(raw) };
        }
        // SAFETY: the device is valid and not registered yet (so RTNL is not
        // needed); the counts are checked against its queues by the callee.
        let queues = to_result(unsafe {
            ffi::netif_set_real_num_queues(raw, cfg.real_queues, cfg.real_queues)
        });
        let registered = queues.and_then(|()| {
            // SAFETY: the device is fully set up and not registered yet.
            to_result(unsafe { ffi::register_netdev(raw) })
        });
        if let Err(e) = registered {
            // SAFETY: the private area is initialised; setting the queue
            // count failed before registration, or `register_netdev`
            // failed and undid what it did (notifiers told of the
            // unregistration, the device unlisted): the device is not
            // registered and nobody else holds it.
            unsafe { Self::destroy(raw) };
            return Err(e);
        }
        // INVARIANT: allocated with room for `T::Data`, initialised and
        // registered above.
        Ok(Self {
            dev,
            _t: PhantomData,
        })
    }

    /// The registered device.
    pub fn device(&self) -> &Device<T> {
        // SAFETY: by the type invariant the device is registered for `T` and
        // lives as long as `self`.
        unsafe { Device::from_raw(self.dev.as_ptr()) }
    }
}

impl<T: Operations> Registration<T> {
    /// Waits for the restart work, then drops the private area and frees
    /// the device.
    ///
    /// # Safety
    ///
    /// `raw` was allocated by [`Self::new`] for `T`, its private area
    /// initialised; it is not registered, and nothing else uses it.
    unsafe fn destroy(raw: *mut kernel::bindings::net_device) {
        // SAFETY: the private area holds an initialised `Priv<T>` (the
        // caller's guarantee).
        let priv_ptr = unsafe { ffi::pagefill_netdev_priv(raw) }.cast::<Priv<T>>();
        // SAFETY: as above; only shared references are made until the drop.
        if let Some(restart) = unsafe { &(*priv_ptr).restart } {
            Restart::<T>::disable_sync(restart);
        }
        // A NAPI instance still added to the device may still poll, with a
        // reference to the data: a driver whose `stop` left one gets its
        // data and device leaked (and a warning), not freed under a poll.
        // SAFETY: the device is valid until freed below.
        if unsafe { ffi::pagefill_netdev_has_napi(raw) } {
            kernel::warn_on!(true);
            return;
        }
        // SAFETY: unregistered, no restart queued or running, nothing polls
        // and no operation runs: the private area can be dropped, and the
        // device freed.
        unsafe {
            core::ptr::drop_in_place(priv_ptr);
            ffi::free_netdev(raw);
        }
    }
}

impl<T: Operations> Drop for Registration<T> {
    fn drop(&mut self) {
        let raw = self.dev.as_ptr();
        // SAFETY: the device is registered (type invariant). Unregistering
        // stops it (ndo_stop) and waits until no operation runs; a restart
        // queued meanwhile finds it down.
        unsafe { ffi::unregister_netdev(raw) };
        // SAFETY: allocated by `new` for `T`, its private area initialised
        // (type invariant), now unregistered; this registration was its only
        // owner.
        unsafe { Self::destroy(raw) };
    }
}
