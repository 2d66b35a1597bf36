//! Vulkan instance, the Khronos validation layer and the debug-utils messenger.
//!
//! Messages go to `log` by severity (error → `error!`, warning → `warn!`, info → `debug!`,
//! verbose → `trace!`) under the target `kiln::validation`, with their message-id name, and
//! are counted so a test can assert that none was raised ([`ValidationReport`]).
//!
//! **Nothing vanishes.** An error or warning (or a shader printf line) that `log` would
//! drop — no logger installed, `log::max_level()` is `Off`, or the logger filters that
//! target and level out — is written to stderr instead (`kiln: ...`), so a program without
//! a logger still sees what the layer said.
//!
//! **Shader printf** (`debugPrintfEXT`, the layer's `DEBUG-PRINTF` messages) goes to `log`
//! at `info` under the target `kiln::printf`, prefixed with the names of the pipelines and
//! shader modules the layer's message lists (kiln names pipelines `label (entry)`), and
//! the last 1024 lines are kept for [`ValidationReport::printf`].
//!
//! **The user's line.** The recorder's commands set the thread's *current caller* (their
//! `#[track_caller]` location, only when validation is on). A message the layer raises on
//! that thread while a command is being recorded (record-time validation is synchronous,
//! inside the `vkCmd*` call) is reported with ` [recorded at file:line]`; commands
//! recorded through `Recorder::raw` carry the location of the `raw()` call.
//!
//! Every error message is also kept with its sequence number, so the submission layer can
//! tell which errors were raised while a submission was recorded, submitted and waited for
//! (`DeviceDesc::validation_fail`: such a submission returns `KILN-E121`).

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::{c_void, CStr};
use std::panic::Location;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use ash::vk;

use super::messages::{classify, object_list, object_names, printf_text, Kind};
use super::queue_order::{ordered_note, QueueOrder, LAYER_FOLLOWS_TIMELINES};
use crate::error::{DeviceError, Result};

mod create;

pub(super) const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

/// Counts of validation-layer messages seen by one device's messenger.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationReport {
    /// Whether the validation layer is active on this instance.
    pub enabled: bool,
    /// Messages of severity ERROR.
    pub errors: u32,
    /// Messages of severity WARNING (validation and performance types included).
    pub warnings: u32,
    /// The first messages of severity WARNING or ERROR (at most 64), `"<id name>: <text>"`.
    pub messages: Vec<String>,
    /// How many of the errors and warnings are submit-time hazards between accesses that
    /// kiln's timeline waits order, each marked `[kiln: ordered: ...]` in its text: false
    /// positives of layers whose submit-time checks ignore timeline semaphores (1.3.239;
    /// Vulkan-ValidationLayers #7600). Counted in `errors`/`warnings` too.
    pub ordered: u32,
    /// The last shader printf lines (at most 1024), each `"<pipeline names>: <output>"`
    /// as logged under the target `kiln::printf` (not counted as errors or warnings).
    pub printf: Vec<String>,
    /// The validation layer's `specVersion` (`VK_MAKE_API_VERSION`; e.g. 1.3.239, 1.4.309),
    /// 0 when validation is off: which layer judged, so a caller can set aside a message
    /// only for the layer versions known to raise it falsely.
    pub layer_version: u32,
}

impl ValidationReport {
    /// True when no error or warning was reported.
    pub fn is_clean(&self) -> bool {
        self.errors == 0 && self.warnings == 0
    }
}

/// A handle on a device's validation counters that stays valid after the device is
/// dropped, so a test can check that teardown itself raised nothing (leaked objects are
/// reported by the layer's object tracker at `vkDestroyDevice`/`vkDestroyInstance`).
#[derive(Clone)]
pub struct ValidationWatch {
    pub(crate) state: Arc<MessengerState>,
    pub(crate) enabled: bool,
}

impl ValidationWatch {
    /// Counts so far.
    pub fn report(&self) -> ValidationReport {
        self.state.report(self.enabled)
    }

