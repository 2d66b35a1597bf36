//! [`ImageDesc`], how to create an [`Image`](super::Image), and its checks: pure policy over
//! the description and the device's limits (no Vulkan call), so every rule has a CPU test.
//!
//! The view type of the image's default view ([`ImageDesc::view_type`]) decides the image:
//!
//! | `view_type` | `VkImageType` | flags | extent | `array_layers` |
//! | --- | --- | --- | --- | --- |
//! | `TYPE_1D` / `TYPE_1D_ARRAY` | 1D | | `width` ≤ maxImageDimension1D, `height` = `depth` = 1 | 1 / ≥ 1 |
//! | `TYPE_2D` / `TYPE_2D_ARRAY` | 2D | | ≤ maxImageDimension2D, `depth` = 1 | 1 / ≥ 1 |
//! | `CUBE` / `CUBE_ARRAY` | 2D | CUBE_COMPATIBLE | square, ≤ maxImageDimensionCube | 6 / 6n |
//! | `TYPE_3D` | 3D | | each ≤ maxImageDimension3D | 1 |
//!
//! (Vulkan spec §12.3 "Images", VkImageCreateInfo's valid usage; §12.5 "Image Views",
//! table "Image type and image view type compatibility requirements".) Layers are at most
//! maxImageArrayLayers; a multisampled image (`samples` above TYPE_1) is 2D, not cube
//! compatible, with one mip (VUID-VkImageCreateInfo-samples-02257); cube arrays need the
//! `imageCubeArray` feature (VUID-VkImageViewCreateInfo-viewType-01004).

use ash::vk;

/// How to create an [`Image`](super::Image). Start from a constructor
/// ([`texture`](Self::texture), [`color_target`](Self::color_target),
/// [`depth_target`](Self::depth_target), [`cube`](Self::cube), [`array`](Self::array),
/// [`volume`](Self::volume)) and change fields with the builder methods.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ImageDesc<'a> {
    /// Name shown in errors and validation messages.
    pub label: &'a str,
    /// Width of mip 0 in texels (≥ 1).
    pub width: u32,
    /// Height of mip 0 in texels (≥ 1; 1 for 1D images).
    pub height: u32,
    /// Depth of mip 0 in texels: ≥ 1 for 3D images, 1 otherwise.
    pub depth: u32,
    /// Array layers: 1 for 1D, 2D and 3D images, ≥ 1 for arrays, 6 for a cube, 6 per cube
    /// of a cube array (face order +X, −X, +Y, −Y, +Z, −Z).
    pub array_layers: u32,
    /// The type of the image's view ([`Image::view`](super::Image::view)); it decides the
    /// image's type (see the module docs).
    pub view_type: vk::ImageViewType,
    /// The texel format.
    pub format: vk::Format,
    /// Usage; kiln adds TRANSFER_SRC | TRANSFER_DST so upload and readback always work.
    pub usage: vk::ImageUsageFlags,
    /// Mip levels, 1 ..= ⌊log2(max(width, height, depth))⌋ + 1
    /// ([`full_mip_chain`](Self::full_mip_chain) gives the most).
    pub mip_levels: u32,
    /// Samples per texel: TYPE_1, or TYPE_2 … TYPE_64 for a multisampled render target
    /// (one mip, resolved with [`ColorAttachment::resolve_into`](crate::ColorAttachment::resolve_into)).
    pub samples: vk::SampleCountFlags,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { ImageDesc<'a> {
    label: &'a str,
    width: u32,
    height: u32,
    depth: u32,
    array_layers: u32,
    view_type: vk::ImageViewType,
    format: vk::Format,
    usage: vk::ImageUsageFlags,
    mip_levels: u32,
    samples: vk::SampleCountFlags,
} }

impl Default for ImageDesc<'_> {
    /// An unlabelled 1x1 RGBA8 sampled texture with one mip: set at least the size
    /// (`ImageDesc::default().width(64).height(64)`).
    fn default() -> Self {
        ImageDesc::texture("", 1, 1, vk::Format::R8G8B8A8_UNORM)
    }
}

impl<'a> ImageDesc<'a> {
    /// A 2D sampled texture with one mip.
    pub fn texture(label: &'a str, width: u32, height: u32, format: vk::Format) -> Self {
        ImageDesc {
            label,
            width,
            height,
            depth: 1,
            array_layers: 1,
            view_type: vk::ImageViewType::TYPE_2D,
            format,
            usage: vk::ImageUsageFlags::SAMPLED,
            mip_levels: 1,
            samples: vk::SampleCountFlags::TYPE_1,
        }
    }

