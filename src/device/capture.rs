//! RenderDoc captures (issue 27, part 2): RenderDoc's in-application API, loaded before the
//! instance, and the captures made through it.
//!
//! - **Loading.** RenderDoc captures Vulkan through its implicit layer
//!   (`VK_LAYER_RENDERDOC_Capture`), which only hooks instances created after
//!   `librenderdoc.so` is in the process (loading it sets `ENABLE_VULKAN_RENDERDOC_CAPTURE`
//!   for the loader). So [`before_instance`] runs in device creation before
//!   `vkCreateInstance`: it loads the library when `DeviceDesc::renderdoc` or
//!   `KILN_CAPTURE` asks, and otherwise only picks up a RenderDoc that is already there (an
//!   application launched from qrenderdoc or `renderdoccmd capture`). The library is never
//!   unloaded (RenderDoc's hooks stay in the process). `KILN_RENDERDOC_LIB` names another
//!   `librenderdoc.so` (a RenderDoc release unpacked anywhere).
//! - **API.** `RENDERDOC_GetAPI` for 1.6.0 (capture titles), else 1.4.1; older builds are
//!   refused (`KILN-W018`). Captures name the device by its `VkInstance`'s dispatch-table
//!   pointer (`RENDERDOC_DEVICEPOINTER_FROM_VKINSTANCE`), windows by wildcard.
//! - **Files.** RenderDoc writes `<template>_capture.rdc` (`_frame<N>` for its own
//!   triggers); kiln sets the template beside the requested path, reads the written name
//!   back (`GetCapture`) and renames it to the path asked for.
//! - **Never the user's failure.** Every problem is a coded warning, logged and returned in
//!   [`CaptureReport::warning`]; the work runs either way: `KILN-W018` RenderDoc missing or
//!   too old, `KILN-W019` the capture file cannot be written, `KILN-W020` no capture made
//!   (the device's instance is not hooked, another capture is running, RenderDoc wrote
//!   nothing), `KILN-W021` a `KILN_CAPTURE` value kiln cannot read.
//!
//! `KILN_CAPTURE=<path>.rdc[:frames=<N>]` captures the first device created in the process
//! from its creation on: until the device is dropped, or until the N-th present of a
//! `window::Presenter` (one file holding N frames). The run capture is a layer slot of the
//! device ([`RunCapture`]), ended at teardown after the device is idle.

use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use ash::vk::Handle;
use renderdoc_sys as rd;

use super::{Device, Shared};
use crate::error::Result;

/// Names another `librenderdoc.so` than the one the dynamic linker finds.
const LIB_ENV: &str = "KILN_RENDERDOC_LIB";
/// `<path>.rdc[:frames=<N>]`: capture the first device of the process (module docs).
const CAPTURE_ENV: &str = "KILN_CAPTURE";
#[cfg(windows)]
const LIB_NAME: &str = "renderdoc.dll";
#[cfg(not(windows))]
const LIB_NAME: &str = "librenderdoc.so";
/// What to install, for the warnings.
const INSTALL: &str = "Debian/Ubuntu: `apt-get install librenderdoc`; or set \
                       KILN_RENDERDOC_LIB to the librenderdoc.so of a RenderDoc 1.8 or newer";

/// RenderDoc's function table, loaded once per process.
struct Api {
    table: &'static rd::RENDERDOC_API_1_6_0,
    /// `SetCaptureTitle` is in the table (API 1.6.0).
    titles: bool,
    /// `GetAPIVersion`'s answer.
    version: (i32, i32, i32),
}

// SAFETY: RenderDoc's in-application API may be called from any thread (its functions
// lock internally); the table itself is immutable for the life of the process.
unsafe impl Send for Api {}
// SAFETY: as above.
unsafe impl Sync for Api {}

static API: OnceLock<Api> = OnceLock::new();
/// Serializes loading (a failed load is tried again by the next device that asks).
static LOADING: Mutex<()> = Mutex::new(());
/// A capture of kiln's is running (RenderDoc makes one at a time).
static CAPTURING: AtomicBool = AtomicBool::new(false);
/// `KILN_CAPTURE` was taken by a device already.
static RUN_TAKEN: AtomicBool = AtomicBool::new(false);
/// The `KILN-W018` text of the last load that failed.
static LOAD_FAILED: Mutex<Option<String>> = Mutex::new(None);

