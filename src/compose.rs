//! The composition root: a [`Device`] made of every layer. The `device` layer creates the
//! device, then each layer above registers its per-device state as layer slots, bottom-up
//! (see the docs of `device::slots`). This module sits above every layer (`cargo xtask
//! layers`: `compose` is the top), so it is the one place that names them all.

use std::sync::Arc;

use crate::device::{Device, DeviceDesc, Shared};
use crate::error::Result;

impl Device {
    /// Creates a device with default options (see [`DeviceDesc`]).
    ///
    /// Errors: `KILN-E100` no loader, `KILN-E101` no driver/device, `KILN-E102`
    /// `KILN_DEVICE` matched nothing, `KILN-E103` no compute queue, `KILN-E107` no
    /// synchronization2 or timeline semaphores (Vulkan 1.3), `KILN-E104` other Vulkan
    /// failures.
    pub fn new() -> Result<Device> {
        Self::with_desc(&DeviceDesc::default())
    }

    /// Creates a device with explicit options (errors: as [`new`](Self::new)).
    pub fn with_desc(desc: &DeviceDesc) -> Result<Device> {
        let mut shared = Shared::create(desc)?;
        // Breadcrumbs' marker rings (`device::breadcrumbs`), when on.
        shared.create_marker_rings()?;
        // Every layer's per-device state, bottom-up (see `device::slots`). On an error the
        // device is torn down like any other.
        crate::descriptors::register_slots(&mut shared)?;
        crate::pipeline::register_slots(&mut shared)?;
        crate::queue::register_slots(&mut shared)?;
        crate::transfer::register_slots(&mut shared, desc)?;
        // `KILN_CAPTURE`'s RenderDoc capture (`device/capture.rs`), last: ended first.
        crate::device::register_run_capture(&mut shared)?;
        Ok(Device {
            shared: Arc::new(shared),
        })
    }
}