    /// True once the device's instance was destroyed: every kiln object of the device was
    /// dropped and teardown ran (so a clean report after it covers the object tracker's
    /// leak checks).
    pub fn torn_down(&self) -> bool {
        self.state.destroyed.load(Ordering::Acquire)
    }
}

/// The most recent error messages kept with their sequence numbers.
const RECENT_ERRORS: usize = 32;
/// The most recent printf lines kept.
const PRINTF_LINES: usize = 1024;

/// State the messenger callback writes into; in an `Arc` so its address is stable.
#[derive(Default)]
pub(crate) struct MessengerState {
    errors: AtomicU32,
    warnings: AtomicU32,
    ordered: AtomicU32,
    /// The layer's `specVersion` (0: none), set once the instance exists.
    pub layer_version: AtomicU32,
    /// The device was made with `DeviceDesc::allocations_beyond_limit`: the layer's warning
    /// about an allocation beyond `maxMemoryAllocationSize` is the user's documented choice.
    pub beyond_allocation_limit: std::sync::atomic::AtomicBool,
    /// Set once `vkDestroyInstance` has run (so a watch can tell teardown happened).
    pub destroyed: std::sync::atomic::AtomicBool,
    messages: Mutex<Vec<String>>,
    /// The last error messages, each with its number (`errors` after it was counted).
    recent: Mutex<VecDeque<(u32, String)>>,
    printf: Mutex<VecDeque<String>>,
}

impl MessengerState {
    pub(crate) fn report(&self, enabled: bool) -> ValidationReport {
        ValidationReport {
            enabled,
            errors: self.errors.load(Ordering::Relaxed),
            warnings: self.warnings.load(Ordering::Relaxed),
            messages: self.messages.lock().map(|m| m.clone()).unwrap_or_default(),
            ordered: self.ordered.load(Ordering::Relaxed),
            layer_version: self.layer_version.load(Ordering::Relaxed),
            printf: self
                .printf
                .lock()
                .map(|m| m.iter().cloned().collect())
                .unwrap_or_default(),
        }
    }

    /// Errors counted so far (a sequence number for [`errors_since`](Self::errors_since)).
    pub(crate) fn error_count(&self) -> u32 {
        self.errors.load(Ordering::Acquire)
    }

    /// The error messages counted after `count` (the last [`RECENT_ERRORS`] of them at
    /// most), and how many there were in all.
    pub(crate) fn errors_since(&self, count: u32) -> (u32, Vec<String>) {
        let now = self.error_count();
        if now <= count {
            return (0, Vec::new());
        }
        let texts = self
            .recent
            .lock()
            .map(|r| {
                r.iter()
                    .filter(|(n, _)| *n > count)
                    .map(|(_, t)| t.clone())
                    .collect()
            })
            .unwrap_or_default();
        (now - count, texts)
    }
}

thread_local! {
    /// The submission being made on this thread (label, pipelines), see [`SubmitContext`].
    static SUBMISSION: std::cell::RefCell<Option<(String, String)>> =
        const { std::cell::RefCell::new(None) };
    /// What orders the submission being made on this thread after other submissions
    /// (validation on), see [`QueueOrder`].
    static ORDER: Cell<Option<QueueOrder>> = const { Cell::new(None) };
    /// The `#[track_caller]` location of the recorder command being recorded on this
    /// thread (set only when validation is on).
    static CALLER: Cell<Option<&'static Location<'static>>> = const { Cell::new(None) };
}

/// Sets (or clears) this thread's current caller (see the module docs).
#[inline]
pub(crate) fn set_caller(location: Option<&'static Location<'static>>) {
    CALLER.with(|c| c.set(location));
}

/// While alive, messages the layer raises on this thread (during `vkQueueSubmit2`, where
/// the layer reports submit-time hazards and, for shader printf, the output of the
/// submissions it completes) name the submission's label, the pipelines it binds and where
/// its raw commands were recorded.
pub(crate) struct SubmitContext(());

