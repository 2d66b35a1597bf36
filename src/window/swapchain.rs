//! Surface, swapchain and frames in flight.

use std::any::Any;
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;
use raw_window_handle::{HasDisplayHandle, HasWindowHandle};

use super::frame_state::{marks_stale, needs_recreate, SwapchainChoice};
use super::slot::{wait_fence, Slot};
use super::surface_err;
use crate::commands::{RecordedWork, Recorder};
use crate::device::{Buffer, BufferDesc, Device, FaultSite, Image, Queue, Shared};
use crate::error::{vk_device_err, vk_err, DeviceError, Error, Result};
use crate::queue::{self, Batch, RecordOptions};

/// Options for [`Presenter::new`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PresenterDesc {
    /// Frames the CPU may record ahead of the GPU (each has its own command buffer, fence
    /// and acquire semaphore). At least 1.
    pub frames_in_flight: usize,
    /// FIFO (true) or the lowest-latency mode available (MAILBOX, else IMMEDIATE).
    pub vsync: bool,
    /// Surface formats in order of preference; the first supported one is used, else the
    /// surface's first.
    pub preferred_formats: Vec<vk::Format>,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { PresenterDesc {
    frames_in_flight: usize,
    vsync: bool,
    preferred_formats: Vec<vk::Format>,
} }

impl Default for PresenterDesc {
    fn default() -> Self {
        PresenterDesc {
            frames_in_flight: 2,
            vsync: true,
            preferred_formats: vec![vk::Format::B8G8R8A8_UNORM, vk::Format::R8G8B8A8_UNORM],
        }
    }
}

/// What [`Presenter::frame`] hands the recording closure.
pub struct Frame<'f> {
    /// The swapchain image to render to, already in COLOR_ATTACHMENT_OPTIMAL.
    pub target: &'f Image,
    /// Frame-in-flight slot (0..frames_in_flight): index per-frame resources with it.
    pub slot: usize,
    /// Swapchain extent (equal to the target's).
    pub extent: vk::Extent2D,
}

/// What happened to a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FrameStatus {
    /// Rendered and queued for presentation.
    Presented,
    /// Presented, but the swapchain no longer matches the surface exactly; it is recreated
    /// before the next frame.
    Suboptimal,
    /// Nothing drawn: the window has a zero extent (minimised).
    Minimised,
    /// Nothing drawn: the swapchain was out of date; it is recreated before the next frame.
    OutOfDate,
}

/// A presented frame copied to host memory ([`Presenter::take_capture`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapturedFrame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// RGBA8 pixels, row after row, no padding (swapped from BGRA when the swapchain is).
    pub pixels: Vec<u8>,
}

/// A capture recorded into a frame, read once its fence is signalled.
struct Capture {
    buffer: Buffer,
    extent: vk::Extent2D,
    slot: usize,
}

/// A window surface and its swapchain, with frames in flight.
pub struct Presenter {
    device: Device,
    surface_fn: ash::khr::surface::Instance,
    swapchain_fn: ash::khr::swapchain::Device,
    surface: vk::SurfaceKHR,
    swapchain: vk::SwapchainKHR,
    images: Vec<Image>,
    /// Signalled by the frame's submission, waited by its present; one per swapchain image
    /// so a semaphore is never reused while a present may still wait on it.
    rendered: Vec<vk::Semaphore>,
    format: vk::SurfaceFormatKHR,
    extent: vk::Extent2D,
    slots: Vec<Slot>,
    next: usize,
    stale: bool,
    desc: PresenterDesc,
    capture_next: bool,
    capture: Option<Capture>,
    created: u64,
    /// Keeps the window alive while the surface is (VUID-vkDestroySurfaceKHR-surface-01266).
    _window: Arc<dyn Any + Send + Sync>,
}

