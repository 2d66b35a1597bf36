//! Shared test helpers (the library of the `kiln-tests` package, named `common`): every GPU
//! test runs on a real Vulkan device (lavapipe in CI) under the Khronos validation layer
//! with synchronization validation on, and fails on any validation error or warning.
//!
//! - [`device`], [`assert_clean`], [`assert_watch_clean`]: the device under validation and
//!   the checks that it stayed silent (and was torn down);
//! - [`add`]: the vector_add pipeline (c = a + b) and its buffers and set, the setup most
//!   GPU tests share;
//! - [`draw`]: render targets, pixels and the textured full-screen quad;
//! - [`faulty_device`], [`faulty_emulated_device`]: the same with a fault injector;
//! - [`emulated_device`]: the same, with a compute and a transfer queue of their own on
//!   devices with one queue (timelines of their own on the main `VkQueue`), so the
//!   cross-queue paths run; [`gate`]: holding a queue still while a test looks;
//! - [`fixtures`], [`GOLDEN_SCENE_PNG`]: files of `tests/` embedded at build time;
//! - [`corpus`]: the external SPIR-V corpus and its test tier;
//! - [`allocator_warnings`]: what gpu-allocator logged in this process;
//! - [`temp`]: a test's own temporary directory, removed when the test ends.

pub mod add;
pub mod corpus;
pub mod draw;
pub mod fixtures;
pub mod gate;
pub mod temp;

use std::sync::{Mutex, Once};

use kiln::{Device, DeviceDesc, ValidationReport};

/// A device with validation forced on. Fails (never skips) with a clear message when no
/// device or no validation layer is installed.
pub fn device() -> Device {
    device_with(DeviceDesc::default().validation(Some(true)))
}

/// [`device`], where every queue kind the device has no queue of its own for gets an
/// emulated one (`DeviceDesc::emulate_queues`): on lavapipe, compute and transfer queues
/// with their own timelines on the one `VkQueue`; on a GPU with dedicated queues, the same
/// as [`device`].
pub fn emulated_device() -> Device {
    device_with(
        DeviceDesc::default()
            .validation(Some(true))
            .emulate_queues(true),
    )
}

/// [`device`] with a fault injector (`DeviceDesc::faults`, test-only): the calls it arms
/// fail with the chosen `VkResult` (see `kiln::hooks::FaultInjector`).
pub fn faulty_device(faults: &std::sync::Arc<kiln::hooks::FaultInjector>) -> Device {
    device_with(
        DeviceDesc::default()
            .validation(Some(true))
            .faults(Some(faults.clone())),
    )
}

/// [`emulated_device`] with a fault injector (see [`faulty_device`]).
pub fn faulty_emulated_device(faults: &std::sync::Arc<kiln::hooks::FaultInjector>) -> Device {
    device_with(
        DeviceDesc::default()
            .validation(Some(true))
            .emulate_queues(true)
            .faults(Some(faults.clone())),
    )
}

/// A device of `desc` with validation forced on (as [`device`]).
pub fn device_with_desc(desc: DeviceDesc) -> Device {
    device_with(desc.validation(Some(true)))
}

fn device_with(desc: DeviceDesc) -> Device {
    install_logger();
    let device = Device::with_desc(&desc).unwrap_or_else(|e| {
        panic!(
            "no Vulkan device for the GPU tests: {e}\n\
             install a driver and the loader: `apt-get install libvulkan1 mesa-vulkan-drivers \
             vulkan-validationlayers` (or run `cargo xtask test`, which does)"
        )
    });
    assert!(
        device.validation_report().enabled,
        "VK_LAYER_KHRONOS_validation is not installed; the GPU tests must run under it \
         (`apt-get install vulkan-validationlayers`)"
    );
    device
}

