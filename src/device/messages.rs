//! What a validation-layer message is and says, from its id, text and callback data: the
//! objects it names, whether it is shader printf output, a note of the layer about itself,
//! an allowed warning or a validation message, and printf's output in both layer formats
//! (1.3.239's and 1.4's). Pure functions over the message, used by the messenger callback
//! (`instance.rs`); unit-tested below without a device.

use std::ffi::CStr;

use ash::vk;

/// The names the layer's message lists for its objects (pipelines and shader modules are
/// named by kiln), `"a, b"`, or `"?"` without any.
///
/// # Safety
/// `d` is the callback data the layer passed (valid for the call).
pub(super) unsafe fn object_names(d: &vk::DebugUtilsMessengerCallbackDataEXT<'_>) -> String {
    let mut names = Vec::new();
    if !d.p_objects.is_null() {
        // SAFETY: the layer passes `object_count` objects at `p_objects` (caller's contract).
        let objects = unsafe { std::slice::from_raw_parts(d.p_objects, d.object_count as usize) };
        for o in objects {
            if matches!(
                o.object_type,
                vk::ObjectType::PIPELINE | vk::ObjectType::SHADER_MODULE
            ) && !o.p_object_name.is_null()
            {
                // SAFETY: a non-null name is NUL-terminated (VkDebugUtilsObjectNameInfoEXT).
                let n = unsafe { CStr::from_ptr(o.p_object_name) }.to_string_lossy();
                names.push(n.into_owned());
            }
        }
    }
    if names.is_empty() {
        "?".into()
    } else {
        names.join(", ")
    }
}

/// The named objects of a message as ` [objects: name = <name> (<type>), …]`, for layers
/// whose message text no longer lists them (1.4: "VkBuffer 0x…[target]" inline, the
/// objects only in the callback data); empty where the text lists them already (1.3's
/// "Object 0: handle = …, name = …") or no object is named.
///
/// # Safety
/// `d` is the callback data the layer passed (valid for the call).
pub(super) unsafe fn object_list(
    d: &vk::DebugUtilsMessengerCallbackDataEXT<'_>,
    text: &str,
) -> String {
    if d.p_objects.is_null() || text.contains("Object 0: handle") {
        return String::new();
    }
    // SAFETY: the layer passes `object_count` objects at `p_objects` (caller's contract).
    let objects = unsafe { std::slice::from_raw_parts(d.p_objects, d.object_count as usize) };
    let named: Vec<String> = objects
        .iter()
        .filter(|o| !o.p_object_name.is_null())
        .map(|o| {
            // SAFETY: a non-null name is NUL-terminated (VkDebugUtilsObjectNameInfoEXT).
            let n = unsafe { CStr::from_ptr(o.p_object_name) }.to_string_lossy();
            format!("name = {n} ({:?})", o.object_type)
        })
        .collect();
    if named.is_empty() {
        String::new()
    } else {
        format!(" [objects: {}]", named.join(", "))
    }
}

/// What a layer message is (see [`classify`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// Shader printf output.
    Printf,
    /// The layer's note about itself (an "Internal Warning" of its printf or GPU-AV
    /// instrumentation), e.g. layer 1.4.309's "Setting
    /// VkPhysicalDeviceVulkan12Properties::maxUpdateAfterBindDescriptorsInAllPools to 32"
    /// (it lowers a limit it reports to keep descriptors for its own use) or "Ray Query
    /// validation option was enabled, but the rayQuery feature was not supported": not
    /// about the application, so neither printf output nor a counted warning.
    LayerNote,
    /// The warning about an allocation beyond `maxMemoryAllocationSize` on a device made
    /// with `DeviceDesc::allocations_beyond_limit`: the user's documented choice.
    Allowed,
    /// A validation message.
    Message,
}

/// Layer 1.4's advice, at instance creation, when GPU-assisted validation runs beside the
/// core checks: that is what `LayerFeatures::gpu_assisted` asks for (GPU-AV added to the
/// usual validation), so the advice is a note, not a warning about the application.
const GPU_AV_WITH_CORE_CHECKS: &str =
    "Both GPU Assisted Validation and Normal Core Check Validation are enabled";

