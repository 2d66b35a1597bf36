//! Breadcrumbs: how far the GPU got through the recorded work, for the post-mortem of a
//! lost device or a hung submission ([`PostMortem`]).
//!
//! # Markers
//!
//! With breadcrumbs on (`DeviceDesc::breadcrumbs`, `KILN_BREADCRUMBS=1|0`; **on by default
//! in debug builds of kiln, off in release builds**), each kiln queue has a *marker ring*: a
//! host-visible, host-coherent buffer of [`SLOTS`] 32-bit words. A recording writes a
//! marker (one word, a token unique on its queue) at
//!
//! - the start of its command buffer and at each timing scope's start (`Recorder::scope`,
//!   `begin_scope`): the GPU reached that point of the command stream;
//! - each scope's end and the command buffer's end, once every earlier command finished:
//!   the GPU *finished* everything recorded before it.
//!
//! Each marker takes the next slot of the ring; the host knows which token belongs to which
//! scope (its name, the scopes around it, the Rust line that opened it: [`Crumbs`], kept
//! per submission until it finished). After a loss or a timeout, a written token says the
//! GPU got there: the last start written is `PostMortem::last_started`, the first end not
//! written (in recorded order) `PostMortem::first_unfinished`.
//!
//! # Writers
//!
//! Which command writes a marker ([`Writer`], per device):
//!
//! - **`VK_AMD_buffer_marker`** where the device has it (NVIDIA's drivers too), enabled
//!   with breadcrumbs on unless `KILN_BREADCRUMB_MARKERS=fill`: `vkCmdWriteBufferMarkerAMD`,
//!   a start at `TOP_OF_PIPE`, an end at `BOTTOM_OF_PIPE` (written once every earlier
//!   command completed: no barrier before it). The command is allowed inside a rendering
//!   scope ("Render Pass Scope: Both"), so a scope opened inside one gets its own markers.
//! - **Fills** elsewhere: `vkCmdFillBuffer` of one word, each end after a barrier on the
//!   ring whose first synchronization scope is every earlier command (`ALL_COMMANDS`).
//!   Fills are not allowed inside a rendering scope (VUID-vkCmdFillBuffer-renderpass): no
//!   marker is written there, and a scope inside one is covered by its enclosing scope.
//!
//! **Synchronization.** Fills are transfer writes (`CLEAR` stage, Vulkan spec §20 "Clear
//! Commands"); the AMD writes are `TRANSFER_WRITE` accesses at their given stage (the
//! extension's "memory write ... performed by the transfer stage" rule). Within a command
//! buffer every marker has its own slot (a recording writes at most
//! [`MAX_PER_RECORDING`]); every command buffer starts with a buffer barrier on the ring
//! (earlier marker writes → this buffer's; fills: `CLEAR` → `CLEAR`, AMD: `ALL_COMMANDS` →
//! `ALL_COMMANDS`, which covers any stage a marker is written at), which orders it after
//! earlier submissions' markers of the queue (a resubmitted `Recording` writes its slots
//! again). The barriers are *buffer* barriers on the ring only, so they make no user write
//! visible: synchronization validation still sees every hazard of the user's work. With
//! fills, the end markers' execution dependency orders earlier commands before later clear
//! commands (a write-after-read hazard of a later `fill` would be hidden); the AMD writer
//! has no end barrier, so it hides nothing.
//!
//! **Cost.** Off: one branch at each scope boundary and recording. On: one marker write per
//! boundary; with fills also a barrier per end (the GPU drains at every scope end). For
//! debugging, hence off in release builds.
//!
//! Before a submission, the host clears the slots it will write (coherent memory: the
//! submission makes the host writes visible, §7.9), so a resubmitted `Recording` is not
//! mistaken for finished.

use std::collections::VecDeque;
use std::panic::Location;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use ash::vk;
use gpu_allocator::vulkan::Allocation;

use super::{allocate_bound, free_bound, MemoryLocation, Shared};
use crate::error::post_mortem::{Breadcrumb, DeviceFault, FaultAddress, PostMortem, VendorFault};
use crate::error::{DeviceError, Result};

/// Words of one queue's marker ring (16 KiB).
pub(crate) const SLOTS: u64 = 4096;
/// Markers one recording writes at most (later boundaries get none).
pub(crate) const MAX_PER_RECORDING: usize = (SLOTS / 4) as usize;
/// `Event::scope` of the submission's own start and end.
pub(crate) const SUBMISSION: u32 = u32::MAX;
/// Submissions remembered per queue (the oldest dropped first, finished ones at once).
const REMEMBERED: usize = 64;