/// Panics listing the messages if the report holds any error or warning, except the
/// known false positives of synchronization validation (only when the report kept every
/// message, so none can hide behind them, and only when every message is one):
/// [`syncval_self_race`], and hazards between accesses that kiln's timeline waits order,
/// which the messenger marks with the facts (`[kiln: ordered: ...]`: the submission waited
/// for a timeline value at least that of the submission that made the earlier access;
/// src/device/queue_order.rs). Both come from validation layers whose submit-time checks
/// do not follow timeline semaphores (1.3.239, which the H200 runs carry; lavapipe has one
/// queue, so the CI never sees them), and are set aside only for layers older than
/// [`LAYER_FOLLOWS_TIMELINES`].
#[track_caller]
pub fn assert_report_clean(r: &ValidationReport) {
    if !r.is_clean() && only_known_false_positives(r) {
        let known = r.errors + r.warnings;
        let v = r.layer_version;
        eprintln!(
            "note: {known} known false positive(s) of validation layer {}.{}.{} set aside \
             (see tests/common/mod.rs assert_report_clean)",
            kiln::vk::api_version_major(v),
            kiln::vk::api_version_minor(v),
            kiln::vk::api_version_patch(v)
        );
        return;
    }
    assert!(
        r.is_clean(),
        "validation reported {} error(s), {} warning(s):\n{}",
        r.errors,
        r.warnings,
        r.messages.join("\n")
    );
}

/// Whether every error and warning of `r` is a known false positive (see
/// [`assert_report_clean`]) and the report kept them all: clean but for those.
pub fn only_known_false_positives(r: &ValidationReport) -> bool {
    let total = (r.errors + r.warnings) as usize;
    // Only layers that do not follow timeline semaphores need these two set-asides.
    let old_layer = r.layer_version < LAYER_FOLLOWS_TIMELINES;
    // Every message counted carries kiln's ordering note (also past the 64 kept texts).
    if old_layer && total > 0 && r.ordered as usize == total {
        return true;
    }
    let known = r
        .messages
        .iter()
        .filter(|m| {
            (old_layer && (syncval_self_race(m) || kiln_ordered(m)))
                || semaphore_state_timeout(r, m)
        })
        .count();
    known == total && r.messages.len() == total
}

/// The first validation layer whose submit-time synchronization validation follows
/// timeline semaphores (Vulkan-ValidationLayers#7600, closed by 1.3.296's timeline
/// support; kiln's `queue_order::LAYER_FOLLOWS_TIMELINES`) and checks that an asynchronous
/// write was made on the other queue: from it on, neither [`kiln_ordered`] nor
/// [`syncval_self_race`] is set aside.
pub const LAYER_FOLLOWS_TIMELINES: u32 = kiln::vk::make_api_version(0, 1, 3, 296);

/// The first validation layer whose timeline tracking no longer deadlocks when the host
/// signals a timeline semaphore while another thread waits on the host for work behind it
/// (Vulkan-ValidationLayers#8519, "various combinations of timeline semaphore host
/// signal/wait led to deadlock (timeout and internal vvl error)", in 1.3.296).
const LAYER_TRACKS_HOST_SIGNALS: u32 = kiln::vk::make_api_version(0, 1, 3, 296);

/// Whether `message` is `UNASSIGNED-VkSemaphore-state-timeout` ("Timeout waiting for
/// timeline semaphore state to update. This is most likely a validation bug.") from a layer
/// older than [`LAYER_TRACKS_HOST_SIGNALS`]: 1.3.239 raises it when a test's gate is opened
/// by a host signal on one thread while another waits for a submission behind the gate
/// (`queues::host_memory::host_access_waits_for_pending_copies_of_the_buffer`). Layer 1.4.309
/// runs the same test clean.
pub fn semaphore_state_timeout(r: &ValidationReport, message: &str) -> bool {
    r.layer_version < LAYER_TRACKS_HOST_SIGNALS
        && message.starts_with("UNASSIGNED-VkSemaphore-state-timeout:")
}

/// Whether `message` is a submit-time hazard the messenger marked as ordered by kiln's
/// timeline waits (src/device/queue_order.rs).
pub fn kiln_ordered(message: &str) -> bool {
    message.contains("vkQueueSubmit")
        && message.contains("SYNC-HAZARD-")
        && message.contains(" [kiln: ordered: ")
}

