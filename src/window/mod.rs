//! Presenting to a window (feature `window`): a surface made with `ash-window` from any
//! `raw-window-handle` 0.6 window (winit 0.30's included), a swapchain that is recreated on
//! resize / `VK_ERROR_OUT_OF_DATE_KHR` / suboptimal, frames in flight with per-frame
//! command buffers, fences and semaphores (Vulkan spec §34.10 "WSI Swapchain"), and an
//! optional capture of a presented frame to host memory. A frame is one more submission on
//! the device's timeline, so what it uses may be dropped right after it (deferred
//! destruction); a frame that fails (its recording, its submission, the acquire or the
//! present) leaves the presenter usable for the next one.
//!
//! ```no_run
//! # fn demo(window: std::sync::Arc<winit::window::Window>) -> kiln::Result<()> {
//! let device = kiln::Device::with_desc(
//!     &kiln::DeviceDesc::default()
//!         .instance_extensions(kiln::window::surface_extensions(&*window)?),
//! )?;
//! let mut presenter = kiln::window::Presenter::new(&device, window.clone(), &Default::default())?;
//! let size = window.inner_size();
//! presenter.frame(&device, [size.width, size.height], |r, frame| {
//!     r.begin_rendering(&kiln::RenderingDesc::new(&[kiln::ColorAttachment::clear(
//!         frame.target,
//!         [0.1, 0.2, 0.3, 1.0],
//!     )]))?;
//!     r.end_rendering()?;
//!     Ok(())
//! })?;
//! # Ok(()) }
//! ```

mod frame_state;
mod slot;
mod swapchain;

use std::ffi::CStr;

use raw_window_handle::HasDisplayHandle;

use crate::error::{Error, Result};
pub use swapchain::{CapturedFrame, Frame, FrameStatus, Presenter, PresenterDesc};

pub(crate) fn surface_err(detail: impl std::fmt::Display) -> Error {
    Error::Surface {
        detail: detail.to_string(),
    }
}

/// The instance extensions a surface for this display needs (`VK_KHR_surface` plus the
/// platform's, e.g. `VK_KHR_xlib_surface`): put them in
/// [`DeviceDesc::instance_extensions`](crate::DeviceDesc::instance_extensions).
///
/// Errors: `KILN-E140` the display handle is unavailable or the platform unsupported.
pub fn surface_extensions(display: &impl HasDisplayHandle) -> Result<Vec<&'static CStr>> {
    let handle = display.display_handle().map_err(surface_err)?;
    let names = ash_window::enumerate_required_extensions(handle.as_raw()).map_err(|e| {
        surface_err(format!(
            "no Vulkan surface extension for this display ({e:?})"
        ))
    })?;
    Ok(names
        .iter()
        // SAFETY: ash-window returns pointers to ash's static, NUL-terminated extension
        // names (`&'static CStr::as_ptr`).
        .map(|&p| unsafe { CStr::from_ptr(p) })
        .collect())
}
