//! Views of part of an image: some mips and layers, as a view type the image admits
//! (Vulkan spec §12.5 "Image Views"). An [`Image`]'s own view covers every mip and layer;
//! an [`ImageView`] is what renders into one layer or face (a shadow cube's faces, a layer
//! of an array) or one mip, and what samples one mip or layer.
//!
//! kiln tracks one layout per image: a command that uses a view moves the whole image, so
//! the other mips and layers keep their contents (a transition from the layout they are
//! in) and are ordered with it.

use std::sync::Arc;

use ash::vk;

use super::Image;
use crate::error::{vk_device_err, MemoryError, Result};

/// Which mips and layers a view covers, and as what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImageViewDesc {
    /// The view type: the image's own, or one it admits (a 2D view of a layer of an array
    /// or cube, a 2D array view of a cube's six faces, …).
    pub view_type: vk::ImageViewType,
    /// The first mip level.
    pub base_mip_level: u32,
    /// Mip levels, from `base_mip_level` (≥ 1).
    pub level_count: u32,
    /// The first array layer (cube faces are layers: +X, −X, +Y, −Y, +Z, −Z).
    pub base_array_layer: u32,
    /// Layers, from `base_array_layer` (1 for 1D, 2D and 3D views, 6 for a cube).
    pub layer_count: u32,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { ImageViewDesc {
    view_type: vk::ImageViewType,
    base_mip_level: u32,
    level_count: u32,
    base_array_layer: u32,
    layer_count: u32,
} }

impl ImageViewDesc {
    /// A 2D view of one mip of one layer (of a 2D, 2D array or cube image): a render
    /// target for that face or layer, or the one level a shader samples.
    pub fn layer(layer: u32, mip: u32) -> Self {
        ImageViewDesc {
            view_type: vk::ImageViewType::TYPE_2D,
            base_mip_level: mip,
            level_count: 1,
            base_array_layer: layer,
            layer_count: 1,
        }
    }
}

/// A `VkImageView` of part of an [`Image`] (see the module docs): a cheap-to-clone handle
/// that keeps its image alive; destroyed when the last handle drops, after every
/// submission that may use it.
#[derive(Clone)]
pub struct ImageView(Arc<ViewInner>);

struct ViewInner {
    raw: vk::ImageView,
    image: Image,
    desc: ImageViewDesc,
}

impl std::fmt::Debug for ImageView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageView")
            .field("image", &self.0.image.label())
            .field("desc", &self.0.desc)
            .finish()
    }
}

/// Checks `desc` against an image of `view_type`, `mips` levels and `layers` layers, square
/// or not (Vulkan spec table "Image type and image view type compatibility requirements";
/// VUID-VkImageViewCreateInfo-subresourceRange-01478, -01480, -viewType-02960 ff.). The
/// error text is the detail of `KILN-E180`.
pub(crate) fn check_view(
    desc: &ImageViewDesc,
    view_type: vk::ImageViewType,
    mips: u32,
    layers: u32,
    square: bool,
) -> std::result::Result<(), String> {
    use vk::ImageViewType as V;
    let d = desc;
    let mips_end = d.base_mip_level.checked_add(d.level_count);
    if d.level_count == 0 || mips_end.is_none_or(|e| e > mips) {
        return Err(format!(
            "mips {}..+{} of an image with {mips}",
            d.base_mip_level, d.level_count
        ));
    }
    let layers_end = d.base_array_layer.checked_add(d.layer_count);
    if d.layer_count == 0 || layers_end.is_none_or(|e| e > layers) {
        return Err(format!(
            "layers {}..+{} of an image with {layers}",
            d.base_array_layer, d.layer_count
        ));
    }
    let from_2d = matches!(view_type, V::TYPE_2D | V::TYPE_2D_ARRAY);
    let from_cube = matches!(view_type, V::CUBE | V::CUBE_ARRAY);
    let admitted = match d.view_type {
        V::TYPE_1D | V::TYPE_1D_ARRAY => matches!(view_type, V::TYPE_1D | V::TYPE_1D_ARRAY),
        V::TYPE_2D | V::TYPE_2D_ARRAY => from_2d || from_cube,
        V::CUBE | V::CUBE_ARRAY => from_cube && square,
        V::TYPE_3D => view_type == V::TYPE_3D,
        _ => false,
    };
    if !admitted {
        return Err(format!(
            "a {:?} view of a {view_type:?} image is not one Vulkan allows",
            d.view_type
        ));
    }
    let count_ok = match d.view_type {
        V::TYPE_1D | V::TYPE_2D | V::TYPE_3D => d.layer_count == 1,
        V::CUBE => d.layer_count == 6,
        V::CUBE_ARRAY => d.layer_count.is_multiple_of(6),
        _ => true,
    };
    if !count_ok {
        return Err(format!(
            "a {:?} view of {} layers (1D, 2D and 3D views have 1, cubes 6, cube arrays 6 per cube)",
            d.view_type, d.layer_count
        ));
    }
    Ok(())
}