/// Whether `message` is synchronization validation's `*_RACING_*` hazard of a
/// `vkQueueSubmit2` on queue Q against a prior access made on Q itself.
///
/// Such a report cannot be a hazard: a queue's earlier submissions are never asynchronous
/// to its later ones (queue submission order, and kiln's wait on the queue's previous
/// timeline value). It is what layer 1.3.239 (the Debian package the H200 runs carry)
/// reports on a device with several real queues: a `RACING` hazard is one found in the
/// access context of *another* queue's last batch that this batch has not synchronized
/// with (`RegisterAsyncContexts`), and that batch's context also holds the accesses it
/// imported through its own semaphore waits, among them Q's. 1.3.239's
/// `ResourceAccessState::DetectAsyncHazard(usage, start_tag)` flags any write with a tag
/// after `start_tag`, whoever made it; later layers check that the access was made on the
/// asynchronous batch's queue (`DetectAsyncHazard(usage, start_tag, queue_id)`:
/// `last_write->IsQueue(queue_id)`), which a Q access never is. H200 run 1: an upload on a
/// transfer queue, a readback of the same buffer on the other transfer queue (waiting for
/// it), a second readback on the first queue: `READ_RACING_WRITE ... prior_usage:
/// SYNC_COPY_TRANSFER_WRITE ... queue: <the submitting queue>, submit: 0`. Lavapipe has one
/// queue, so it never produces this.
pub fn syncval_self_race(message: &str) -> bool {
    fn hex_after(s: &str, key: &str) -> Option<u64> {
        let rest = &s[s.find(key)? + key.len()..];
        let rest = rest.trim_start().strip_prefix("0x")?;
        let end = rest
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(rest.len());
        u64::from_str_radix(&rest[..end], 16).ok()
    }
    let racing_at_submit = message.contains("SYNC-HAZARD-")
        && message.contains("-RACING-")
        && message.contains("vkQueueSubmit");
    if !racing_at_submit {
        return false;
    }
    // The submitting queue: the message's first object.
    let Some(obj) = message.find("Object 0: handle =") else {
        return false;
    };
    let head = &message[obj..];
    if !head
        .split(';')
        .next()
        .is_some_and(|o| o.contains("VK_OBJECT_TYPE_QUEUE"))
    {
        return false;
    }
    let Some(submitting) = hex_after(head, "handle =") else {
        return false;
    };
    // The prior access's queue, in its "Access info (...)".
    let Some(info) = message.find("Access info (") else {
        return false;
    };
    hex_after(&message[info..], "queue: VkQueue") == Some(submitting)
}

/// Panics listing the messages if the validation layer reported any error or warning.
#[track_caller]
pub fn assert_clean(device: &Device) {
    assert_report_clean(&device.validation_report());
}

/// Like [`assert_clean`], for a watch that outlived its device; also asserts that the
/// device really was torn down (no kiln object kept it alive).
#[track_caller]
pub fn assert_watch_clean(watch: &kiln::ValidationWatch) {
    assert!(
        watch.torn_down(),
        "the device was not destroyed: some object still holds it"
    );
    assert_report_clean(&watch.report());
}

/// The code of an error result, `"ok"` for success.
pub fn code<T, E: Into<kiln::Error>>(r: Result<T, E>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.into().code(),
    }
}

/// The offscreen render of the seed scene (`tests/golden/material_scene.png`, 512×512),
/// embedded at build time. `KILN_UPDATE_GOLDEN=1` makes the golden-image test rewrite the
/// file; see `tests/golden/README.md`.
pub const GOLDEN_SCENE_PNG: &[u8] = include_bytes!("../golden/material_scene.png");

/// Where [`GOLDEN_SCENE_PNG`] comes from in the checkout (written only on request).
pub const GOLDEN_SCENE_PATH: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/golden/material_scene.png");