/// One marker a recording wrote: its ring slot and token, the scope (an index into
/// [`Crumbs::scopes`], or [`SUBMISSION`]) and whether it is the scope's end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Event {
    pub slot: u32,
    pub token: u32,
    pub scope: u32,
    pub end: bool,
}

/// A scope of a recording with breadcrumbs: its name with its parents' (`a/b`) and where it
/// was opened.
#[derive(Clone, Debug)]
pub(crate) struct CrumbScope {
    pub path: String,
    pub location: &'static Location<'static>,
}

/// The breadcrumbs of one recording (built by the recorder, `commands::crumbs`).
#[derive(Debug, Default)]
pub(crate) struct Crumbs {
    pub scopes: Vec<CrumbScope>,
    pub events: Vec<Event>,
}

/// A submission whose breadcrumbs are remembered.
struct Submitted {
    label: String,
    crumbs: Arc<Crumbs>,
}

/// One queue's marker ring.
struct Ring {
    buffer: vk::Buffer,
    allocation: Option<(Allocation, (usize, u64))>,
    words: NonNull<u32>,
    next: AtomicU64,
    submitted: Mutex<VecDeque<Submitted>>,
}

// SAFETY: `words` points into the ring's mapped allocation, which lives as long as the ring;
// the host only reads and writes whole words through volatile accesses (the GPU writes
// other words concurrently), the rest is behind the mutex or atomic.
unsafe impl Send for Ring {}
// SAFETY: as for Send.
unsafe impl Sync for Ring {}

impl Ring {
    /// The token in `slot`.
    fn word(&self, slot: u32) -> u32 {
        let slot = (slot as u64 % SLOTS) as usize;
        // SAFETY: `slot < SLOTS`, inside the mapped allocation of SLOTS words; a volatile
        // read because the GPU writes the memory outside Rust's knowledge.
        unsafe { self.words.as_ptr().add(slot).read_volatile() }
    }

    fn clear(&self, slot: u32) {
        let slot = (slot as u64 % SLOTS) as usize;
        // SAFETY: as `word`; no submission that may still write this slot is pending
        // (the caller submits the work that writes it next).
        unsafe { self.words.as_ptr().add(slot).write_volatile(0) }
    }

    fn written(&self, e: &Event) -> bool {
        self.word(e.slot) == e.token
    }

    /// Whether the submission's end marker was written (it finished).
    fn finished(&self, crumbs: &Crumbs) -> bool {
        crumbs
            .events
            .iter()
            .rev()
            .find(|e| e.end && e.scope == SUBMISSION)
            .is_some_and(|e| self.written(e))
    }
}

/// The device's breadcrumb state: the rings (breadcrumbs on), VK_EXT_device_fault's
/// function and VK_AMD_buffer_marker's (where enabled).
pub(crate) struct Breadcrumbs {
    on: bool,
    rings: OnceLock<Vec<Ring>>,
    fault: Option<ash::ext::device_fault::Device>,
    marker: Option<ash::amd::buffer_marker::Device>,
    /// The post-mortem of the loss, taken once (`vkGetDeviceFaultInfoEXT` reports it once).
    lost: Mutex<Option<PostMortem>>,
}

/// Whether breadcrumbs are on for `desc` (see the module docs).
pub(crate) fn enabled(desc: Option<bool>) -> bool {
    desc.or_else(|| super::env_flag("KILN_BREADCRUMBS"))
        .unwrap_or(cfg!(debug_assertions))
}

/// Whether the markers are written with VK_AMD_buffer_marker (the extension then enabled):
/// breadcrumbs `on`, the device `has` it, and `KILN_BREADCRUMB_MARKERS` (`env`) is not
/// `fill` (module docs, "Writers").
pub(crate) fn amd_writer(on: bool, has: bool, env: Option<&str>) -> bool {
    on && has && env.map(str::trim) != Some("fill")
}

/// Which command writes a marker (module docs, "Writers").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writer {
    /// `vkCmdFillBuffer` of one word, an end after a barrier; none inside rendering.
    Fill,
    /// `vkCmdWriteBufferMarkerAMD` at a stage, inside rendering scopes too.
    Amd,
}

