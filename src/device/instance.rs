//! Vulkan instance, the Khronos validation layer and the debug-utils messenger.
//!
//! Messages go to `log` by severity (error → `error!`, warning → `warn!`, info → `debug!`,
//! verbose → `trace!`) with their message-id name, and are counted so a test can assert
//! that none was raised ([`ValidationReport`]).

use std::ffi::{c_void, CStr};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Once};

use ash::vk;

use crate::error::{vk_err, Error, Result};

const VALIDATION_LAYER: &CStr = c"VK_LAYER_KHRONOS_validation";

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

/// State the messenger callback writes into; in an `Arc` so its address is stable.
#[derive(Default)]
pub(crate) struct MessengerState {
    errors: AtomicU32,
    warnings: AtomicU32,
    /// Set once `vkDestroyInstance` has run (so a watch can tell teardown happened).
    pub destroyed: std::sync::atomic::AtomicBool,
    messages: Mutex<Vec<String>>,
}

impl MessengerState {
    pub(crate) fn report(&self, enabled: bool) -> ValidationReport {
        ValidationReport {
            enabled,
            errors: self.errors.load(Ordering::Relaxed),
            warnings: self.warnings.load(Ordering::Relaxed),
            messages: self.messages.lock().map(|m| m.clone()).unwrap_or_default(),
        }
    }
}

unsafe extern "system" fn debug_callback(
    severity: vk::DebugUtilsMessageSeverityFlagsEXT,
    types: vk::DebugUtilsMessageTypeFlagsEXT,
    data: *const vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    user: *mut c_void,
) -> vk::Bool32 {
    // SAFETY: the layer passes a valid callback-data pointer for the duration of the call
    // (VUID-PFN_vkDebugUtilsMessengerCallbackEXT); its strings are NUL-terminated or null.
    let (id_name, text) = unsafe {
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
        (s(d.p_message_id_name), s(d.p_message))
    };
    // SAFETY: `user` is the `MessengerState` in `Instance`'s Arc, which outlives the
    // messenger (destroyed first in `Instance::drop`).
    let state = unsafe { (user as *const MessengerState).as_ref() };
    let line = format!("[{types:?}] {id_name}: {text}");
    if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
        log::error!(target: "kiln::validation", "{line}");
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
        log::warn!(target: "kiln::validation", "{line}");
    } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::INFO) {
        log::debug!(target: "kiln::validation", "{line}");
    } else {
        log::trace!(target: "kiln::validation", "{line}");
    }
    if let Some(state) = state {
        let bad = severity.intersects(
            vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING,
        );
        if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::ERROR) {
            state.errors.fetch_add(1, Ordering::Relaxed);
        } else if severity.contains(vk::DebugUtilsMessageSeverityFlagsEXT::WARNING) {
            state.warnings.fetch_add(1, Ordering::Relaxed);
        }
        if bad {
            if let Ok(mut m) = state.messages.lock() {
                if m.len() < 64 {
                    m.push(format!("{id_name}: {text}"));
                }
            }
        }
    }
    vk::FALSE
}

