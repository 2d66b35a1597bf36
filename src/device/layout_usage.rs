//! Which image layouts an image's usage allows: the `oldLayout`/`newLayout` rules of
//! `VkImageMemoryBarrier2` (VUID-VkImageMemoryBarrier2-oldLayout-01208…01213, 01658, 01659,
//! 03938, 03939 and the `newLayout` twins), as plain data for the transitions of
//! `commands/image_layouts.rs` and the imports of `queue/external_image.rs`.

use ash::vk;

/// Whether an image of `usage` may be in `layout`: `Some(true)` allowed (`UNDEFINED` and
/// `GENERAL` always), `Some(false)` a layout whose usage the image lacks (or `PREINITIALIZED`,
/// which kiln's optimal-tiling images never are), `None` a layout with no usage rule kiln
/// knows (`PRESENT_SRC_KHR`, video, feedback-loop layouts, values Vulkan does not define).
pub(crate) fn layout_usage_ok(layout: vk::ImageLayout, usage: vk::ImageUsageFlags) -> Option<bool> {
    use vk::ImageLayout as L;
    use vk::ImageUsageFlags as U;
    let any = |u: U| usage.intersects(u);
    Some(match layout {
        L::UNDEFINED | L::GENERAL => true,
        L::PREINITIALIZED => false,
        L::COLOR_ATTACHMENT_OPTIMAL => any(U::COLOR_ATTACHMENT),
        L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL
        | L::DEPTH_ATTACHMENT_OPTIMAL
        | L::STENCIL_ATTACHMENT_OPTIMAL
        | L::DEPTH_READ_ONLY_STENCIL_ATTACHMENT_OPTIMAL
        | L::DEPTH_ATTACHMENT_STENCIL_READ_ONLY_OPTIMAL => any(U::DEPTH_STENCIL_ATTACHMENT),
        L::DEPTH_STENCIL_READ_ONLY_OPTIMAL
        | L::DEPTH_READ_ONLY_OPTIMAL
        | L::STENCIL_READ_ONLY_OPTIMAL => {
            any(U::DEPTH_STENCIL_ATTACHMENT)
                && any(U::DEPTH_STENCIL_ATTACHMENT | U::SAMPLED | U::INPUT_ATTACHMENT)
        }
        L::SHADER_READ_ONLY_OPTIMAL => any(U::SAMPLED | U::INPUT_ATTACHMENT),
        L::READ_ONLY_OPTIMAL => any(U::SAMPLED | U::INPUT_ATTACHMENT | U::DEPTH_STENCIL_ATTACHMENT),
        L::ATTACHMENT_OPTIMAL => any(U::COLOR_ATTACHMENT | U::DEPTH_STENCIL_ATTACHMENT),
        L::TRANSFER_SRC_OPTIMAL => any(U::TRANSFER_SRC),
        L::TRANSFER_DST_OPTIMAL => any(U::TRANSFER_DST),
        L::RENDERING_LOCAL_READ_KHR => {
            any(U::COLOR_ATTACHMENT | U::DEPTH_STENCIL_ATTACHMENT)
                && any(U::INPUT_ATTACHMENT | U::STORAGE | U::SAMPLED)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::layout_usage_ok;
    use ash::vk::{ImageLayout as L, ImageUsageFlags as U};

    #[test]
    fn layouts_follow_usage() {
        let texture = U::SAMPLED | U::TRANSFER_SRC | U::TRANSFER_DST;
        for ok in [
            L::UNDEFINED,
            L::GENERAL,
            L::SHADER_READ_ONLY_OPTIMAL,
            L::TRANSFER_SRC_OPTIMAL,
        ] {
            assert_eq!(layout_usage_ok(ok, texture), Some(true), "{ok:?}");
        }
        for bad in [
            L::COLOR_ATTACHMENT_OPTIMAL,
            L::DEPTH_STENCIL_ATTACHMENT_OPTIMAL,
            L::DEPTH_READ_ONLY_OPTIMAL,
            L::PREINITIALIZED,
        ] {
            assert_eq!(layout_usage_ok(bad, texture), Some(false), "{bad:?}");
        }
        for unknown in [L::PRESENT_SRC_KHR, L::from_raw(12_345)] {
            assert_eq!(layout_usage_ok(unknown, texture), None, "{unknown:?}");
        }
        let ok = |l, u| layout_usage_ok(l, u) == Some(true);
        assert!(ok(L::COLOR_ATTACHMENT_OPTIMAL, U::COLOR_ATTACHMENT));
        assert!(!ok(L::TRANSFER_DST_OPTIMAL, U::STORAGE));
        assert!(ok(L::DEPTH_READ_ONLY_OPTIMAL, U::DEPTH_STENCIL_ATTACHMENT));
    }
}