impl Presenter {
    /// Creates a surface for `window` and a swapchain for its current size (created on the
    /// first frame). The device must have been created with
    /// [`surface_extensions`](super::surface_extensions).
    ///
    /// Errors: `KILN-E107` the device has no swapchain support (created without the surface
    /// extensions), `KILN-E140` surface creation failed or the queue cannot present to it.
    pub fn new<W>(device: &Device, window: Arc<W>, desc: &PresenterDesc) -> Result<Presenter>
    where
        W: HasWindowHandle + HasDisplayHandle + Send + Sync + 'static,
    {
        let shared = &device.shared;
        if !(shared.instance.surface && shared.features.swapchain) {
            return Err(Error::MissingFeature {
                device: shared.info.name.clone(),
                what: "VK_KHR_swapchain (create the device with \
                       `instance_extensions: kiln::window::surface_extensions(&window)?`)"
                    .into(),
            });
        }
        let display = window.display_handle().map_err(surface_err)?;
        let handle = window.window_handle().map_err(surface_err)?;
        let inst = &shared.instance;
        // SAFETY: the handles come from a live window that `_window` keeps alive for the
        // surface's lifetime; the instance has the extensions ash-window needs (checked via
        // `instance.surface`, set from the same list).
        let surface = unsafe {
            ash_window::create_surface(
                &inst.entry,
                &inst.raw,
                display.as_raw(),
                handle.as_raw(),
                None,
            )
        }
        .map_err(|e| surface_err(format!("vkCreate*SurfaceKHR failed: {e:?}")))?;
        let surface_fn = ash::khr::surface::Instance::new(&inst.entry, &inst.raw);
        // SAFETY: plain query; `surface` is live.
        let ok = unsafe {
            surface_fn.get_physical_device_surface_support(
                shared.physical,
                shared.main_queue().family,
                surface,
            )
        };
        let formats = match ok {
            // SAFETY: plain query.
            Ok(true) => {
                unsafe { surface_fn.get_physical_device_surface_formats(shared.physical, surface) }
                    .map_err(vk_err("vkGetPhysicalDeviceSurfaceFormatsKHR"))
            }
            Ok(false) => Err(surface_err(format!(
                "queue family {} of `{}` cannot present to this surface",
                shared.main_queue().family,
                shared.info.name
            ))),
            Err(e) => Err(vk_err("vkGetPhysicalDeviceSurfaceSupportKHR")(e)),
        };
        let formats = match formats {
            Ok(f) if !f.is_empty() => f,
            other => {
                // SAFETY: the surface is unused.
                unsafe { surface_fn.destroy_surface(surface, None) };
                return Err(other
                    .err()
                    .unwrap_or_else(|| surface_err("the surface reports no formats")));
            }
        };
        let format = desc
            .preferred_formats
            .iter()
            .find_map(|p| formats.iter().find(|f| f.format == *p).copied())
            .unwrap_or(formats[0]);
        let swapchain_fn = crate::device::loader::walking(|| {
            ash::khr::swapchain::Device::new(&inst.raw, &shared.raw)
        });
        let mut p = Presenter {
            device: device.clone(),
            surface_fn,
            swapchain_fn,
            surface,
            swapchain: vk::SwapchainKHR::null(),
            images: Vec::new(),
            rendered: Vec::new(),
            format,
            extent: vk::Extent2D::default(),
            slots: Vec::new(),
            next: 0,
            stale: true,
            desc: desc.clone(),
            capture_next: false,
            capture: None,
            created: 0,
            _window: window,
        };
        for _ in 0..desc.frames_in_flight.max(1) {
            let slot = Slot::new(&p.device.shared)?;
            p.slots.push(slot);
        }
        Ok(p)
    }

    /// The swapchain's format (build pipelines for it).
    pub fn format(&self) -> vk::Format {
        self.format.format
    }

    /// The current swapchain extent (0×0 before the first frame).
    pub fn extent(&self) -> vk::Extent2D {
        self.extent
    }