/// The outcome of a capture: the file written, or the warning that says why none was.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CaptureReport {
    /// The `.rdc` file RenderDoc wrote (the path asked for), `None` when none was written.
    pub file: Option<PathBuf>,
    /// The coded warning (`KILN-W018`…`KILN-W021`), also logged, when something kept the
    /// capture from being made as asked; `None` when it was.
    pub warning: Option<String>,
}

impl CaptureReport {
    fn warn(text: String) -> CaptureReport {
        warn(&text);
        CaptureReport {
            file: None,
            warning: Some(text),
        }
    }
}

/// Logs a warning on target `kiln::capture`, or writes it to stderr without a logger.
fn warn(text: &str) {
    super::instance::emit(log::Level::Warn, "kiln::capture", text);
}

/// The library's name and how the process has it: already loaded (RTLD_NOLOAD) or loaded
/// now.
fn open(load: bool) -> std::result::Result<Option<libloading::Library>, String> {
    let explicit = std::env::var_os(LIB_ENV);
    let name = explicit.clone().unwrap_or_else(|| LIB_NAME.into());
    #[cfg(target_os = "linux")]
    {
        use libloading::os::unix::Library;
        // SAFETY: RTLD_NOLOAD never runs a library's initializers: it only finds one that
        // is loaded already.
        if let Ok(lib) = unsafe { Library::open(Some(&name), libc::RTLD_NOW | libc::RTLD_NOLOAD) } {
            return Ok(Some(lib.into()));
        }
    }
    if !load {
        return Ok(None);
    }
    // SAFETY: librenderdoc's initializers install its hooks and set the loader's
    // environment variable; they are made to run in any process that loads it.
    match unsafe { libloading::Library::new(&name) } {
        Ok(lib) => Ok(Some(lib)),
        Err(e) => Err(format!(
            "{} could not be loaded ({e})",
            Path::new(&name).display()
        )),
    }
}

/// `RENDERDOC_GetAPI` of `lib`, 1.6.0 or else 1.4.1.
fn get_api(lib: &libloading::Library) -> std::result::Result<Api, String> {
    // SAFETY: `RENDERDOC_GetAPI` has this signature in every RenderDoc (renderdoc_app.h).
    let get: libloading::Symbol<'_, unsafe extern "C" fn(u32, *mut *mut c_void) -> i32> =
        unsafe { lib.get(b"RENDERDOC_GetAPI\0") }
            .map_err(|e| format!("it has no RENDERDOC_GetAPI ({e})"))?;
    for (version, titles) in [
        (rd::eRENDERDOC_API_Version_1_6_0, true),
        (rd::eRENDERDOC_API_Version_1_4_1, false),
    ] {
        let mut table: *mut c_void = std::ptr::null_mut();
        // SAFETY: `table` is a valid out pointer; RenderDoc fills it when it knows the
        // version and returns 1.
        if unsafe { get(version, &mut table) } == 1 && !table.is_null() {
            // SAFETY: for these versions RenderDoc hands out a table laid out as
            // RENDERDOC_API_1_6_0 (1.4.1 is its prefix; `titles` guards the rest); it
            // lives as long as the library, which is never unloaded.
            let table = unsafe { &*(table as *const rd::RENDERDOC_API_1_6_0) };
            let (mut major, mut minor, mut patch) = (0, 0, 0);
            if let Some(f) = table.GetAPIVersion {
                // SAFETY: three valid out pointers.
                unsafe { f(&mut major, &mut minor, &mut patch) };
            }
            return Ok(Api {
                table,
                titles,
                version: (major, minor, patch),
            });
        }
    }
    Err("it is older than the in-application API 1.4.1 that kiln needs (RenderDoc 1.8)".into())
}