    /// A colour render target (colour attachment, also sampleable).
    pub fn color_target(label: &'a str, width: u32, height: u32, format: vk::Format) -> Self {
        ImageDesc {
            usage: vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::SAMPLED,
            ..Self::texture(label, width, height, format)
        }
    }

    /// A depth(-stencil) attachment.
    pub fn depth_target(label: &'a str, width: u32, height: u32, format: vk::Format) -> Self {
        ImageDesc {
            usage: vk::ImageUsageFlags::DEPTH_STENCIL_ATTACHMENT,
            ..Self::texture(label, width, height, format)
        }
    }

    /// A sampled cube map: six `size`×`size` faces.
    pub fn cube(label: &'a str, size: u32, format: vk::Format) -> Self {
        ImageDesc {
            array_layers: 6,
            view_type: vk::ImageViewType::CUBE,
            ..Self::texture(label, size, size, format)
        }
    }

    /// A sampled 2D array texture of `layers` layers.
    pub fn array(label: &'a str, width: u32, height: u32, layers: u32, format: vk::Format) -> Self {
        ImageDesc {
            array_layers: layers,
            view_type: vk::ImageViewType::TYPE_2D_ARRAY,
            ..Self::texture(label, width, height, format)
        }
    }

    /// A sampled 3D texture.
    pub fn volume(label: &'a str, width: u32, height: u32, depth: u32, format: vk::Format) -> Self {
        ImageDesc {
            depth,
            view_type: vk::ImageViewType::TYPE_3D,
            ..Self::texture(label, width, height, format)
        }
    }

    /// The same image with every mip level down to 1×1(×1).
    pub fn full_mip_chain(self) -> Self {
        ImageDesc {
            mip_levels: max_mips(self.width, self.height, self.depth),
            ..self
        }
    }
}

/// ⌊log2(max(w, h, d))⌋ + 1 (0 for a zero extent).
pub(crate) fn max_mips(w: u32, h: u32, d: u32) -> u32 {
    32 - w.max(h).max(d).leading_zeros()
}

/// The device facts an image description is checked against.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ImageLimits {
    pub max_1d: u32,
    pub max_2d: u32,
    pub max_3d: u32,
    pub max_cube: u32,
    pub max_layers: u32,
    pub cube_array: bool,
}

impl ImageLimits {
    pub(crate) fn of(limits: &vk::PhysicalDeviceLimits, cube_array: bool) -> Self {
        ImageLimits {
            max_1d: limits.max_image_dimension1_d,
            max_2d: limits.max_image_dimension2_d,
            max_3d: limits.max_image_dimension3_d,
            max_cube: limits.max_image_dimension_cube,
            max_layers: limits.max_image_array_layers,
            cube_array,
        }
    }
}

/// What to create for a valid description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ImagePlan {
    pub image_type: vk::ImageType,
    pub flags: vk::ImageCreateFlags,
}