impl Writer {
    /// Whether a marker is written at a boundary inside a rendering scope (`rendering`).
    pub(crate) fn writes(self, rendering: bool) -> bool {
        self == Writer::Amd || !rendering
    }

    /// The stage an AMD marker is written at: a start at `TOP_OF_PIPE` (the command
    /// stream got there), an end at `BOTTOM_OF_PIPE` (every earlier command completed).
    pub(crate) fn stage(end: bool) -> vk::PipelineStageFlags {
        if end {
            vk::PipelineStageFlags::BOTTOM_OF_PIPE
        } else {
            vk::PipelineStageFlags::TOP_OF_PIPE
        }
    }

    /// The stage a ring barrier names for this writer's marker writes, on both sides (at
    /// the command buffer's start: the earlier markers' writes → this buffer's): `CLEAR`
    /// for fills; `ALL_COMMANDS` for the AMD writes, whose stages `TOP_OF_PIPE` /
    /// `BOTTOM_OF_PIPE` no access mask may name.
    pub(crate) fn write_stage(self) -> vk::PipelineStageFlags2 {
        match self {
            Writer::Fill => vk::PipelineStageFlags2::CLEAR,
            Writer::Amd => vk::PipelineStageFlags2::ALL_COMMANDS,
        }
    }
}

impl Breadcrumbs {
    pub(crate) fn new(
        on: bool,
        fault: Option<ash::ext::device_fault::Device>,
        marker: Option<ash::amd::buffer_marker::Device>,
    ) -> Breadcrumbs {
        Breadcrumbs {
            on,
            rings: OnceLock::new(),
            fault,
            marker,
            lost: Mutex::new(None),
        }
    }

    /// Whether recordings write markers.
    #[inline]
    pub(crate) fn on(&self) -> bool {
        self.on && self.rings.get().is_some()
    }
}

impl Shared {
    /// Creates the marker rings when breadcrumbs are on (after the device's creation).
    ///
    /// Errors: `KILN-E150`/`KILN-E154` no memory for a ring.
    pub(crate) fn create_marker_rings(&self) -> Result<()> {
        if !self.breadcrumbs.on {
            return Ok(());
        }
        let mut rings = Vec::with_capacity(self.queues.len());
        for i in 0..self.queues.len() {
            let label = format!("kiln breadcrumbs (queue {i})");
            let made = allocate_bound(
                self,
                &label,
                SLOTS * 4,
                vk::BufferUsageFlags::TRANSFER_DST,
                MemoryLocation::GpuToCpu,
                4,
            );
            let (buffer, allocation, reserved) = match made {
                Ok(m) => m,
                Err(e) => {
                    for r in rings {
                        self.free_ring(r);
                    }
                    return Err(e.into());
                }
            };
            let Some(words) = allocation.mapped_ptr().map(|p| p.cast::<u32>()) else {
                free_bound(self, buffer, allocation, reserved, &label);
                continue;
            };
            self.set_name(buffer, &label);
            // SAFETY: the allocation is mapped, SLOTS words long, and not in use yet.
            unsafe { std::ptr::write_bytes(words.as_ptr(), 0, SLOTS as usize) };
            rings.push(Ring {
                buffer,
                allocation: Some((allocation, reserved)),
                words,
                next: AtomicU64::new(0),
                submitted: Mutex::new(VecDeque::new()),
            });
        }
        if rings.len() == self.queues.len() {
            let _ = self.breadcrumbs.rings.set(rings);
        } else {
            for r in rings {
                self.free_ring(r);
            }
        }
        Ok(())
    }

    fn free_ring(&self, mut r: Ring) {
        if let Some((allocation, reserved)) = r.allocation.take() {
            free_bound(self, r.buffer, allocation, reserved, "kiln breadcrumbs");
        }
    }

    /// Frees the rings (device teardown, after the device is idle).
    pub(crate) fn destroy_marker_rings(&mut self) {
        if let Some(rings) = self.breadcrumbs.rings.take() {
            for r in rings {
                self.free_ring(r);
            }
        }
    }

    /// Whether recordings write breadcrumbs.
    #[inline]
    pub(crate) fn breadcrumbs_on(&self) -> bool {
        self.breadcrumbs.on()
    }