/// Loads RenderDoc when `load`, else finds one already in the process. `Err` is the
/// `KILN-W018` text.
fn api(load: bool) -> std::result::Result<Option<&'static Api>, String> {
    if let Some(api) = API.get() {
        return Ok(Some(api));
    }
    let _guard = LOADING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(api) = API.get() {
        return Ok(Some(api));
    }
    let warn = |why: String| {
        format!(
            "KILN-W018: a RenderDoc capture was asked for but RenderDoc is not usable: {why}; \
             the work runs without a capture ({INSTALL})"
        )
    };
    let remember = |text: String| {
        *LOAD_FAILED.lock().unwrap_or_else(|e| e.into_inner()) = Some(text.clone());
        text
    };
    let Some(lib) = open(load).map_err(warn).map_err(remember)? else {
        return Ok(None);
    };
    let api = get_api(&lib).map_err(warn).map_err(remember)?;
    // RenderDoc stays in the process: its hooks are in every instance made since.
    std::mem::forget(lib);
    if load {
        // kiln starts and ends the captures: RenderDoc's overlay would only draw over the
        // frames the user's window shows (kept when RenderDoc launched the application).
        if let Some(mask) = api.table.MaskOverlayBits {
            // SAFETY: a plain call into the loaded API.
            unsafe { mask(0, 0) };
        }
    }
    log::info!(
        "kiln: RenderDoc in-application API {}.{}.{} loaded",
        api.version.0,
        api.version.1,
        api.version.2
    );
    Ok(Some(API.get_or_init(|| api)))
}

/// `KILN_CAPTURE`'s path and frame count. `Err` is the `KILN-W021` text.
fn parse_capture_env(value: &str) -> std::result::Result<(PathBuf, Option<u32>), String> {
    let (path, frames) = match value.rsplit_once(":frames=") {
        Some((p, n)) => match n.parse::<u32>() {
            Ok(n) if n > 0 => (p, Some(n)),
            _ => {
                return Err(format!(
                    "KILN-W021: KILN_CAPTURE=`{value}`: `frames=` takes a count of 1 or more; \
                     no capture is made (write KILN_CAPTURE=<path>.rdc or \
                     <path>.rdc:frames=<N>)"
                ))
            }
        },
        None => (value, None),
    };
    if path.is_empty() {
        return Err(format!(
            "KILN-W021: KILN_CAPTURE=`{value}` names no file; no capture is made \
             (write KILN_CAPTURE=<path>.rdc or <path>.rdc:frames=<N>)"
        ));
    }
    Ok((PathBuf::from(path), frames))
}

/// Before `vkCreateInstance` of a device: loads RenderDoc where `renderdoc`
/// (`DeviceDesc::renderdoc`) or, when that is `None`, `KILN_CAPTURE` asks; else finds one
/// already loaded. A missing RenderDoc is `KILN-W018`, logged.
pub(crate) fn before_instance(renderdoc: Option<bool>) {
    let load = match renderdoc {
        Some(false) => return,
        Some(true) => true,
        None => std::env::var_os(CAPTURE_ENV).is_some_and(|v| !v.is_empty()),
    };
    if let Err(text) = api(load) {
        warn(&text);
    }
}

/// Whether RenderDoc is in the process and hooks new instances (labels are then worth
/// recording).
pub(crate) fn loaded() -> bool {
    API.get().is_some() && DISABLED.get().is_none()
}

/// The environment variable that enables RenderDoc's implicit layer (its layer manifest's
/// `enable_environment`); librenderdoc sets it when it is loaded.
const LAYER_ENV: &str = "ENABLE_VULKAN_RENDERDOC_CAPTURE";
/// Why RenderDoc's layer was turned off for this process (the `KILN-W018` text).
static DISABLED: OnceLock<String> = OnceLock::new();

/// Device creation with RenderDoc: loads it before the instance where asked
/// ([`before_instance`]) and runs `create`. RenderDoc's layer reports only the Vulkan
/// version and features it can capture (RenderDoc 1.24, Debian 12's, reports Vulkan 1.2
/// for lavapipe 22.3's 1.3 device): when that leaves the device without what kiln needs
/// (`KILN-E107`), kiln logs `KILN-W018`, turns the layer off for the instances made from
/// then on and creates the device again, so the user's work runs uncaptured.
pub(crate) fn create_device<T>(
    renderdoc: Option<bool>,
    create: impl Fn() -> Result<T>,
) -> Result<T> {
    before_instance(renderdoc);
    match create() {
        Err(e) if e.code() == "KILN-E107" && loaded() => {
            let api = API.get().map_or((0, 0, 0), |a| a.version);
            let text = format!(
                "KILN-W018: the RenderDoc installed (in-application API {}.{}.{}) cannot \
                 capture this device: through its layer {e}; RenderDoc is turned off for this \
                 process and the work runs without a capture (install a RenderDoc whose Vulkan \
                 layer supports Vulkan 1.3 and set KILN_RENDERDOC_LIB to its librenderdoc.so)",
                api.0, api.1, api.2
            );
            warn(&text);
            let _ = DISABLED.set(text);
            {
                let _loader = super::loader::exclusive();
                // The loader reads the variable at vkCreateInstance, which kiln makes under
                // the same lock; librenderdoc set it the same way when it was loaded.
                std::env::remove_var(LAYER_ENV);
            }
            create()
        }
        other => other,
    }
}

