//! What kiln knows about the formats it creates images and vertex attributes with: bytes
//! per texel, components, numeric class, aspects (Vulkan spec §34.1 "Format Definition",
//! §34.1.2 "Numeric Format"). Compressed formats are not listed yet.

use ash::vk;

/// Numeric class of a format's components, as shaders see them (Vulkan spec §34.1.2
/// "Numeric Format" / the "Interpretation of Numeric Format" table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumClass {
    /// SFLOAT, UNORM, SNORM, USCALED, SSCALED, SRGB: the shader sees floats.
    Float,
    Uint,
    Sint,
}

/// What kiln knows about a format: bytes per texel, components, numeric class, aspect.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FormatInfo {
    pub bytes: u32,
    pub components: u32,
    pub class: NumClass,
    /// 64-bit components (need 64-bit shader types).
    pub wide: bool,
    pub aspect: vk::ImageAspectFlags,
}

/// Format facts for the formats kiln creates images and vertex attributes with. `None` for
/// compressed and exotic formats.
pub(crate) fn format_info(f: vk::Format) -> Option<FormatInfo> {
    use vk::Format as F;
    use NumClass::*;
    let c = vk::ImageAspectFlags::COLOR;
    let (bytes, components, class, wide, aspect) = match f {
        F::R8_UNORM | F::R8_SNORM | F::R8_SRGB => (1, 1, Float, false, c),
        F::R8_UINT => (1, 1, Uint, false, c),
        F::R8_SINT => (1, 1, Sint, false, c),
        F::R8G8_UNORM | F::R8G8_SNORM => (2, 2, Float, false, c),
        F::R8G8_UINT => (2, 2, Uint, false, c),
        F::R8G8_SINT => (2, 2, Sint, false, c),
        F::R8G8B8A8_UNORM
        | F::R8G8B8A8_SNORM
        | F::R8G8B8A8_SRGB
        | F::B8G8R8A8_UNORM
        | F::B8G8R8A8_SRGB
        | F::A2B10G10R10_UNORM_PACK32
        | F::A2R10G10B10_UNORM_PACK32 => (4, 4, Float, false, c),
        F::R8G8B8A8_UINT => (4, 4, Uint, false, c),
        F::R8G8B8A8_SINT => (4, 4, Sint, false, c),
        F::R16_SFLOAT | F::R16_UNORM | F::R16_SNORM => (2, 1, Float, false, c),
        F::R16_UINT => (2, 1, Uint, false, c),
        F::R16_SINT => (2, 1, Sint, false, c),
        F::R16G16_SFLOAT | F::R16G16_UNORM | F::R16G16_SNORM => (4, 2, Float, false, c),
        F::R16G16_UINT => (4, 2, Uint, false, c),
        F::R16G16_SINT => (4, 2, Sint, false, c),
        F::R16G16B16A16_SFLOAT | F::R16G16B16A16_UNORM | F::R16G16B16A16_SNORM => {
            (8, 4, Float, false, c)
        }
        F::R16G16B16A16_UINT => (8, 4, Uint, false, c),
        F::R16G16B16A16_SINT => (8, 4, Sint, false, c),
        F::R32_SFLOAT => (4, 1, Float, false, c),
        F::R32_UINT => (4, 1, Uint, false, c),
        F::R32_SINT => (4, 1, Sint, false, c),
        F::R32G32_SFLOAT => (8, 2, Float, false, c),
        F::R32G32_UINT => (8, 2, Uint, false, c),
        F::R32G32_SINT => (8, 2, Sint, false, c),
        F::R32G32B32_SFLOAT => (12, 3, Float, false, c),
        F::R32G32B32_UINT => (12, 3, Uint, false, c),
        F::R32G32B32_SINT => (12, 3, Sint, false, c),
        F::R32G32B32A32_SFLOAT => (16, 4, Float, false, c),
        F::R32G32B32A32_UINT => (16, 4, Uint, false, c),
        F::R32G32B32A32_SINT => (16, 4, Sint, false, c),
        F::R64_SFLOAT => (8, 1, Float, true, c),
        F::R64G64_SFLOAT => (16, 2, Float, true, c),
        F::R64G64B64_SFLOAT => (24, 3, Float, true, c),
        F::R64G64B64A64_SFLOAT => (32, 4, Float, true, c),
        F::D16_UNORM => (2, 1, Float, false, vk::ImageAspectFlags::DEPTH),
        F::D32_SFLOAT => (4, 1, Float, false, vk::ImageAspectFlags::DEPTH),
        F::X8_D24_UNORM_PACK32 => (4, 1, Float, false, vk::ImageAspectFlags::DEPTH),
        F::D24_UNORM_S8_UINT => (
            4,
            2,
            Float,
            false,
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL,
        ),
        F::D32_SFLOAT_S8_UINT => (
            8,
            2,
            Float,
            false,
            vk::ImageAspectFlags::DEPTH | vk::ImageAspectFlags::STENCIL,
        ),
        _ => return None,
    };
    Some(FormatInfo {
        bytes,
        components,
        class,
        wide,
        aspect,
    })
}
