//! The validation layer's switches, set the way each layer version reads them.
//!
//! Layers that have `VK_EXT_layer_settings` (1.3.268 and later; Debian 13's 1.4.309) take
//! every switch as a named setting chained into `VkInstanceCreateInfo`
//! (`VkLayerSettingsCreateInfoEXT`): synchronization validation and its submit-time checks
//! (`validate_sync`, `syncval_submit_time_validation`), shader printf to the debug messenger
//! rather than stdout, naming the pipeline (`printf_enable`, `printf_to_stdout`,
//! `printf_verbose`), GPU-assisted validation
//! (`gpuav_enable`), and no duplicate-message limit (`enable_message_limit`: kiln counts
//! every message, and the layer would stop reporting an error after its tenth repeat). The
//! names are the layer manifest's (`VkLayer_khronos_validation.json`, `features.settings`).
//!
//! Older layers (Debian 12's 1.3.239) know only `VkValidationFeaturesEXT`, which has no
//! switch for submit-time checks: those come from the `VK_LAYER_ENABLES` variable, which
//! `cargo xtask test` sets for kiln's own tests on such a layer (`instance.rs` chooses the
//! path).

use std::ffi::CStr;

use ash::vk;

use super::instance::LayerFeatures;
use super::instance::VALIDATION_LAYER;

/// The message kinds the layer reports (`report_flags`, a FLAGS setting, passed as
/// strings): with shader printf, `info` too, which printf output is (without it layer 1.4
/// turns it on itself and says so in a `VALIDATION-SETTINGS` warning).
struct Strings([*const std::ffi::c_char; 4]);
// SAFETY: the pointers are to static, immutable NUL-terminated strings.
unsafe impl Sync for Strings {}
static REPORT_WITH_INFO: Strings = Strings([
    c"error".as_ptr(),
    c"warn".as_ptr(),
    c"perf".as_ptr(),
    c"info".as_ptr(),
]);

/// `VK_TRUE` and `VK_FALSE` as the `VkBool32` arrays a setting points at.
static TRUE: [vk::Bool32; 1] = [vk::TRUE];
static FALSE: [vk::Bool32; 1] = [vk::FALSE];

/// The boolean settings for `features`, by the layer's names (pure: unit-tested below).
pub(crate) fn plan(features: &LayerFeatures) -> Vec<(&'static CStr, bool)> {
    vec![
        (c"validate_sync", features.synchronization),
        (c"syncval_submit_time_validation", features.synchronization),
        (c"printf_enable", features.shader_printf),
        (c"printf_to_stdout", false),
        // Verbose: the message names the pipeline (kiln prefixes each line with it).
        (c"printf_verbose", features.shader_printf),
        (c"gpuav_enable", features.gpu_assisted),
        (c"enable_message_limit", false),
    ]
}

/// The `VkLayerSettingEXT`s of [`plan`], pointing at static names and values only (so the
/// array can outlive any local).
pub(crate) fn settings(features: &LayerFeatures) -> Vec<vk::LayerSettingEXT<'static>> {
    let mut out: Vec<_> = plan(features)
        .into_iter()
        .map(|(name, on)| {
            let value: &'static [vk::Bool32; 1] = if on { &TRUE } else { &FALSE };
            vk::LayerSettingEXT {
                p_layer_name: VALIDATION_LAYER.as_ptr(),
                p_setting_name: name.as_ptr(),
                ty: vk::LayerSettingTypeEXT::BOOL32,
                value_count: 1,
                p_values: value.as_ptr().cast(),
                ..Default::default()
            }
        })
        .collect();
    if features.shader_printf {
        out.push(vk::LayerSettingEXT {
            p_layer_name: VALIDATION_LAYER.as_ptr(),
            p_setting_name: c"report_flags".as_ptr(),
            ty: vk::LayerSettingTypeEXT::STRING,
            value_count: REPORT_WITH_INFO.0.len() as u32,
            p_values: REPORT_WITH_INFO.0.as_ptr().cast(),
            ..Default::default()
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(plan: &[(&CStr, bool)], name: &CStr) -> bool {
        plan.iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
            .unwrap_or_else(|| panic!("{name:?} not set"))
    }

    #[test]
    fn the_defaults_are_sync_validation_with_submit_time_checks() {
        let p = plan(&LayerFeatures::default());
        assert!(get(&p, c"validate_sync"));
        assert!(get(&p, c"syncval_submit_time_validation"));
        assert!(!get(&p, c"printf_enable"));
        assert!(!get(&p, c"gpuav_enable"));
        assert!(!get(&p, c"enable_message_limit"));
    }

    #[test]
    fn printf_goes_to_the_messenger_and_gpu_av_is_its_own_switch() {
        let f = LayerFeatures {
            shader_printf: true,
            gpu_assisted: false,
            synchronization: false,
        };
        let p = plan(&f);
        assert!(get(&p, c"printf_enable"));
        assert!(!get(&p, c"printf_to_stdout"));
        assert!(!get(&p, c"validate_sync"));
        let s = settings(&f);
        assert_eq!(s.len(), p.len() + 1, "and report_flags");
        // SAFETY: the static name `settings` set.
        let last = unsafe { CStr::from_ptr(s[p.len()].p_setting_name) };
        assert_eq!(last, c"report_flags");
        assert_eq!(s[p.len()].value_count, 4);
        for (setting, (name, on)) in s.iter().zip(&p) {
            // SAFETY: the pointers are the static names and values `settings` set.
            let (n, v) = unsafe {
                (
                    CStr::from_ptr(setting.p_setting_name),
                    *setting.p_values.cast::<vk::Bool32>(),
                )
            };
            assert_eq!(n, *name);
            assert_eq!(v == vk::TRUE, *on);
            assert_eq!(setting.ty, vk::LayerSettingTypeEXT::BOOL32);
        }
    }
}