/// RenderDoc's name for the device: the dispatch-table pointer of its `VkInstance`.
fn device_pointer(shared: &Shared) -> *mut c_void {
    let instance = shared.instance.raw.handle().as_raw() as *const *mut c_void;
    // SAFETY: a dispatchable handle points at an object whose first word is the loader's
    // dispatch-table pointer (Vulkan loader interface, "Dispatchable object creation");
    // the instance lives as long as `shared`.
    unsafe { *instance }
}

/// A capture of kiln's in progress.
struct Active {
    api: &'static Api,
    device: *mut c_void,
    /// The file asked for.
    path: PathBuf,
    /// `GetNumCaptures` before it started.
    before: u32,
}

/// Why a capture cannot start: the warning, logged by the caller.
fn start(shared: &Shared, path: &Path, title: &str) -> std::result::Result<Active, String> {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    check_writable(&path)?;
    if let Some(text) = DISABLED.get() {
        return Err(text.clone());
    }
    let Some(api) = API.get() else {
        let failed = LOAD_FAILED
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        return Err(match failed.map_or_else(|| api(false).map(|_| ()), Err) {
            Err(text) => text,
            Ok(()) => format!(
                "KILN-W018: a RenderDoc capture to `{}` was asked for but RenderDoc was not \
                 loaded when the device was created; the work runs without a capture (set \
                 DeviceDesc::renderdoc = Some(true) or KILN_CAPTURE, and install it: {INSTALL})",
                path.display()
            ),
        });
    };
    if CAPTURING.swap(true, Ordering::AcqRel) {
        return Err(format!(
            "KILN-W020: no capture to `{}`: another RenderDoc capture of kiln's is running \
             (RenderDoc makes one at a time); the work runs inside that one",
            path.display()
        ));
    }
    let t = api.table;
    let template = path.with_extension("");
    let device = device_pointer(shared);
    let c_template = CString::new(template.to_string_lossy().into_owned()).unwrap_or_default();
    let c_title = CString::new(title).unwrap_or_default();
    // SAFETY: calls into the loaded API with NUL-terminated strings that outlive them; the
    // union's members are one function pointer under two names.
    let capturing = unsafe {
        if let Some(f) = t.__bindgen_anon_2.SetCaptureFilePathTemplate {
            f(c_template.as_ptr());
        }
        let before = t.GetNumCaptures.map_or(0, |f| f());
        if let (true, Some(f)) = (api.titles, t.SetCaptureTitle) {
            f(c_title.as_ptr());
        }
        if let Some(f) = t.StartFrameCapture {
            f(device, std::ptr::null_mut());
        }
        (t.IsFrameCapturing.map_or(0, |f| f()) == 1).then_some(before)
    };
    match capturing {
        Some(before) => Ok(Active {
            api,
            device,
            path,
            before,
        }),
        None => {
            CAPTURING.store(false, Ordering::Release);
            Err(format!(
                "KILN-W020: no capture to `{}`: RenderDoc {}.{}.{} is loaded but does not \
                 capture this device (it was loaded after the device's instance was made, or \
                 its Vulkan layer is missing: /usr/share/vulkan/implicit_layer.d/\
                 renderdoc_capture.json of `librenderdoc`); the work runs without a capture",
                path.display(),
                api.version.0,
                api.version.1,
                api.version.2
            ))
        }
    }
}