/// Classifies a message by its id name and text: `DEBUG-PRINTF` ids carry printf output
/// and, from layer 1.4 on, the printf and GPU-AV instrumentation's internal notes;
/// `beyond_limit`: the device allows allocations beyond `maxMemoryAllocationSize`.
pub(super) fn classify(id_name: &str, text: &str, beyond_limit: bool) -> Kind {
    let layer_internal = id_name.contains("DEBUG-PRINTF") || id_name.contains("GPU-Assisted");
    if beyond_limit && id_name == "UNASSIGNED-vkAllocateMemory-maxMemoryAllocationSize" {
        Kind::Allowed
    } else if (layer_internal && text.contains("Internal Warning: "))
        || (id_name == "VALIDATION-SETTINGS" && text.contains(GPU_AV_WITH_CORE_CHECKS))
    {
        Kind::LayerNote
    } else if id_name.contains("DEBUG-PRINTF") {
        Kind::Printf
    } else {
        Kind::Message
    }
}

/// The printf output in a `DEBUG-PRINTF` message: the text after the layer's last `| `
/// separator (its header lists objects and the message id), trimmed.
///
/// Layer 1.4 writes `"vkQueueSubmit2(): pSubmits[0] DebugPrintf:\n<output>"` and, verbose
/// (kiln's setting, `layer_settings`), then `"\nStage = …\nPipeline (<name>)(…)…"`: the
/// output is the text between, and the pipeline's name is returned beside it.
pub(super) fn printf_text(text: &str) -> (&str, Option<&str>) {
    if let Some((_, rest)) = text.split_once("DebugPrintf:\n") {
        let output = rest.split("\nStage = ").next().unwrap_or(rest);
        let pipeline = rest
            .split_once("\nPipeline (")
            .and_then(|(_, p)| p.split_once(")("))
            .map(|(name, _)| name);
        return (output.trim(), pipeline);
    }
    (text.rsplit("| ").next().unwrap_or(text).trim(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printf_output_is_read_from_both_layer_formats() {
        // 1.3.239: the output after the last "| ".
        let old = "Validation Information: [ UNASSIGNED-DEBUG-PRINTF ] Object 0: handle = \
                   0x1, type = VK_OBJECT_TYPE_QUEUE; | MessageID = 0x92394c89 | x = 3";
        assert_eq!(printf_text(old), ("x = 3", None));
        // 1.4.309, verbose.
        let new = "vkQueueSubmit2(): pSubmits[0] DebugPrintf:\nkiln printf test: value 42 of \
                   64\nStage = Compute.  Global invocation ID (x, y, z) = (0, 0, 0)\nCommand \
                   buffer (execute)(0x7f9699c53030)\n\tCompute Dispatch Index 0\nPipeline \
                   (test/printf.comp:main)(f000000000f)\nShader Module (d000000000d)";
        assert_eq!(
            printf_text(new),
            (
                "kiln printf test: value 42 of 64",
                Some("test/printf.comp:main")
            )
        );
        // 1.4.309, not verbose.
        let short = "vkQueueSubmit2(): pSubmits[0] DebugPrintf:\nvalue 7";
        assert_eq!(printf_text(short), ("value 7", None));
    }

    #[test]
    fn printf_output_layer_notes_and_messages_are_told_apart() {
        assert_eq!(
            classify("WARNING-DEBUG-PRINTF", "x = 3", false),
            Kind::Printf
        );
        assert_eq!(
            classify(
                "WARNING-DEBUG-PRINTF",
                "vkGetPhysicalDeviceProperties2(): Internal Warning: Setting \
                 VkPhysicalDeviceVulkan12Properties::maxUpdateAfterBindDescriptorsInAllPools to 32",
                false
            ),
            Kind::LayerNote
        );
        assert_eq!(
            classify(
                "VUID-vkCmdDispatch-None-08600",
                "Internal Warning: Setting",
                false
            ),
            Kind::Message,
            "only the printf and GPU-AV ids carry layer notes"
        );
        let big = "UNASSIGNED-vkAllocateMemory-maxMemoryAllocationSize";
        assert_eq!(classify(big, "6442450944 bytes", true), Kind::Allowed);
        assert_eq!(
            classify(big, "6442450944 bytes", false),
            Kind::Message,
            "counted unless the device opted in"
        );
        let advice = "vkCreateInstance(): Both GPU Assisted Validation and Normal Core Check \
                      Validation are enabled, this is not recommend as it  will be very slow.";
        assert_eq!(
            classify("VALIDATION-SETTINGS", advice, false),
            Kind::LayerNote
        );
        assert_eq!(
            classify(
                "VALIDATION-SETTINGS",
                "printf_to_stdout is not a setting",
                false
            ),
            Kind::Message,
            "other settings warnings count"
        );
    }
}