impl SubmitContext {
    /// Enters the context of submission `label` binding `pipelines`, with commands recorded
    /// through `Recorder::raw` at `raw_calls`, ordered after what `order` says.
    pub(crate) fn enter(
        label: &str,
        pipelines: &[&str],
        raw_calls: &[&'static Location<'static>],
        order: Option<QueueOrder>,
    ) -> SubmitContext {
        ORDER.with(|o| o.set(order));
        let mut label = label.to_string();
        if !raw_calls.is_empty() {
            let at: Vec<String> = raw_calls
                .iter()
                .map(|l| format!("{}:{}", l.file(), l.line()))
                .collect();
            label = format!("{label}`, raw commands recorded at `{}", at.join(", "));
        }
        SUBMISSION.with(|s| *s.borrow_mut() = Some((label, pipelines.join(", "))));
        SubmitContext(())
    }
}

impl Drop for SubmitContext {
    fn drop(&mut self) {
        SUBMISSION.with(|s| *s.borrow_mut() = None);
        ORDER.with(|o| o.set(None));
    }
}

/// This thread's submission context: `(label, pipelines)`.
fn submission() -> Option<(String, String)> {
    SUBMISSION.with(|s| s.borrow().clone())
}

/// This thread's current caller.
pub(crate) fn caller() -> Option<&'static Location<'static>> {
    CALLER.with(|c| c.get())
}

/// Logs `line` at `level` under `target`, or writes it to stderr when `log` would drop it
/// and it is a warning, an error or printf output (see the module docs).
pub(crate) fn emit(level: log::Level, target: &str, line: &str) {
    let logged = level <= log::max_level()
        && log::logger().enabled(&log::Metadata::builder().level(level).target(target).build());
    if logged {
        log::logger().log(
            &log::Record::builder()
                .level(level)
                .target(target)
                .args(format_args!("{line}"))
                .build(),
        );
    } else if level <= log::Level::Warn || target == PRINTF_TARGET {
        eprintln!("kiln: {level} {target}: {line}");
    }
}

/// The `log` target of shader printf output.
pub(crate) const PRINTF_TARGET: &str = "kiln::printf";

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes a valid callback-data pointer for the duration of the call
    // (VUID-PFN_vkDebugUtilsMessengerCallbackEXT); its strings are NUL-terminated or null.
    let (id_name, text, names, objects) = unsafe {
        let Some(d) = data.as_ref() else {
            return vk::FALSE;
        };
        let s = |p: *const std::ffi::c_char| {
            if p.is_null() {
                String::new()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        let text = s(d.p_message);
        let objects = object_list(d, &text);
        (s(d.p_message_id_name), text, object_names(d), objects)
    };
    // SAFETY: `user` is the `MessengerState` in `Instance`'s Arc, which outlives the
    // messenger (destroyed first in `Instance::drop`).
    let state = unsafe { (user as *const MessengerState).as_ref() };
    let context = submission();
    let beyond_limit = state.is_some_and(|s| s.beyond_allocation_limit.load(Ordering::Relaxed));
    let kind = classify(&id_name, &text, beyond_limit);
    let why = match kind {
        Kind::LayerNote => Some("the layer's own note"),
        Kind::Allowed => Some("allowed by DeviceDesc::allocations_beyond_limit"),
        Kind::Printf | Kind::Message => None,
    };
    if let Some(why) = why {
        emit(
            log::Level::Info,
            "kiln::validation",
            &format!("{id_name}: {text} ({why}, not counted)"),
        );
        return vk::FALSE;
    }
    if kind == Kind::Printf {
        printf_message(state, context.as_ref(), names, &text);
        return vk::FALSE;
    }
    // Only for layers that need the note (`queue_order::LAYER_FOLLOWS_TIMELINES`).
    let old_layer =
        state.is_some_and(|s| s.layer_version.load(Ordering::Relaxed) < LAYER_FOLLOWS_TIMELINES);
    let ordered = ORDER
        .with(|o| o.get())
        .filter(|_| old_layer)
        .and_then(|o| ordered_note(&text, &o))
        .unwrap_or_default();
    let text = text + &objects;
    let at = match (caller(), &context) {
        (Some(l), _) => format!(" [recorded at {}:{}]", l.file(), l.line()),
        (None, Some((label, pipelines))) if !pipelines.is_empty() => {
            format!(" [submission `{label}`, pipelines {pipelines}]")
        }
        (None, Some((label, _))) => format!(" [submission `{label}`]"),
        _ => String::new(),
    } + &ordered;
    let line = format!("[{types:?}] {id_name}: {text}{at}");
    let level = if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        log::Level::Error
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        log::Level::Warn
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::INFO) {
        log::Level::Debug
    } else {
        log::Level::Trace
    };
    emit(level, "kiln::validation", &line);
    if let Some(state) = state {
        count_message(
            state,
            severity,
            &format!("{id_name}: {text}{at}"),
            !ordered.is_empty(),
        );
    }
    vk::FALSE
}