/// `KILN-W019` unless a file can be created at `path` (an existing one is kept until the
/// capture replaces it). Only a regular file is replaced: a FIFO would block the open
/// until a reader came (a hang), and a device node such as `/dev/null` would be replaced
/// by the capture's rename.
fn check_writable(path: &Path) -> std::result::Result<(), String> {
    if let Ok(meta) = std::fs::metadata(path) {
        if !meta.is_file() {
            return Err(format!(
                "KILN-W019: the capture file `{}` exists and is not a regular file (a \
                 directory, FIFO, socket or device); the work runs without a capture (name a \
                 new file or a regular one to replace)",
                path.display()
            ));
        }
    }
    let existed = path.exists();
    // Non-blocking: a FIFO made between the check above and here fails instead of waiting.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let opened = options.open(path);
    match opened {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => Err(format!(
            "KILN-W019: the capture file `{}` cannot be written ({e}); the work runs without \
             a capture (name a file in a directory that exists and that you can write)",
            path.display()
        )),
    }
}

impl Active {
    /// Ends the capture and moves RenderDoc's file to the path asked for.
    fn end(self) -> CaptureReport {
        let t = self.api.table;
        // SAFETY: calls into the loaded API; `name` has the length RenderDoc reported.
        let written = unsafe {
            let ended = t
                .EndFrameCapture
                .map_or(0, |f| f(self.device, std::ptr::null_mut()));
            CAPTURING.store(false, Ordering::Release);
            let count = t.GetNumCaptures.map_or(0, |f| f());
            match (ended, t.GetCapture) {
                (1, Some(get)) if count > self.before => {
                    let mut len = 0u32;
                    let mut stamp = 0u64;
                    get(count - 1, std::ptr::null_mut(), &mut len, &mut stamp);
                    let mut name = vec![0u8; len as usize + 1];
                    get(count - 1, name.as_mut_ptr().cast(), &mut len, &mut stamp);
                    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                    Some(PathBuf::from(
                        String::from_utf8_lossy(&name[..end]).into_owned(),
                    ))
                }
                _ => None,
            }
        };
        let Some(written) = written else {
            return CaptureReport::warn(format!(
                "KILN-W020: no capture to `{}`: RenderDoc ended the capture without writing a \
                 file (its log: /tmp/RenderDoc/); the work ran",
                self.path.display()
            ));
        };
        if written == self.path {
            return written_report(written);
        }
        match std::fs::rename(&written, &self.path) {
            Ok(()) => written_report(self.path),
            Err(e) => CaptureReport {
                warning: CaptureReport::warn(format!(
                    "KILN-W019: RenderDoc wrote `{}` but it could not be moved to `{}` ({e}); \
                     the capture stays where RenderDoc wrote it",
                    written.display(),
                    self.path.display()
                ))
                .warning,
                file: Some(written),
            },
        }
    }
}

fn written_report(file: PathBuf) -> CaptureReport {
    log::info!("kiln: RenderDoc capture written to {}", file.display());
    CaptureReport {
        file: Some(file),
        warning: None,
    }
}

impl Device {
    /// Captures with RenderDoc what the device does while `work` runs, into the `.rdc`
    /// file `path` (replaced if it exists), for RenderDoc's replay UI (`qrenderdoc path`)
    /// or its Python module; returns `work`'s result and the [`CaptureReport`].
    ///
    /// The capture holds every command buffer submitted to this device meanwhile (from any
    /// thread), with kiln's debug labels (its submissions' labels and timing scopes) as
    /// RenderDoc markers, and the resources and pipelines they use, made before or inside.
    /// Work still running at the end is waited for by RenderDoc.
    ///
    /// RenderDoc must be in the process before the device's instance is made:
    /// [`DeviceDesc::renderdoc`](crate::DeviceDesc::renderdoc) `= Some(true)` or
    /// `KILN_CAPTURE` loads it (`librenderdoc`, Debian package `librenderdoc`), and an
    /// application launched from RenderDoc has it already.
    ///
    /// Never fails the work: `work` runs once whatever happens, and what kept the capture
    /// from being written is a coded warning, logged and in [`CaptureReport::warning`]:
    /// `KILN-W018` RenderDoc missing, too old (before 1.8) or loaded after the device was
    /// made; `KILN-W019` `path` cannot be written; `KILN-W020` another capture is running
    /// or RenderDoc does not capture this device. A `work` that panics ends the capture
    /// (its file is written as for a return) before the panic goes on.
    pub fn capture<R>(
        &self,
        path: impl AsRef<Path>,
        work: impl FnOnce() -> R,
    ) -> (R, CaptureReport) {
        let path = path.as_ref();
        let title = path
            .file_stem()
            .map_or_else(|| "kiln".to_string(), |s| s.to_string_lossy().into_owned());
        match start(&self.shared, path, &title) {
            Ok(active) => {
                // Ended even when `work` panics: else RenderDoc stays capturing and every
                // later capture of the process is `KILN-W020` ("another is running").
                let mut guard = EndOnDrop(Some(active));
                let out = work();
                let report = guard.0.take().map(Active::end).unwrap_or_default();
                (out, report)
            }
            Err(text) => (work(), CaptureReport::warn(text)),
        }
    }
}

