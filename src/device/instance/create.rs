//! `Instance::new`: what `vkCreateInstance` is asked for is planned first
//! ([`InstancePlan`]: the layer, the extensions, the layer's features and how they are
//! passed), then the instance is created and its messenger attached; a failure after
//! `vkCreateInstance` drops the half-made [`Instance`], whose `Drop` destroys it (one
//! cleanup path).

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Once};

use ash::vk;

use super::{
    debug_callback, validation_wanted, Instance, LayerFeatures, MessengerState, VALIDATION_LAYER,
};
use crate::error::{vk_device_err, DeviceError, Result};

/// What `vkCreateInstance` is asked for.
struct InstancePlan {
    api_version: u32,
    /// The validation layer is enabled (asked for and installed).
    validation: bool,
    /// Its `specVersion` (0: not enabled).
    validation_layer_version: u32,
    debug_utils: bool,
    /// VK_KHR_surface is among the extensions asked for.
    surface: bool,
    ext_names: Vec<*const c_char>,
    flags: vk::InstanceCreateFlags,
    /// The layer's features for VkValidationFeaturesEXT.
    enabled_features: Vec<vk::ValidationFeatureEnableEXT>,
    /// The layer's features go as named settings (VK_EXT_layer_settings).
    use_settings: bool,
    /// ... else as VkValidationFeaturesEXT (VK_EXT_validation_features).
    validation_features: bool,
}

impl InstancePlan {
    /// The plan for `entry`'s loader: validation as asked (`None`: `KILN_VALIDATION`) where
    /// the layer is installed (else `KILN-W001`), VK_EXT_debug_utils where present, the
    /// `extra` extensions (`KILN-E107` where missing), portability enumeration where
    /// present, and the layer's `features`.
    fn new(
        entry: &ash::Entry,
        validation: Option<bool>,
        features: &LayerFeatures,
        extra: &[&CStr],
    ) -> Result<InstancePlan, DeviceError> {
        // SAFETY: a plain query with no external pointers.
        let version = unsafe { entry.try_enumerate_instance_version() }
            .map_err(vk_device_err("vkEnumerateInstanceVersion"))?
            .unwrap_or(vk::API_VERSION_1_0);
        // SAFETY: plain queries with no external pointers.
        let layers = unsafe { entry.enumerate_instance_layer_properties() }
            .map_err(vk_device_err("vkEnumerateInstanceLayerProperties"))?;
        // SAFETY: as above.
        let exts = unsafe { entry.enumerate_instance_extension_properties(None) }
            .map_err(vk_device_err("vkEnumerateInstanceExtensionProperties"))?;
        let has_ext = |name: &CStr| {
            exts.iter()
                .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
        };
        let layer = layers
            .iter()
            .find(|l| l.layer_name_as_c_str().is_ok_and(|n| n == VALIDATION_LAYER));
        let mut validation = validation.unwrap_or_else(validation_wanted);
        if validation && layer.is_none() {
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
        let debug_utils = has_ext(ash::ext::debug_utils::NAME);
        let mut ext_names = Vec::new();
        if debug_utils {
            ext_names.push(ash::ext::debug_utils::NAME.as_ptr());
        }
        for e in extra {
            if !has_ext(e) {
                return Err(DeviceError::MissingFeature {
                    device: "Vulkan instance".into(),
                    what: format!("instance extension {e:?} (needed for windows/surfaces)"),
                });
            }
            if !ext_names.contains(&e.as_ptr()) {
                ext_names.push(e.as_ptr());
            }
        }
        let mut flags = vk::InstanceCreateFlags::empty();
        if has_ext(ash::khr::portability_enumeration::NAME) {
            ext_names.push(ash::khr::portability_enumeration::NAME.as_ptr());
            flags |= vk::InstanceCreateFlags::ENUMERATE_PORTABILITY_KHR;
        }
        let mut plan = InstancePlan {
            api_version: version.min(vk::API_VERSION_1_3),
            validation,
            validation_layer_version: layer.filter(|_| validation).map_or(0, |l| l.spec_version),
            debug_utils,
            surface: extra.contains(&ash::khr::surface::NAME),
            ext_names,
            flags,
            enabled_features: Vec::new(),
            use_settings: false,
            validation_features: false,
        };
        if validation {
            plan.layer_features(entry, features);
        }
        Ok(plan)
    }

    /// How the validation layer gets `features` (VK_EXT_validation_features, provided by
    /// the layer): synchronization validation unless turned off, printf and GPU-assisted
    /// validation when asked; as named settings where the layer reads them
    /// (`layer_settings`), else VkValidationFeaturesEXT, else not at all (`KILN-W007`).
    fn layer_features(&mut self, entry: &ash::Entry, features: &LayerFeatures) {
        if features.synchronization {
            (self.enabled_features)
                .push(vk::ValidationFeatureEnableEXT::SYNCHRONIZATION_VALIDATION);
        }
        if features.shader_printf {
            (self.enabled_features).push(vk::ValidationFeatureEnableEXT::DEBUG_PRINTF);
        }
        if features.gpu_assisted {
            (self.enabled_features).push(vk::ValidationFeatureEnableEXT::GPU_ASSISTED);
        }
        // SAFETY: plain query for the layer's own extensions.
        let layer_exts =
            unsafe { entry.enumerate_instance_extension_properties(Some(VALIDATION_LAYER)) }
                .unwrap_or_default();
        let layer_has = |name: &CStr| {
            layer_exts
                .iter()
                .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
        };
        self.use_settings = layer_has(ash::ext::layer_settings::NAME);
        if self.use_settings {
            self.ext_names.push(ash::ext::layer_settings::NAME.as_ptr());
        }
        self.validation_features = !self.use_settings
            && !self.enabled_features.is_empty()
            && layer_has(ash::ext::validation_features::NAME);
        if self.validation_features {
            (self.ext_names).push(ash::ext::validation_features::NAME.as_ptr());
        } else if !self.use_settings && (features.shader_printf || features.gpu_assisted) {
            log::warn!(
                "KILN-W007: shader printf or GPU-assisted validation was asked for, but the \
                 validation layer lacks VK_EXT_validation_features; continuing without them \
                 (install a newer vulkan-validationlayers)"
            );
        }
    }
}

/// The messenger's create info: errors, warnings and infos of every type to
/// `debug_callback`, with `state` as its user data.
fn messenger_info(state: &Arc<MessengerState>) -> vk::DebugUtilsMessengerCreateInfoEXT<'static> {
    vk::DebugUtilsMessengerCreateInfoEXT::default()
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
        .user_data(Arc::as_ptr(state) as *mut c_void)
}