/// Whether validation is wanted: `KILN_VALIDATION=0|1`, else on in debug builds.
pub(crate) fn validation_wanted() -> bool {
    match std::env::var("KILN_VALIDATION").as_deref() {
        Ok("0") | Ok("false") | Ok("off") => false,
        Ok(_) => true,
        Err(_) => cfg!(debug_assertions),
    }
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
    pub(crate) fn new(
        app_name: &CStr,
        validation: Option<bool>,
        extra: &[&CStr],
    ) -> Result<Instance> {
        // SAFETY: loading the system Vulkan loader; ash keeps the library alive in `Entry`.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| Error::LoaderMissing {
            detail: e.to_string(),
        })?;
        // SAFETY: a plain query with no external pointers.
        let version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(vk_err("vkEnumerateInstanceVersion"))?
            .unwrap_or(vk::API_VERSION_1_0);
        let api_version = if version >= vk::API_VERSION_1_3 {
            vk::API_VERSION_1_3
        } else {
            version
        };
        // SAFETY: plain queries with no external pointers.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(vk_err("vkEnumerateInstanceLayerProperties"))?;
        let exts = unsafe { entry.enumerate_instance_extension_properties(None) }
            .map_err(vk_err("vkEnumerateInstanceExtensionProperties"))?;
        let has_ext = |name: &CStr| {
            exts.iter()
                .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
        };
        let has_layer = layers
            .iter()
            .any(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
        let mut validation = validation.unwrap_or_else(validation_wanted);
        if validation && !has_layer {
            static WARN: Once = Once::new();
            WARN.call_once(|| {
                log::warn!(
                    "KILN-W001: validation requested but VK_LAYER_KHRONOS_validation is not \
                     installed; continuing without it (Debian/Ubuntu: `apt-get install \
                     vulkan-validationlayers`)"
                )
            });
            validation = false;
        }
        let validation_layer_version = layers
            .iter()
            .find(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER))
            .filter(|_| validation)
            .map_or(0, |l| l.spec_version);
        let debug_utils = has_ext(ash::ext::debug_utils::NAME);
        let mut ext_names = Vec::new();
        if debug_utils {
            ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        for e in extra {
            if !has_ext(e) {
                return Err(Error::MissingFeature {
                    device: "Vulkan instance".into(),
                    what: format!("instance extension {e:?} (needed for windows/surfaces)"),
                });
            }
            if !ext_names.contains(&e.as_ptr()) {
                ext_names.push(e.as_ptr());
            }
        }
        let surface = extra.contains(&ash::khr::surface::NAME);
        let mut flags = vk::InstanceCreateFlags::empty();
        if has_ext(ash::khr::portability_enumeration::NAME) {
            ext_names.push(ash::khr::portability_enumeration::NAME.as_ptr());
            flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
        }
        // Synchronization validation (VK_EXT_validation_features, provided by the layer) is
        // on with validation unless KILN_SYNC_VALIDATION=0.
        let sync_validation = validation
            && !matches!(std::env::var("KILN_SYNC_VALIDATION").as_deref(), Ok("0"))
            // SAFETY: plain query for the layer's own extensions.
            && unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .is_ok_and(|v| {
                    v.iter().any(|e| {
                        e.extension_name_as_c_str()
                            .is_ok_and(|n| n == ash::ext::validation_features::NAME)
                    })
                });
        if sync_validation {
            ext_names.push(ash::ext::validation_features::NAME.as_ptr());
        }
        let enabled_features = [vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION];
        let mut validation_features =
            vk::ValidationFeaturesEXT::default().enabled_validation_features(&enabled_features);
        let layer_names = if validation {
            vec![VALIDATION_LAYER.as_ptr()]
        } else {
            vec![]
        };
        let app = vk::ApplicationInfo::default()
            .application_name(app_name)
            .engine_name(c"kiln")
            .engine_version(1)
            .api_version(api_version);
        let messenger = Arc::<MessengerState>::default();
        let mut messenger_info = vk::DebugUtilsMessengerCreateInfoEXT::default()
            .message_severity(
                vk::DebugUtilsMessageSeverityFlagsEXT::ERROR
                    | vk::DebugUtilsMessageSeverityFlagsEXT::WARNING
                    | vk::DebugUtilsMessageSeverityFlagsEXT::INFO,
            )
            .message_type(
                vk::DebugUtilsMessageTypeFlagsEXT::GENERAL
                    | vk::DebugUtilsMessageTypeFlagsEXT::VALIDATION
                    | vk::DebugUtilsMessageTypeFlagsEXT::PERFORMANCE,
            )
            .pfn_user_callback(Some(debug_callback))
            .user_data(Arc::as_ptr(&messenger) as *mut c_void);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&ext_names)
            .flags(flags);
        if debug_utils {
            // Also catches messages from vkCreateInstance / vkDestroyInstance themselves.
            info = info.push_next(&mut messenger_info);
        }
        if sync_validation {
            info = info.push_next(&mut validation_features);
        }
        // SAFETY: every pointer in `info` refers to locals alive for this call.
        let raw = match unsafe { entry.create_instance(&info, None) } {
            Ok(r) => r,
            Err(vk::Result::ERROR_LAYER_NOT_PRESENT | vk::Result::ERROR_EXTENSION_NOT_PRESENT)
                if validation =>
            {
                log::warn!(
                    "KILN-W001: VK_LAYER_KHRONOS_validation is listed but could not be \
                     enabled; continuing without it (Debian/Ubuntu: `apt-get install \
                     vulkan-validationlayers`)"
                );
                return Instance::new(app_name, Some(false), extra);
            }
            Err(
                vk::Result::ERROR_INCOMPATIBLE_DRIVER | vk::Result::ERROR_INITIALIZATION_FAILED,
            ) => return Err(Error::NoDevice),
            Err(e) => return Err(vk_err("vkCreateInstance")(e)),
        };
        let debug = if debug_utils {
            let loader = ash::ext::debug_utils::Instance::new(&entry, &raw);
            // SAFETY: `messenger_info` points at the boxed state, kept alive in `Self`.
            match unsafe { loader.create_debug_utils_messenger(&messenger_info, None) } {
                Ok(m) => Some((loader, m)),
                Err(e) => {
                    // SAFETY: nothing was created from the instance yet.
                    unsafe { raw.destroy_instance(None) };
                    return Err(vk_err("vkCreateDebugUtilsMessengerEXT")(e));
                }
            }
        } else {
            None
        };
        Ok(Instance {
            entry,
            raw,
            api_version,
            debug,
            messenger,
            validation,
            validation_layer_version,
            surface,
        })
    }

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
            self.raw.destroy_instance(None);
        }
        self.messenger.destroyed.store(true, Ordering::Release);
    }
}