/// [`GOLDEN_SCENE_PNG`] decoded.
pub fn golden_scene() -> image::RgbaImage {
    image::load_from_memory(GOLDEN_SCENE_PNG)
        .expect("tests/golden/material_scene.png decodes")
        .to_rgba8()
}

/// Warnings and errors gpu-allocator logged in this process since the first [`device`]
/// (its leak report, when an allocator is dropped with live allocations, is one).
pub fn allocator_warnings() -> Vec<String> {
    ALLOCATOR_WARNINGS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

static ALLOCATOR_WARNINGS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The process's logger: `env_logger` (for `RUST_LOG`, printed through the test harness's
/// capture) that also keeps every gpu-allocator warning for [`allocator_warnings`].
struct TestLogger {
    inner: env_logger::Logger,
}

fn is_allocator_warning(m: &log::Metadata) -> bool {
    m.level() <= log::Level::Warn && m.target().starts_with("gpu_allocator")
}

impl log::Log for TestLogger {
    fn enabled(&self, m: &log::Metadata) -> bool {
        is_allocator_warning(m) || self.inner.enabled(m)
    }
    fn log(&self, r: &log::Record) {
        if is_allocator_warning(r.metadata()) {
            let line = format!("{}: {}", r.target(), r.args());
            ALLOCATOR_WARNINGS
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(line);
        }
        self.inner.log(r);
    }
    fn flush(&self) {
        self.inner.flush();
    }
}

fn install_logger() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let inner = env_logger::Builder::from_default_env()
            .is_test(true)
            .build();
        let max = inner.filter().max(log::LevelFilter::Warn);
        if log::set_boxed_logger(Box::new(TestLogger { inner })).is_ok() {
            log::set_max_level(max);
        }
    });
}

/// Proves that the validation layer's submit-time synchronization checks are on for
/// `device`: two raw batches on its main `VkQueue`, a fill then a copy of the filled
/// buffer, no synchronization between them and no host wait in between, must be reported
/// as `SYNC-HAZARD-READ-AFTER-WRITE` at `vkQueueSubmit2` (layers 1.3.239 and 1.4.309 both
/// do). Returns the hazard's text. The device must be the caller's alone, with no kiln
/// submission pending (kiln's own submissions take the queue's lock; these bypass it).
pub fn submit_time_hazard_of_raw_batches(device: &Device) -> String {
    use kiln::vk;
    let x = device.storage_buffer::<u32>("submit-time x", 1024).unwrap();
    let y = device.storage_buffer::<u32>("submit-time y", 1024).unwrap();
    let family = device.queue(kiln::QueueKind::Main).info().family;
    let before = device.validation_report().messages.len();
    // SAFETY: raw objects of this device, destroyed below after the queue is idle; no
    // other thread uses the queue meanwhile (the caller's contract).
    unsafe {
        let d = device.raw();
        let q = d.get_device_queue(family, 0);
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        let pool = d.create_command_pool(&info, None).unwrap();
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(pool)
            .command_buffer_count(2);
        let cbs = d.allocate_command_buffers(&alloc).unwrap();
        for (i, &cb) in cbs.iter().enumerate() {
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .unwrap();
            if i == 0 {
                d.cmd_fill_buffer(cb, x.raw(), 0, 4096, 7);
            } else {
                let region = vk::BufferCopy {
                    src_offset: 0,
                    dst_offset: 0,
                    size: 4096,
                };
                d.cmd_copy_buffer(cb, x.raw(), y.raw(), &[region]);
            }
            d.end_command_buffer(cb).unwrap();
            let c = [vk::CommandBufferSubmitInfo::default().command_buffer(cb)];
            let submit = [vk::SubmitInfo2::default().command_buffer_infos(&c)];
            d.queue_submit2(q, &submit, vk::Fence::null()).unwrap();
        }
        d.queue_wait_idle(q).unwrap();
        d.destroy_command_pool(pool, None);
    }
    let report = device.validation_report();
    report.messages[before.min(report.messages.len())..]
        .iter()
        .find(|m| m.contains("SYNC-HAZARD-READ-AFTER-WRITE") && m.contains("vkQueueSubmit2"))
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "submit-time synchronization validation is off: {:?}",
                report.messages
            )
        })
}