    /// How many swapchains were created so far (1 after the first frame; each resize,
    /// out-of-date or suboptimal present adds one).
    pub fn swapchains_created(&self) -> u64 {
        self.created
    }

    /// Number of frame-in-flight slots.
    pub fn frames_in_flight(&self) -> usize {
        self.slots.len()
    }

    /// Marks the swapchain for recreation before the next frame (call on window resize).
    pub fn resized(&mut self) {
        self.stale = true;
    }

    /// Copies the next presented frame to host memory; read it with
    /// [`take_capture`](Self::take_capture). When the surface does not allow TRANSFER_SRC
    /// on swapchain images nothing is captured (`take_capture` returns `None`).
    pub fn capture_next_frame(&mut self) {
        self.capture_next = true;
    }

    /// Waits for the captured frame and returns it, or `None` when no capture was
    /// requested and presented.
    pub fn take_capture(&mut self) -> Result<Option<CapturedFrame>> {
        let Some(c) = self.capture.take() else {
            return Ok(None);
        };
        let slot = &self.slots[c.slot];
        // A capture is kept only from a frame whose submission succeeded; when the slot's
        // later frame failed, that frame waited for this one first.
        if slot.sync.must_wait() {
            wait_fence(&self.device.shared, slot.fence)?;
        }
        let mut px: Vec<u8> = c.buffer.read()?;
        if matches!(
            self.format.format,
            vk::Format::B8G8R8A8_UNORM | vk::Format::B8G8R8A8_SRGB
        ) {
            for p in px.chunks_exact_mut(4) {
                p.swap(0, 2);
            }
        }
        Ok(Some(CapturedFrame {
            width: c.extent.width,
            height: c.extent.height,
            pixels: px,
        }))
    }

    fn recreate(&mut self, size: [u32; 2]) -> Result<()> {
        let shared = &self.device.shared.clone();
        self.device.wait_idle()?;
        // SAFETY: plain query on a live surface.
        let caps = unsafe {
            self.surface_fn
                .get_physical_device_surface_capabilities(shared.physical, self.surface)
        }
        .map_err(vk_err("vkGetPhysicalDeviceSurfaceCapabilitiesKHR"))?;
        let extent = SwapchainChoice::extent(&caps, size);
        if extent.width == 0 || extent.height == 0 {
            return Ok(()); // minimised: keep the old swapchain (or none) until it has a size
        }
        // SAFETY: plain query.
        let modes = unsafe {
            self.surface_fn
                .get_physical_device_surface_present_modes(shared.physical, self.surface)
        }
        .map_err(vk_err("vkGetPhysicalDeviceSurfacePresentModesKHR"))?;
        let choice = SwapchainChoice::new(&caps, &modes, self.desc.vsync);
        let old = self.swapchain;
        let info = vk::SwapchainCreateInfoKHR::default()
            .surface(self.surface)
            .min_image_count(choice.count)
            .image_format(self.format.format)
            .image_color_space(self.format.color_space)
            .image_extent(extent)
            .image_array_layers(1)
            .image_usage(choice.usage)
            .image_sharing_mode(vk::SharingMode::EXCLUSIVE)
            .pre_transform(caps.current_transform)
            .composite_alpha(choice.alpha)
            .present_mode(choice.mode)
            .clipped(true)
            .old_swapchain(old);
        let new = {
            // The loader's terminator walks every instance's drivers (`device::loader`).
            let _loader = crate::device::loader::shared();
            // SAFETY: every field comes from the surface's reported capabilities; the device
            // is idle, so the old swapchain's images are unused.
            unsafe { self.swapchain_fn.create_swapchain(&info, None) }
        }
        .map_err(vk_err("vkCreateSwapchainKHR"))?;
        self.images.clear();
        self.destroy_rendered();
        if old != vk::SwapchainKHR::null() {
            // SAFETY: the device is idle and the old swapchain's views were dropped above.
            unsafe { self.swapchain_fn.destroy_swapchain(old, None) };
        }
        self.swapchain = new;
        self.wrap_images(shared, extent, choice.usage)?;
        self.extent = extent;
        self.stale = false;
        self.created += 1;
        log::debug!(
            "kiln: swapchain {}x{} {:?} {:?}, {} images",
            extent.width,
            extent.height,
            self.format.format,
            choice.mode,
            self.images.len()
        );
        Ok(())
    }