/// Checks `desc` against `limits`; the error text is the detail of `KILN-E180`.
pub(crate) fn plan(desc: &ImageDesc<'_>, limits: &ImageLimits) -> Result<ImagePlan, String> {
    use vk::ImageViewType as V;
    let (w, h, d, layers) = (desc.width, desc.height, desc.depth, desc.array_layers);
    if w == 0 || h == 0 || d == 0 || layers == 0 {
        return Err(format!(
            "extent {w}x{h}x{d} with {layers} layers: each must be at least 1"
        ));
    }
    let (image_type, max, what) = match desc.view_type {
        V::TYPE_1D | V::TYPE_1D_ARRAY => (vk::ImageType::TYPE_1D, limits.max_1d, "1D"),
        V::TYPE_2D | V::TYPE_2D_ARRAY => (vk::ImageType::TYPE_2D, limits.max_2d, "2D"),
        V::CUBE | V::CUBE_ARRAY => (vk::ImageType::TYPE_2D, limits.max_cube, "Cube"),
        V::TYPE_3D => (vk::ImageType::TYPE_3D, limits.max_3d, "3D"),
        other => return Err(format!("view type {other:?} is not one Vulkan defines")),
    };
    if w.max(h).max(d) > max {
        return Err(format!(
            "extent {w}x{h}x{d} is beyond maxImageDimension{what} ({max})"
        ));
    }
    let one_layer = matches!(desc.view_type, V::TYPE_1D | V::TYPE_2D | V::TYPE_3D);
    let shape = match desc.view_type {
        V::TYPE_1D | V::TYPE_1D_ARRAY if h != 1 || d != 1 => {
            Some("a 1D image has height and depth 1")
        }
        V::TYPE_2D | V::TYPE_2D_ARRAY | V::CUBE | V::CUBE_ARRAY if d != 1 => {
            Some("only a 3D image has a depth above 1")
        }
        V::CUBE | V::CUBE_ARRAY if w != h => Some("cube faces are square (width = height)"),
        V::CUBE if layers != 6 => Some("a cube has 6 layers, one per face"),
        V::CUBE_ARRAY if !layers.is_multiple_of(6) => Some("a cube array has 6 layers per cube"),
        _ if one_layer && layers != 1 => {
            Some("this view type has one layer; use its _ARRAY type for more")
        }
        _ => None,
    };
    if let Some(rule) = shape {
        return Err(format!(
            "{w}x{h}x{d} with {layers} layers as {:?}: {rule}",
            desc.view_type
        ));
    }
    if layers > limits.max_layers {
        return Err(format!(
            "{layers} layers are beyond maxImageArrayLayers ({})",
            limits.max_layers
        ));
    }
    if desc.view_type == V::CUBE_ARRAY && !limits.cube_array {
        return Err(
            "cube arrays need the imageCubeArray feature, which the device lacks \
             (Features::image_cube_array)"
                .into(),
        );
    }
    let mips = max_mips(w, h, d);
    if desc.mip_levels == 0 || desc.mip_levels > mips {
        return Err(format!(
            "{} mip levels; a {w}x{h}x{d} image has 1..={mips}",
            desc.mip_levels
        ));
    }
    let samples = desc.samples;
    if samples.as_raw().count_ones() != 1 || samples.as_raw() > 64 {
        return Err(format!(
            "samples {samples:?} is not one sample count (TYPE_1 … TYPE_64)"
        ));
    }
    let cube = matches!(desc.view_type, V::CUBE | V::CUBE_ARRAY);
    if samples != vk::SampleCountFlags::TYPE_1
        && (image_type != vk::ImageType::TYPE_2D || cube || desc.mip_levels != 1)
    {
        return Err(format!(
            "a multisampled image ({samples:?}) is 2D or 2D_ARRAY with one mip level \
             (VUID-VkImageCreateInfo-samples-02257); resolve it into a single-sampled image \
             to sample or mip it"
        ));
    }
    let flags = if cube {
        vk::ImageCreateFlags::CUBE_COMPATIBLE
    } else {
        vk::ImageCreateFlags::empty()
    };
    Ok(ImagePlan { image_type, flags })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RGBA8: vk::Format = vk::Format::R8G8B8A8_UNORM;

    fn limits() -> ImageLimits {
        ImageLimits {
            max_1d: 4096,
            max_2d: 4096,
            max_3d: 256,
            max_cube: 1024,
            max_layers: 16,
            cube_array: true,
        }
    }

    #[test]
    fn valid_descriptions_plan_their_image_type_and_flags() {
        let cases = [
            (
                ImageDesc::texture("t", 64, 32, RGBA8),
                vk::ImageType::TYPE_2D,
                false,
            ),
            (
                ImageDesc::cube("c", 64, RGBA8),
                vk::ImageType::TYPE_2D,
                true,
            ),
            (
                ImageDesc {
                    array_layers: 12,
                    view_type: vk::ImageViewType::CUBE_ARRAY,
                    ..ImageDesc::cube("ca", 8, RGBA8)
                },
                vk::ImageType::TYPE_2D,
                true,
            ),
            (
                ImageDesc::array("a", 8, 8, 16, RGBA8),
                vk::ImageType::TYPE_2D,
                false,
            ),
            (
                ImageDesc::volume("v", 8, 8, 256, RGBA8),
                vk::ImageType::TYPE_3D,
                false,
            ),
            (
                ImageDesc {
                    view_type: vk::ImageViewType::TYPE_1D,
                    ..ImageDesc::texture("l", 4096, 1, RGBA8)
                },
                vk::ImageType::TYPE_1D,
                false,
            ),
            (
                ImageDesc {
                    samples: vk::SampleCountFlags::TYPE_4,
                    ..ImageDesc::color_target("ms", 64, 64, RGBA8)
                },
                vk::ImageType::TYPE_2D,
                false,
            ),
            (
                ImageDesc::texture("m", 64, 32, RGBA8).full_mip_chain(),
                vk::ImageType::TYPE_2D,
                false,
            ),
        ];
        for (desc, ty, cube) in cases {
            let p = plan(&desc, &limits()).unwrap_or_else(|e| panic!("{}: {e}", desc.label));
            assert_eq!(p.image_type, ty, "{}", desc.label);
            assert_eq!(
                p.flags.contains(vk::ImageCreateFlags::CUBE_COMPATIBLE),
                cube,
                "{}",
                desc.label
            );
        }
        assert_eq!(
            ImageDesc::texture("m", 64, 32, RGBA8)
                .full_mip_chain()
                .mip_levels,
            7
        );
        assert_eq!(
            ImageDesc::volume("v", 4, 4, 64, RGBA8)
                .full_mip_chain()
                .mip_levels,
            7
        );
    }

    #[test]
    fn invalid_descriptions_name_the_rule() {
        let t = |w, h| ImageDesc::texture("t", w, h, RGBA8);
        let cases = [
            (t(0, 4), "each must be at least 1"),
            (t(4097, 4), "maxImageDimension2D (4096)"),
            (
                ImageDesc::volume("v", 8, 8, 257, RGBA8),
                "maxImageDimension3D (256)",
            ),
            (
                ImageDesc::cube("c", 2048, RGBA8),
                "maxImageDimensionCube (1024)",
            ),
            (
                ImageDesc {
                    height: 4,
                    view_type: vk::ImageViewType::TYPE_1D,
                    ..t(8, 1)
                },
                "a 1D image has height and depth 1",
            ),
            (
                ImageDesc {
                    depth: 2,
                    ..t(8, 8)
                },
                "only a 3D image has a depth",
            ),
            (
                ImageDesc {
                    width: 16,
                    ..ImageDesc::cube("c", 8, RGBA8)
                },
                "square",
            ),
            (
                ImageDesc {
                    array_layers: 5,
                    ..ImageDesc::cube("c", 8, RGBA8)
                },
                "a cube has 6 layers",
            ),
            (
                ImageDesc {
                    array_layers: 9,
                    view_type: vk::ImageViewType::CUBE_ARRAY,
                    ..ImageDesc::cube("c", 8, RGBA8)
                },
                "6 layers per cube",
            ),
            (
                ImageDesc {
                    array_layers: 2,
                    ..t(8, 8)
                },
                "use its _ARRAY type",
            ),
            (
                ImageDesc::array("a", 8, 8, 17, RGBA8),
                "maxImageArrayLayers (16)",
            ),
            (
                ImageDesc {
                    mip_levels: 5,
                    ..t(8, 4)
                },
                "has 1..=4",
            ),
            (
                ImageDesc {
                    samples: vk::SampleCountFlags::from_raw(5),
                    ..t(8, 8)
                },
                "not one sample count",
            ),
            (
                ImageDesc {
                    samples: vk::SampleCountFlags::TYPE_4,
                    mip_levels: 2,
                    ..t(8, 8)
                },
                "VUID-VkImageCreateInfo-samples-02257",
            ),
            (
                ImageDesc {
                    samples: vk::SampleCountFlags::TYPE_4,
                    ..ImageDesc::cube("c", 8, RGBA8)
                },
                "2D or 2D_ARRAY",
            ),
            (
                ImageDesc {
                    view_type: vk::ImageViewType::from_raw(99),
                    ..t(8, 8)
                },
                "not one Vulkan defines",
            ),
        ];
        for (desc, want) in cases {
            let err = plan(&desc, &limits()).expect_err(want);
            assert!(err.contains(want), "{want}: {err}");
        }
    }

    #[test]
    fn a_cube_array_without_the_feature_names_it() {
        let no_cube_array = ImageLimits {
            cube_array: false,
            ..limits()
        };
        let ca = ImageDesc {
            view_type: vk::ImageViewType::CUBE_ARRAY,
            ..ImageDesc::cube("c", 8, RGBA8)
        };
        let err = plan(&ca, &no_cube_array).unwrap_err();
        assert!(err.contains("imageCubeArray"), "{err}");
    }
}