    /// The markers' writer, and VK_AMD_buffer_marker's functions when it is the AMD one.
    pub(crate) fn marker_writer(&self) -> (Writer, Option<&ash::amd::buffer_marker::Device>) {
        match &self.breadcrumbs.marker {
            Some(f) => (Writer::Amd, Some(f)),
            None => (Writer::Fill, None),
        }
    }

    /// The next marker of queue `queue`: the ring, the slot and the token to write.
    pub(crate) fn marker_slot(&self, queue: usize) -> Option<(vk::Buffer, u32, u32)> {
        let ring = self.breadcrumbs.rings.get()?.get(queue)?;
        let n = ring.next.fetch_add(1, Ordering::Relaxed);
        let slot = (n % SLOTS) as u32;
        let token = (n % u64::from(u32::MAX)) as u32 + 1;
        Some((ring.buffer, slot, token))
    }

    /// Called right before the submission of `crumbs` on `queue`: clears their slots and
    /// remembers them under `label`, forgetting finished submissions.
    pub(crate) fn submitting_crumbs(&self, queue: usize, label: &str, crumbs: &Arc<Crumbs>) {
        let Some(ring) = self.breadcrumbs.rings.get().and_then(|r| r.get(queue)) else {
            return;
        };
        for e in &crumbs.events {
            ring.clear(e.slot);
        }
        let mut list = ring.submitted.lock().unwrap_or_else(|p| p.into_inner());
        while list.front().is_some_and(|s| ring.finished(&s.crumbs)) || list.len() >= REMEMBERED {
            list.pop_front();
        }
        list.push_back(Submitted {
            label: label.to_string(),
            crumbs: crumbs.clone(),
        });
    }

    /// What kiln knows of where the GPU was: the breadcrumbs of the first queue with
    /// unfinished work, and after a loss (`lost`) the driver's fault report (read once).
    pub(crate) fn post_mortem(&self, lost: bool) -> PostMortem {
        let mut report = PostMortem::default();
        if let Some(rings) = self.breadcrumbs.rings.get() {
            for (q, ring) in rings.iter().enumerate() {
                if read_ring(ring, q, &mut report) {
                    break;
                }
            }
        }
        if lost {
            let mut taken = self
                .breadcrumbs
                .lost
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            match &*taken {
                Some(first) => report.fault = first.fault.clone(),
                None => {
                    report.fault = self.device_fault();
                    *taken = Some(report.clone());
                }
            }
        }
        report
    }

    /// `vkGetDeviceFaultInfoEXT` where VK_EXT_device_fault is enabled and the driver lost
    /// the device (not after an injected loss: the call requires the lost state,
    /// VUID-vkGetDeviceFaultInfoEXT-device-07336; found on the H200, 2026-12-05).
    fn device_fault(&self) -> Option<DeviceFault> {
        if self.lost_injected() {
            return None;
        }
        let fault = self.breadcrumbs.fault.as_ref()?;
        let get = fault.fp().get_device_fault_info_ext;
        let mut counts = vk::DeviceFaultCountsEXT::default();
        // SAFETY: the extension and its deviceFault feature are enabled on this device;
        // `counts` is a valid struct; a null info asks for the counts only.
        let r = unsafe { get(self.raw.handle(), &mut counts, std::ptr::null_mut()) };
        if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
            log::warn!("kiln: vkGetDeviceFaultInfoEXT failed: {r:?}");
            return None;
        }
        let mut addresses =
            vec![vk::DeviceFaultAddressInfoEXT::default(); counts.address_info_count as usize];
        let mut vendor =
            vec![vk::DeviceFaultVendorInfoEXT::default(); counts.vendor_info_count as usize];
        let binary_size = counts.vendor_binary_size;
        // kiln reads no binary dump: ask for none.
        counts.vendor_binary_size = 0;
        let mut info = vk::DeviceFaultInfoEXT {
            p_address_infos: addresses.as_mut_ptr(),
            p_vendor_infos: vendor.as_mut_ptr(),
            ..Default::default()
        };
        // SAFETY: the arrays hold the counts `counts` says; no binary data is asked for.
        let r = unsafe { get(self.raw.handle(), &mut counts, &mut info) };
        if r != vk::Result::SUCCESS && r != vk::Result::INCOMPLETE {
            log::warn!("kiln: vkGetDeviceFaultInfoEXT failed: {r:?}");
            return None;
        }
        addresses.truncate(counts.address_info_count as usize);
        vendor.truncate(counts.vendor_info_count as usize);
        Some(DeviceFault {
            description: text(&info.description),
            addresses: addresses
                .iter()
                .map(|a| FaultAddress {
                    kind: a.address_type,
                    address: a.reported_address,
                    precision: a.address_precision,
                })
                .collect(),
            vendor: vendor
                .iter()
                .map(|v| VendorFault {
                    description: text(&v.description),
                    code: v.vendor_fault_code,
                    data: v.vendor_fault_data,
                })
                .collect(),
            vendor_binary_size: binary_size,
        })
    }
}