impl ImageView {
    /// The view of `image` that `desc` describes (see [`Image::view_of`]).
    pub(crate) fn new(image: &Image, desc: &ImageViewDesc) -> Result<Self, MemoryError> {
        let invalid = |detail| MemoryError::InvalidImage {
            object: image.label().to_string(),
            detail,
        };
        if image.view() == vk::ImageView::null() {
            return Err(invalid(
                "a transfer-only image has no views; give it SAMPLED, STORAGE or an attachment usage"
                    .into(),
            ));
        }
        let square = image.width() == image.height();
        check_view(
            desc,
            image.view_type(),
            image.mip_levels(),
            image.array_layers(),
            square,
        )
        .map_err(invalid)?;
        let shared = image.shared();
        let info = vk::ImageViewCreateInfo::default()
            .image(image.raw())
            .view_type(desc.view_type)
            .format(image.format())
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: image.aspect(),
                base_mip_level: desc.base_mip_level,
                level_count: desc.level_count,
                base_array_layer: desc.base_array_layer,
                layer_count: desc.layer_count,
            });
        // SAFETY: the image is live with memory bound and a view usage; the range and view
        // type were checked against its levels, layers and type (`check_view`).
        let raw = unsafe { shared.raw.create_image_view(&info, None) }
            .map_err(vk_device_err("vkCreateImageView"))?;
        shared.set_name(raw, image.label());
        Ok(ImageView(Arc::new(ViewInner {
            raw,
            image: image.clone(),
            desc: *desc,
        })))
    }

    /// The raw view (owned by this object).
    pub fn raw(&self) -> vk::ImageView {
        self.0.raw
    }
    /// The viewed image.
    pub fn image(&self) -> &Image {
        &self.0.image
    }
    /// What the view covers.
    pub fn desc(&self) -> &ImageViewDesc {
        &self.0.desc
    }

    /// The mip levels and layers of the image this view shows.
    pub fn subresources(&self) -> super::Subresources {
        let d = self.desc();
        super::Subresources {
            base_mip: d.base_mip_level,
            mip_count: d.level_count,
            base_layer: d.base_array_layer,
            layer_count: d.layer_count,
        }
    }
    /// The extent of the view's first mip.
    pub fn extent(&self) -> vk::Extent2D {
        let (width, height, _) = self.0.image.level_extent(self.0.desc.base_mip_level);
        vk::Extent2D { width, height }
    }
}

impl Drop for ViewInner {
    fn drop(&mut self) {
        let raw = self.raw;
        let image = self.image.clone();
        self.image.shared().retire(move |s| {
            // SAFETY: retire runs this after every kiln submission that could use the view
            // completed; nothing else refers to it.
            unsafe { s.raw.destroy_image_view(raw, None) };
            drop(image);
        });
    }
}

impl Image {
    /// A view of some of this image's mips and layers (see [`ImageViewDesc`]).
    ///
    /// Errors: `KILN-E180` a range outside the image, a view type the image does not admit,
    /// or an image with transfer usage only.
    pub fn view_of(&self, desc: &ImageViewDesc) -> Result<ImageView, MemoryError> {
        ImageView::new(self, desc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::ImageViewType as V;

    #[test]
    fn views_follow_the_compatibility_table() {
        let ok = [
            (ImageViewDesc::layer(5, 0), V::CUBE, 1, 6),
            (ImageViewDesc::layer(2, 3), V::TYPE_2D_ARRAY, 4, 3),
            (ImageViewDesc::layer(0, 1), V::TYPE_2D, 2, 1),
            (
                ImageViewDesc {
                    view_type: V::TYPE_2D_ARRAY,
                    layer_count: 6,
                    ..ImageViewDesc::layer(0, 0)
                },
                V::CUBE,
                1,
                6,
            ),
            (
                ImageViewDesc {
                    view_type: V::CUBE,
                    layer_count: 6,
                    ..ImageViewDesc::layer(6, 0)
                },
                V::CUBE_ARRAY,
                1,
                12,
            ),
        ];
        for (desc, ty, mips, layers) in ok {
            assert_eq!(
                check_view(&desc, ty, mips, layers, true),
                Ok(()),
                "{desc:?} of {ty:?}"
            );
        }
        let bad = [
            (ImageViewDesc::layer(6, 0), V::CUBE, 1, 6, "layers 6..+1"),
            (ImageViewDesc::layer(0, 2), V::TYPE_2D, 2, 1, "mips 2..+1"),
            (
                ImageViewDesc::layer(0, 0),
                V::TYPE_3D,
                1,
                1,
                "not one Vulkan allows",
            ),
            (
                ImageViewDesc {
                    view_type: V::CUBE,
                    layer_count: 6,
                    ..ImageViewDesc::layer(0, 0)
                },
                V::TYPE_2D_ARRAY,
                1,
                6,
                "not one Vulkan allows",
            ),
            (
                ImageViewDesc {
                    layer_count: 2,
                    ..ImageViewDesc::layer(0, 0)
                },
                V::TYPE_2D_ARRAY,
                1,
                2,
                "views have 1",
            ),
        ];
        for (desc, ty, mips, layers, want) in bad {
            let err = check_view(&desc, ty, mips, layers, true).unwrap_err();
            assert!(err.contains(want), "{want}: {err}");
        }
    }
}