/// Shader printf output of the layer: logged under [`PRINTF_TARGET`] with the pipelines
/// (or the submission) it came from, and kept for `ValidationReport::printf`.
fn printf_message(
    state: Option<&MessengerState>,
    context: Option<&(String, String)>,
    names: String,
    text: &str,
) {
    // The layer's message lists the queue only: the pipelines of the submission it
    // completed are kiln's to add.
    let names = match context {
        Some((label, pipelines)) if names == "?" && !pipelines.is_empty() => {
            format!("{pipelines} (submission `{label}`)")
        }
        Some((label, _)) if names == "?" => format!("submission `{label}`"),
        _ => names,
    };
    let (output, pipeline) = printf_text(text);
    let names = match pipeline {
        Some(p) if names == "?" => p.to_string(),
        _ => names,
    };
    let line = format!("{names}: {output}");
    emit(log::Level::Info, PRINTF_TARGET, &line);
    if let Some(state) = state {
        if let Ok(mut p) = state.printf.lock() {
            if p.len() == PRINTF_LINES {
                p.pop_front();
            }
            p.push_back(line);
        }
    }
}

/// Counts a validation message of `severity` (`message`: as kept for the report;
/// `ordered`: it carried the queue-order note) in the messenger's state: errors and
/// warnings kept (the first 64), errors in the recent ring before they are counted.
fn count_message(
    state: &MessengerState,
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    message: &str,
    ordered: bool,
) {
    let bad = severity.intersects(
        vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
            | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
    );
    if bad {
        if ordered {
            state.ordered.fetch_add(1, Ordering::Relaxed);
        }
        if let Ok(mut m) = state.messages.lock() {
            if m.len() < 64 {
                m.push(message.to_string());
            }
        }
    }
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        // Kept before it is counted: a reader that sees the count finds the text.
        let mut r = state.recent.lock().unwrap_or_else(|p| p.into_inner());
        let n = state.errors.fetch_add(1, Ordering::AcqRel) + 1;
        if r.len() == RECENT_ERRORS {
            r.pop_front();
        }
        r.push_back((n, message.to_string()));
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        state.warnings.fetch_add(1, Ordering::Relaxed);
    }
}

/// Features of the validation layer beyond its core checks (Khronos validation layer,
/// `VkValidationFeaturesEXT`). Set through [`DeviceDesc::layer_features`](crate::DeviceDesc)
/// or `KILN_VALIDATION=` (a comma-separated list: `1`/`on`, `printf`, `gpu`, `sync`,
/// `nosync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LayerFeatures {
    /// Shader printf (`debugPrintfEXT`, `VK_VALIDATION_FEATURE_ENABLE_DEBUG_PRINTF_EXT`):
    /// output goes to `log` target `kiln::printf` and [`ValidationReport::printf`].
    pub shader_printf: bool,
    /// GPU-assisted validation (`VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT`:
    /// out-of-bounds descriptor indexing and buffer accesses checked on the GPU). The layer
    /// cannot run it together with shader printf (`KILN-E126`).
    pub gpu_assisted: bool,
    /// Synchronization validation (`VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT`),
    /// on by default; `KILN_SYNC_VALIDATION=0` or `nosync` turns it off.
    pub synchronization: bool,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { LayerFeatures {
    shader_printf: bool,
    gpu_assisted: bool,
    synchronization: bool,
} }