/// Under a layer 1.4 or later, layer 1.4.309 reports no
/// submit-time hazard between two kiln submissions on two kiln queues that nothing orders
/// (a raw fill on one, a raw copy of it on the other; on lavapipe's one `VkQueue` and on
/// the H200's separate queues alike), though it reports the same two batches submitted
/// raw ([`submit_time_hazard_of_raw_batches`]) and layer 1.3.239 reports kiln's. What
/// differs: kiln reads its timelines' counters at submit (collecting retired objects), and
/// the layer treats work the host saw complete as synchronized, as after a host wait; a
/// fill held behind a gate instead is a batch waiting for an unsignalled value, which the
/// layer checks only once it is signalled (and then reported nothing either). The tests
/// that provoke such hazards check the layer's submit-time checks with the raw batches
/// there instead: this returns true (after proving them on `device`) where `report` is a
/// layer 1.4's and kiln's hazard was not `found`; the caller's own check is then moot.
pub fn proved_by_raw_batches_under_layer_1_4(
    device: &Device,
    report: &ValidationReport,
    found: bool,
) -> bool {
    if found || report.layer_version < kiln::vk::make_api_version(0, 1, 4, 0) {
        return false;
    }
    let raw = submit_time_hazard_of_raw_batches(device);
    eprintln!("note: layer 1.4; its submit-time checks are on: {raw:.80}");
    true
}

/// Records into `cb` a deliberately invalid but harmless command: a copy between the
/// overlapping ranges `[0, 8)` and `[4, 12)` of `buffer` (VUID-vkCmdCopyBuffer-pRegions-00117),
/// for tests of the messages the layer raises about it.
///
/// # Safety
/// `cb` is a command buffer of `device` in the recording state (from `Recorder::raw` or
/// `raw_using`), and `buffer`, at least 12 bytes, stays alive until its submission
/// completes.
pub unsafe fn record_overlapping_copy(
    device: &Device,
    cb: kiln::vk::CommandBuffer,
    buffer: &kiln::Buffer,
) {
    let region = kiln::vk::BufferCopy {
        src_offset: 0,
        dst_offset: 4,
        size: 8,
    };
    // SAFETY: the caller's; the region is in range of a live buffer, invalid only by its
    // overlap.
    unsafe {
        device
            .raw()
            .cmd_copy_buffer(cb, buffer.raw(), buffer.raw(), &[region])
    };
}

/// Asserts that `e` failed the submission of a [`record_overlapping_copy`] recorded at
/// `file:line` (`KILN-E121`, the VUID, "recorded at file:line"); returns its message and
/// the "recorded at" text.
#[track_caller]
pub fn assert_overlapping_copy_reported(
    e: &kiln::Error,
    file: &str,
    line: u32,
) -> (String, String) {
    assert_eq!(e.code(), "KILN-E121", "{e}");
    let text = e.to_string();
    assert!(
        text.contains("VUID-vkCmdCopyBuffer-pRegions-00117"),
        "{text}"
    );
    let at = format!("recorded at {file}:{line}");
    assert!(text.contains(&at), "{at} not in {text}");
    (text, at)
}

/// A device-local (`GpuOnly`) storage buffer of `size` bytes, for copies and dispatches.
pub fn gpu_buffer(device: &Device, label: &str, size: u64) -> kiln::Buffer {
    device
        .buffer(
            &kiln::BufferDesc::default()
                .label(label)
                .size(size)
                .usage(kiln::vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(kiln::MemoryLocation::GpuOnly),
        )
        .unwrap()
}

/// `len` bytes that differ from byte to byte and from `seed` to `seed` (a multiplicative
/// hash of the index), for checking copies byte by byte.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) >> 11) as u8 ^ seed)
        .collect()
}