/// Ends its capture when dropped (by an unwinding `work` of [`Device::capture`]).
struct EndOnDrop(Option<Active>);

impl Drop for EndOnDrop {
    fn drop(&mut self) {
        if let Some(active) = self.0.take() {
            active.end();
        }
    }
}

/// The `KILN_CAPTURE` capture of a device (a layer slot: ended at teardown).
pub(crate) struct RunCapture {
    active: Mutex<Option<Active>>,
    /// Presents left before the capture ends (`frames=N`); `u32::MAX` without a count.
    frames_left: AtomicU32,
}

// SAFETY: `Active`'s device pointer is RenderDoc's key for the instance, never dereferenced
// by kiln; the rest is plain data.
unsafe impl Send for Active {}

impl RunCapture {
    fn end(&self) {
        let active = self.active.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(active) = active {
            active.end();
        }
    }
}

impl super::slots::LayerSlot for RunCapture {
    fn teardown(&mut self, _device: &Shared) {
        self.end();
    }
}

/// After device creation: starts the `KILN_CAPTURE` capture when the variable is set and
/// no device took it before, and registers the slot ([`RunCapture`]).
pub(crate) fn register_run_capture(shared: &mut Shared) -> Result<()> {
    let mut run = RunCapture {
        active: Mutex::new(None),
        frames_left: AtomicU32::new(u32::MAX),
    };
    if let Some(value) = std::env::var_os(CAPTURE_ENV).filter(|v| !v.is_empty()) {
        if !RUN_TAKEN.swap(true, Ordering::AcqRel) {
            let value = value.to_string_lossy();
            match parse_capture_env(&value) {
                Err(text) => warn(&text),
                Ok((path, frames)) => match start(shared, &path, "KILN_CAPTURE") {
                    Ok(active) => {
                        log::info!("kiln: capturing to {} (KILN_CAPTURE)", path.display());
                        run.active = Mutex::new(Some(active));
                        run.frames_left = AtomicU32::new(frames.unwrap_or(u32::MAX));
                    }
                    Err(text) => warn(&text),
                },
            }
        }
    }
    shared.register_slot(run)
}

#[cfg(feature = "window")]
/// A present of a `window::Presenter` of the device: ends a `KILN_CAPTURE=…:frames=N`
/// capture after its N-th.
pub(crate) fn presented(shared: &Shared) {
    let Ok(run) = shared.slot::<RunCapture>() else {
        return;
    };
    let left = run.frames_left.load(Ordering::Acquire);
    if left == u32::MAX || left == 0 {
        return;
    }
    if run.frames_left.fetch_sub(1, Ordering::AcqRel) == 1 {
        run.end();
    }
}

#[cfg(test)]
mod tests {
    use super::parse_capture_env;
    use std::path::PathBuf;

    #[test]
    fn capture_env_values() {
        assert_eq!(
            parse_capture_env("a/b.rdc"),
            Ok((PathBuf::from("a/b.rdc"), None))
        );
        assert_eq!(
            parse_capture_env("b.rdc:frames=3"),
            Ok((PathBuf::from("b.rdc"), Some(3)))
        );
        for bad in ["b.rdc:frames=0", "b.rdc:frames=x", ":frames=2"] {
            let e = parse_capture_env(bad).unwrap_err();
            assert!(e.starts_with("KILN-W021"), "{e}");
        }
    }
}