    /// The images of the new swapchain, each with its `rendered` semaphore.
    fn wrap_images(
        &mut self,
        shared: &Arc<Shared>,
        extent: vk::Extent2D,
        usage: vk::ImageUsageFlags,
    ) -> Result<()> {
        // SAFETY: plain query on the new swapchain.
        let raws = unsafe { self.swapchain_fn.get_swapchain_images(self.swapchain) }
            .map_err(vk_err("vkGetSwapchainImagesKHR"))?;
        for (i, raw) in raws.into_iter().enumerate() {
            let label = format!("swapchain image {i}");
            self.images.push(Image::wrap(
                shared,
                raw,
                self.format.format,
                extent,
                usage,
                &label,
            )?);
            // SAFETY: plain create.
            let s = unsafe {
                shared
                    .raw
                    .create_semaphore(&vk::SemaphoreCreateInfo::default(), None)
            }
            .map_err(vk_err("vkCreateSemaphore"))?;
            self.rendered.push(s);
        }
        Ok(())
    }

    fn destroy_rendered(&mut self) {
        for s in self.rendered.drain(..) {
            // SAFETY: callers made the device idle, so no present waits on it.
            unsafe { self.device.shared.raw.destroy_semaphore(s, None) };
        }
    }

    /// Acquires a swapchain image, records `record` into this slot's command buffer (the
    /// target is in COLOR_ATTACHMENT_OPTIMAL; kiln moves it to PRESENT_SRC afterwards),
    /// submits and presents. `window_size` is the window's inner size in pixels; a zero
    /// dimension skips the frame ([`FrameStatus::Minimised`]).
    ///
    /// `device` must be the presenter's device (it lends the recorder its lifetime).
    ///
    /// A frame is one more submission on the device's timeline, made through the same
    /// path as [`Device::submit`]: what `record` binds or uses may be dropped as soon as
    /// `frame` returns (its destruction is deferred until the frame has finished on the
    /// GPU), a descriptor set it bound is not rewritten before then (a write waits), and
    /// host access to mapped memory it uses waits for it. So, like `Device::submit`, this
    /// is a safe function; only [`Recorder::raw`] commands, which kiln cannot see, carry
    /// their own contract.
    ///
    /// A frame that fails leaves the presenter usable: nothing it recorded is applied (no
    /// image layout changes), the acquired image is released by recreating the swapchain
    /// before the next frame, and the slot's fence and acquire semaphore are made ready
    /// for the slot's next use, also when the submission itself failed (`frame_state.rs`).
    ///
    /// Errors: whatever `record` returns (nothing is submitted), `KILN-E140` another
    /// device, `KILN-E105` device lost (the device stays lost: [`Device::is_lost`]),
    /// `KILN-E106` out of memory, `KILN-E104` other Vulkan failures.
    pub fn frame<'a>(
        &mut self,
        device: &'a Device,
        window_size: [u32; 2],
        record: impl for<'r> FnOnce(&mut Recorder<'a, 'r>, &Frame<'_>) -> Result<()>,
    ) -> Result<FrameStatus> {
        if !Arc::ptr_eq(&device.shared, &self.device.shared) {
            return Err(surface_err(
                "Presenter::frame was given another device than the presenter's",
            ));
        }
        if window_size[0] == 0 || window_size[1] == 0 {
            return Ok(FrameStatus::Minimised);
        }
        self.discard_stale_slots()?;
        let has_swapchain = self.swapchain != vk::SwapchainKHR::null();
        if needs_recreate(self.stale, has_swapchain, self.extent, window_size) {
            self.recreate(window_size)?;
            if self.swapchain == vk::SwapchainKHR::null() || self.stale {
                return Ok(FrameStatus::Minimised);
            }
        }
        let slot = self.next;
        if self.slots[slot].sync.must_wait() {
            wait_fence(&device.shared, self.slots[slot].fence)?;
        }
        // The slot's last frame is done (waited, or never submitted).
        self.slots[slot].timestamps = None;
        let outcome = self.acquire_and_present(device, slot, record);
        if marks_stale(&outcome) {
            self.stale = true;
        }
        outcome
    }

    /// A failed frame whose discard batch could not be submitted left its acquire
    /// semaphore signalled: consume the signal now, before the swapchain is recreated (its
    /// old images released) and before the slot acquires again.
    fn discard_stale_slots(&mut self) -> Result<()> {
        for i in 0..self.slots.len() {
            if !self.slots[i].sync.needs_discard() {
                continue;
            }
            let (acquired, fence) = (self.slots[i].acquired, self.slots[i].fence);
            if self.slots[i].sync.must_wait() {
                wait_fence(&self.device.shared, fence)?;
            }
            // SAFETY: the fence is not pending (waited above, or its batch failed).
            unsafe { self.device.shared.raw.reset_fences(&[fence]) }
                .map_err(vk_err("vkResetFences"))?;
            self.slots[i].sync.fence_reset();
            self.discard(i, acquired, fence)?;
        }
        Ok(())
    }

    /// The part of [`frame`](Self::frame) from the acquire on, in slot `slot` (whose fence
    /// was waited for). Every outcome but `Presented` marks the swapchain stale (the
    /// caller).
    fn acquire_and_present<'a>(
        &mut self,
        device: &'a Device,
        slot: usize,
        record: impl for<'r> FnOnce(&mut Recorder<'a, 'r>, &Frame<'_>) -> Result<()>,
    ) -> Result<FrameStatus> {
        let shared: &'a Arc<Shared> = &device.shared;
        let d = &shared.raw;
        let (pool, cb, fence, acquired) = {
            let s = &self.slots[slot];
            (s.pool, s.cb, s.fence, s.acquired)
        };
        // A fault injected here fails the call as the driver would (the test-only injector);
        // nothing was acquired then.
        let acquire = shared.inject(FaultSite::Acquire).and_then(|()| {
            // SAFETY: `acquired` is unsignalled with no pending operation: its last wait
            // (the submission of this slot's previous frame, or of its discard batch) has
            // completed, as the fence wait before shows.
            unsafe {
                self.swapchain_fn.acquire_next_image(
                    self.swapchain,
                    u64::MAX,
                    acquired,
                    vk::Fence::null(),
                )
            }
        });
        let (image_index, suboptimal) = match acquire {
            Ok(v) => v,
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => return Ok(FrameStatus::OutOfDate),
            Err(e) => {
                return Err(shared
                    .note_device_error(vk_device_err("vkAcquireNextImageKHR")(e))
                    .into())
            }
        };
        let target = self.images[image_index as usize].clone();
        let rendered = self.rendered[image_index as usize];
        // SAFETY: the slot's previous submission finished (fence) or was never made (a
        // failed submission), so its pool may be reset (its command buffer returns to the
        // initial state, also after a failed frame that left it recording).
        if let Err(e) = unsafe { d.reset_command_pool(pool, vk::CommandPoolResetFlags::empty()) } {
            self.slots[slot].sync.acquire_unconsumed();
            return Err(vk_err("vkResetCommandPool")(e));
        }
        let recorded = self.record_frame(shared, slot, cb, &target, record);
        // SAFETY: the slot's fence is signalled (waited above) or unsignalled after a failed
        // submission; either way no pending batch uses it, so it may be reset.
        if let Err(e) = unsafe { d.reset_fences(&[fence]) } {
            self.slots[slot].sync.acquire_unconsumed();
            return Err(vk_err("vkResetFences")(e));
        }
        self.slots[slot].sync.fence_reset();
        self.next = (self.next + 1) % self.slots.len();
        let (capture, mut work) = match recorded {
            Ok(v) => v,
            Err(e) => {
                // Nothing is drawn; the acquired image is released by recreating the
                // swapchain, and the acquire's signal is consumed.
                self.discard_logged(slot, acquired, fence);
                return Err(e);
            }
        };
        // The frame joins the device's timeline (through the one submit path): it waits
        // for the previous value (so it sees every earlier submission's writes, as kiln's
        // own submissions do) and signals the next (so later submissions, deferred
        // destruction and rewrites of the sets it bound wait for it).
        let wait = [(
            acquired,
            vk::PipelineStageFlags2::COLOR_ATTACHMENT_OUTPUT
                | vk::PipelineStageFlags2::ALL_TRANSFER,
        )];
        let signal = [rendered];
        let batch = Batch {
            wait: &wait,
            signal: &signal,
            fence,
            ..Batch::commands("present", cb)
        };
        if let Err(e) = queue::submit(shared, Queue::MAIN, &batch, &work) {
            // Nothing was submitted: no layout was committed, the fence is unsignalled and
            // the acquire semaphore signalled. Release the image (recreate the swapchain)
            // and make the slot usable again.
            self.discard_logged(slot, acquired, fence);
            return Err(e.into());
        }
        self.slots[slot].sync.batch_submitted(true);
        self.slots[slot].timestamps = work.timed.take();
        drop(work);
        if let Some(buffer) = capture {
            self.capture_next = false;
            self.capture = Some(Capture {
                buffer,
                extent: self.extent,
                slot,
            });
        }
        self.present(shared, image_index, rendered, suboptimal)
    }

    /// Records the frame into `cb` (reset): the target to COLOR_ATTACHMENT_OPTIMAL,
    /// `record`, the capture's copy when one was asked for (and the surface allows
    /// TRANSFER_SRC), the target to PRESENT_SRC_KHR. Returns the capture buffer and the
    /// recorded work.
    fn record_frame<'a>(
        &self,
        shared: &'a Arc<Shared>,
        slot: usize,
        cb: vk::CommandBuffer,
        target: &Image,
        record: impl for<'r> FnOnce(&mut Recorder<'a, 'r>, &Frame<'_>) -> Result<()>,
    ) -> Result<(Option<Buffer>, RecordedWork<'a>)> {
        let capture =
            if self.capture_next && target.usage().contains(vk::ImageUsageFlags::TRANSFER_SRC) {
                let size = self.extent.width as u64 * self.extent.height as u64 * 4;
                Some(Buffer::new(
                    shared,
                    &BufferDesc {
                        label: "kiln swapchain capture",
                        size,
                        usage: vk::BufferUsageFlags::TRANSFER_DST,
                        location: MemoryLocation::GpuToCpu,
                    },
                )?)
            } else {
                None
            };
        let frame = Frame {
            target,
            slot,
            extent: self.extent,
        };
        let options = RecordOptions {
            flags: vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT,
            // Only a captured frame is read by the host.
            host_barrier: false,
            // The presenter keeps no submission to read timestamps from.
            timed: false,
        };
        queue::record(shared, Queue::MAIN, cb, options, |rec| {
            rec.transition_from(
                target,
                vk::ImageLayout::UNDEFINED,
                vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            )?;
            record(rec, &frame)?;
            if rec.close_rendering() {
                return Err(Error::RenderingState {
                    what: "frame ended inside a rendering scope; call end_rendering",
                });
            }
            if let Some(buf) = &capture {
                rec.copy_image_to_buffer(target, 0, buf)?;
                // The host reads the capture after waiting for this frame (§7.9).
                rec.host_barrier();
            }
            rec.transition(target, vk::ImageLayout::PRESENT_SRC_KHR)?;
            Ok(capture)
        })
    }

    /// Presents image `image_index` once `rendered` is signalled; the frame's status.
    fn present(
        &self,
        shared: &Shared,
        image_index: u32,
        rendered: vk::Semaphore,
        suboptimal: bool,
    ) -> Result<FrameStatus> {
        let swapchains = [self.swapchain];
        let indices = [image_index];
        let present_wait = [rendered];
        let present = vk::PresentInfoKHR::default()
            .wait_semaphores(&present_wait)
            .swapchains(&swapchains)
            .image_indices(&indices);
        let presented = {
            let guard = shared.main_queue().lock();
            // SAFETY: the queue is externally synchronized by its lock; `rendered` is
            // signalled by the frame's submission; the image was acquired and is in
            // PRESENT_SRC_KHR once that submission completes.
            unsafe { self.swapchain_fn.queue_present(guard.raw(), &present) }
        };
        // The present was made (its semaphore wait executes whatever it returns, §34.10);
        // a fault injected here replaces its result (the test-only injector).
        let presented = shared.inject(FaultSite::Present).and(presented);
        // `KILN_CAPTURE=…:frames=N` ends after the N-th present (`device/capture.rs`).
        crate::device::capture_presented(shared);
        match presented {
            Ok(false) if !suboptimal => Ok(FrameStatus::Presented),
            Ok(_) => Ok(FrameStatus::Suboptimal),
            Err(vk::Result::ERROR_OUT_OF_DATE_KHR) => Ok(FrameStatus::OutOfDate),
            Err(e) => Err(shared
                .note_device_error(vk_device_err("vkQueuePresentKHR")(e))
                .into()),
        }
    }

    /// [`discard`](Self::discard), its failure logged (the slot stays marked).
    fn discard_logged(&mut self, slot: usize, acquired: vk::Semaphore, fence: vk::Fence) {
        if let Err(d) = self.discard(slot, acquired, fence) {
            log::warn!("kiln: discarding a failed frame: {d}");
        }
    }

    /// After a frame that acquired an image and then failed (its recording, or its
    /// submission): a batch without commands waits for the acquire's semaphore (so it is
    /// unsignalled again when the slot comes back) and signals the slot's fence (reset and
    /// not pending). If even that cannot be submitted, the slot is marked and the next
    /// frame tries again first.
    ///
    /// Errors: as `queue::submit` (the slot stays marked).
    fn discard(&mut self, slot: usize, acquired: vk::Semaphore, fence: vk::Fence) -> Result<()> {
        let wait = [(acquired, vk::PipelineStageFlags2::ALL_COMMANDS)];
        let batch = Batch {
            command_buffer: None,
            wait: &wait,
            fence,
            ..Batch::commands("present (frame discarded)", vk::CommandBuffer::null())
        };
        let done = queue::submit(
            &self.device.shared,
            Queue::MAIN,
            &batch,
            &RecordedWork::default(),
        );
        self.slots[slot].sync.batch_submitted(done.is_ok());
        Ok(done.map(drop)?)
    }

    /// Waits until every submitted frame has finished.
    ///
    /// Errors: `KILN-E105` device lost.
    pub fn wait_idle(&self) -> Result<(), DeviceError> {
        self.device.wait_idle()
    }
}

impl Drop for Presenter {
    fn drop(&mut self) {
        let _ = self.device.wait_idle();
        self.capture = None;
        self.images.clear();
        self.destroy_rendered();
        let d = &self.device.shared.raw;
        // SAFETY: the device is idle; every object below was created by this presenter and
        // is destroyed once; the surface goes after the swapchain that uses it, and the
        // window (`_window`) is released after the surface.
        unsafe {
            for s in self.slots.drain(..) {
                s.destroy(d);
            }
            if self.swapchain != vk::SwapchainKHR::null() {
                self.swapchain_fn.destroy_swapchain(self.swapchain, None);
            }
            self.surface_fn.destroy_surface(self.surface, None);
        }
    }
}