impl Instance {
    /// Loads the Vulkan loader and creates the instance (with the validation layer when
    /// `validation` says, `None`: `KILN_VALIDATION`) and its messenger.
    ///
    /// Errors: `KILN-E100` no loader, `KILN-E101` no driver, `KILN-E107` an `extra`
    /// extension missing, `KILN-E104` other Vulkan failures.
    pub(crate) fn new(
        app_name: &CStr,
        validation: Option<bool>,
        features: LayerFeatures,
        extra: &[&CStr],
    ) -> Result<Instance, DeviceError> {
        // SAFETY: loading the system Vulkan loader; ash keeps the library alive in `Entry`.
        let entry = unsafe { ash::Entry::load() }.map_err(|e| DeviceError::LoaderMissing {
            detail: e.to_string(),
        })?;
        let plan = InstancePlan::new(&entry, validation, &features, extra)?;
        let settings = super::super::layer_settings::settings(&features);
        let mut settings_info = vk::LayerSettingsCreateInfoEXT::default().settings(&settings);
        let mut validation_features = vk::ValidationFeaturesEXT::default()
            .enabled_validation_features(&plan.enabled_features);
        let layer_names = if plan.validation {
            vec![VALIDATION_LAYER.as_ptr()]
        } else {
            vec![]
        };
        let app = vk::ApplicationInfo::default()
            .application_name(app_name)
            .engine_name(c"kiln")
            .engine_version(1)
            .api_version(plan.api_version);
        let messenger = Arc::<MessengerState>::default();
        let mut messenger_info = messenger_info(&messenger);
        let mut info = vk::InstanceCreateInfo::default()
            .application_info(&app)
            .enabled_layer_names(&layer_names)
            .enabled_extension_names(&plan.ext_names)
            .flags(plan.flags);
        if plan.debug_utils {
            // Also catches messages from vkCreateInstance / vkDestroyInstance themselves.
            info = info.push_next(&mut messenger_info);
        }
        if plan.validation_features {
            info = info.push_next(&mut validation_features);
        }
        if plan.use_settings {
            info = info.push_next(&mut settings_info);
        }
        let created = {
            let _loader = super::super::loader::exclusive();
            // SAFETY: every pointer in `info` refers to locals alive for this call.
            unsafe { entry.create_instance(&info, None) }
        };
        let raw = match created {
            Ok(r) => r,
            Err(vk::Result::ERROR_LAYER_NOT_PRESENT | vk::Result::ERROR_EXTENSION_NOT_PRESENT)
                if plan.validation =>
            {
                log::warn!(
                    "KILN-W001: VK_LAYER_KHRONOS_validation is listed but could not be \
                     enabled; continuing without it (Debian/Ubuntu: `apt-get install \
                     vulkan-validationlayers`)"
                );
                return Instance::new(app_name, Some(false), features, extra);
            }
            Err(
                vk::Result::ERROR_INCOMPATIBLE_DRIVER | vk::Result::ERROR_INITIALIZATION_FAILED,
            ) => return Err(DeviceError::NoDevice),
            Err(e) => return Err(vk_device_err("vkCreateInstance")(e)),
        };
        messenger
            .layer_version
            .store(plan.validation_layer_version, Ordering::Relaxed);
        // From here on the instance's own Drop is the cleanup: an error drops it.
        let mut instance = Instance {
            entry,
            raw,
            api_version: plan.api_version,
            debug: None,
            messenger,
            validation: plan.validation,
            validation_layer_version: plan.validation_layer_version,
            surface: plan.surface,
        };
        if plan.debug_utils {
            let loader = ash::ext::debug_utils::Instance::new(&instance.entry, &instance.raw);
            // SAFETY: `messenger_info` points at the shared state, kept alive in the
            // instance.
            let m = unsafe { loader.create_debug_utils_messenger(&messenger_info, None) }
                .map_err(vk_device_err("vkCreateDebugUtilsMessengerEXT"))?;
            instance.debug = Some((loader, m));
        }
        Ok(instance)
    }
}