/// A fixed-size C string of the driver's.
fn text(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Fills `report` from queue `q`'s ring when it has unfinished submissions; returns whether.
fn read_ring(ring: &Ring, q: usize, report: &mut PostMortem) -> bool {
    let list = ring.submitted.lock().unwrap_or_else(|p| p.into_inner());
    for s in list.iter().filter(|s| !ring.finished(&s.crumbs)) {
        report.queue = Some(q);
        report.unfinished.push(s.label.clone());
        for e in &s.crumbs.events {
            let written = ring.written(e);
            if written && !e.end {
                report.last_started = Some(breadcrumb(&s.label, &s.crumbs, e.scope));
            }
            if !written && e.end && report.first_unfinished.is_none() {
                report.first_unfinished = Some(breadcrumb(&s.label, &s.crumbs, e.scope));
            }
        }
    }
    report.queue.is_some()
}

fn breadcrumb(label: &str, crumbs: &Crumbs, scope: u32) -> Breadcrumb {
    match crumbs.scopes.get(scope as usize) {
        Some(s) => Breadcrumb {
            submission: label.to_string(),
            scope: s.path.clone(),
            file: s.location.file(),
            line: s.location.line(),
        },
        None => Breadcrumb {
            submission: label.to_string(),
            ..Default::default()
        },
    }
}

impl Shared {
    /// `e` with its post-mortem when it is a lost device (`KILN-E105`: breadcrumbs and the
    /// driver's fault report) or a timeout (`KILN-E108`: breadcrumbs) and kiln knows
    /// something.
    pub(crate) fn with_post_mortem(&self, e: DeviceError) -> DeviceError {
        let known = |r: PostMortem| (r.queue.is_some() || !r.is_empty()).then(|| Box::new(r));
        match e {
            DeviceError::DeviceLost {
                call,
                label,
                report: None,
            } => DeviceError::DeviceLost {
                call,
                label,
                report: known(self.post_mortem(true)),
            },
            DeviceError::Timeout {
                call,
                ms,
                label,
                report: None,
            } => DeviceError::Timeout {
                call,
                ms,
                label,
                report: known(self.post_mortem(false)),
            },
            e => e,
        }
    }
}

impl super::Device {
    /// Where the GPU is now, from the breadcrumbs (see [`PostMortem`]): the submissions it
    /// has not finished, the last scope it started and the first it did not finish. Reads
    /// host memory only (never waits): call it from another thread while a wait hangs.
    /// Empty with breadcrumbs off (`DeviceDesc::breadcrumbs`, `KILN_BREADCRUMBS`); `fault`
    /// is always `None` here (`KILN-E105` carries it).
    pub fn breadcrumbs(&self) -> PostMortem {
        self.shared.post_mortem(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_amd_writer_needs_breadcrumbs_the_extension_and_no_fill_override() {
        assert!(amd_writer(true, true, None));
        assert!(amd_writer(true, true, Some("amd")));
        assert!(!amd_writer(true, true, Some("fill")));
        assert!(!amd_writer(true, true, Some(" fill\n")));
        assert!(!amd_writer(false, true, None));
        assert!(!amd_writer(true, false, None));
    }

    #[test]
    fn each_writer_marks_where_it_may_at_its_stage() {
        assert!(Writer::Amd.writes(true) && Writer::Amd.writes(false));
        assert!(!Writer::Fill.writes(true) && Writer::Fill.writes(false));
        assert_eq!(Writer::stage(false), vk::PipelineStageFlags::TOP_OF_PIPE);
        assert_eq!(Writer::stage(true), vk::PipelineStageFlags::BOTTOM_OF_PIPE);
        assert_eq!(Writer::Fill.write_stage(), vk::PipelineStageFlags2::CLEAR);
        assert_eq!(
            Writer::Amd.write_stage(),
            vk::PipelineStageFlags2::ALL_COMMANDS
        );
    }
}