impl Default for LayerFeatures {
    fn default() -> Self {
        LayerFeatures {
            shader_printf: false,
            gpu_assisted: false,
            synchronization: true,
        }
    }
}

/// What `KILN_VALIDATION` asks for: `None` unset (the build's default), `Some((on,
/// features))` otherwise. Errors: `KILN-E127` a value kiln does not know.
fn validation_env() -> Result<Option<(bool, LayerFeatures)>, DeviceError> {
    let Ok(value) = std::env::var("KILN_VALIDATION") else {
        return Ok(None);
    };
    let mut features = LayerFeatures::default();
    if matches!(std::env::var("KILN_SYNC_VALIDATION").as_deref(), Ok("0")) {
        features.synchronization = false;
    }
    let mut on = true;
    for token in value.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match token {
            "0" | "false" | "off" => on = false,
            "1" | "true" | "on" => {}
            "printf" => features.shader_printf = true,
            "gpu" | "gpu-assisted" | "gpuav" => features.gpu_assisted = true,
            "sync" => features.synchronization = true,
            "nosync" => features.synchronization = false,
            _ => {
                return Err(DeviceError::ValidationSetting {
                    value: value.clone(),
                    token: token.to_string(),
                })
            }
        }
    }
    Ok(Some((on, features)))
}

/// Whether validation is wanted: `KILN_VALIDATION=0|1|<features>`, else on in debug builds.
pub(crate) fn validation_wanted() -> bool {
    match validation_env() {
        Ok(Some((on, _))) => on,
        Ok(None) => cfg!(debug_assertions),
        Err(_) => true,
    }
}

/// The layer features of a device: `explicit` (from `DeviceDesc`), else `KILN_VALIDATION`'s
/// list, else the defaults. Errors: `KILN-E127` (a bad `KILN_VALIDATION`), `KILN-E126`
/// printf together with GPU-assisted validation.
pub(crate) fn layer_features(
    explicit: Option<LayerFeatures>,
) -> Result<LayerFeatures, DeviceError> {
    let features = match explicit {
        Some(f) => f,
        None => match validation_env()? {
            Some((_, f)) => f,
            None => LayerFeatures {
                synchronization: !matches!(
                    std::env::var("KILN_SYNC_VALIDATION").as_deref(),
                    Ok("0")
                ),
                ..Default::default()
            },
        },
    };
    if features.shader_printf && features.gpu_assisted {
        return Err(DeviceError::LayerFeaturesConflict {
            features: "shader printf and GPU-assisted validation",
        });
    }
    Ok(features)
}

/// Instance plus its messenger. Dropped after the logical device.
pub(crate) struct Instance {
    #[allow(dead_code)] // keeps the loader library loaded while the instance lives
    pub entry: ash::Entry,
    pub raw: ash::Instance,
    pub api_version: u32,
    debug: Option<(ash::ext::debug_utils::Instance, vk::DebugUtilsMessengerEXT)>,
    /// Shared so the callback's user-data pointer stays valid and a
    /// [`ValidationWatch`] can outlive the device.
    pub messenger: Arc<MessengerState>,
    pub validation: bool,
    /// The validation layer's `specVersion` when it is enabled, else 0: extensions newer
    /// than the layer are not enabled under it (`features.rs`).
    pub validation_layer_version: u32,
    /// VK_KHR_surface (+ platform surface extensions) are enabled.
    pub surface: bool,
}

impl Instance {
    /// Whether VK_EXT_debug_utils is enabled (object names, labels).
    pub(crate) fn has_debug_utils(&self) -> bool {
        self.debug.is_some()
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: the logical device and everything created from it were destroyed before
        // (Instance is the last field dropped in `Shared`); the messenger goes first.
        unsafe {
            if let Some((loader, m)) = self.debug.take() {
                loader.destroy_debug_utils_messenger(m, None);
            }
            let _loader = super::loader::exclusive();
            self.raw.destroy_instance(None);
        }
        self.messenger.destroyed.store(true, Ordering::Release);
    }
}
