//! Texel blocks: the unit in which an image's bytes are laid out in a buffer (Vulkan spec
//! §34.1 "Format Definition", "texel block"; §34.2 "Compressed Image Formats"). An
//! uncompressed format's block is one texel of `format_info`'s size; a block-compressed
//! format's is a W×H rectangle of texels stored in 8 or 16 bytes:
//!
//! - BC1–BC7 (`textureCompressionBC`): 4×4 texels, 8 bytes (BC1, BC4) or 16;
//! - ETC2 and EAC (`textureCompressionETC2`): 4×4 texels, 8 bytes (ETC2 RGB8 and
//!   RGB8A1, EAC R11) or 16;
//! - ASTC LDR (`textureCompressionASTC_LDR`): 4×4 … 12×12 texels, always 16 bytes.
//!
//! A mip level of W×H texels holds ⌈W/bw⌉·⌈H/bh⌉ blocks per layer and depth slice, rows of
//! blocks tightly packed: what [`Image::level_size`](super::Image::level_size) counts and
//! uploads and readbacks copy (a partial block at the right or bottom edge is a whole
//! block; Vulkan spec §20.4 "Copying Data Between Buffers and Images"). Whether the device
//! samples such a format is its format features' business (`KILN-E180` when it cannot).

use ash::vk;

use super::format::format_info;

/// The texel block of a format kiln creates images with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TexelBlock {
    /// Bytes of one block.
    pub bytes: u32,
    /// Texels of one block, width × height (1 × 1 for uncompressed formats).
    pub extent: [u32; 2],
    /// The image aspects of the format.
    pub aspect: vk::ImageAspectFlags,
}

impl TexelBlock {
    /// Bytes of a `w`×`h`×`d` region: whole blocks, a partial one at an edge counted whole.
    pub fn bytes_of(&self, w: u32, h: u32, d: u32) -> u64 {
        let [bw, bh] = self.extent;
        u64::from(w.div_ceil(bw)) * u64::from(h.div_ceil(bh)) * u64::from(d) * u64::from(self.bytes)
    }
}

/// The texel block of `format`: `format_info`'s texel, or a compressed format's block;
/// `None` for formats kiln does not create images with.
pub(crate) fn texel_block(format: vk::Format) -> Option<TexelBlock> {
    if let Some(i) = format_info(format) {
        return Some(TexelBlock {
            bytes: i.bytes,
            extent: [1, 1],
            aspect: i.aspect,
        });
    }
    let (bytes, extent) = compressed(format)?;
    Some(TexelBlock {
        bytes,
        extent,
        aspect: vk::ImageAspectFlags::COLOR,
    })
}

/// Bytes and texel extent of a block-compressed format's block.
fn compressed(format: vk::Format) -> Option<(u32, [u32; 2])> {
    use vk::Format as F;
    Some(match format {
        F::BC1_RGB_UNORM_BLOCK
        | F::BC1_RGB_SRGB_BLOCK
        | F::BC1_RGBA_UNORM_BLOCK
        | F::BC1_RGBA_SRGB_BLOCK
        | F::BC4_UNORM_BLOCK
        | F::BC4_SNORM_BLOCK => (8, [4, 4]),
        F::BC2_UNORM_BLOCK
        | F::BC2_SRGB_BLOCK
        | F::BC3_UNORM_BLOCK
        | F::BC3_SRGB_BLOCK
        | F::BC5_UNORM_BLOCK
        | F::BC5_SNORM_BLOCK
        | F::BC6H_UFLOAT_BLOCK
        | F::BC6H_SFLOAT_BLOCK
        | F::BC7_UNORM_BLOCK
        | F::BC7_SRGB_BLOCK => (16, [4, 4]),
        F::ETC2_R8G8B8_UNORM_BLOCK
        | F::ETC2_R8G8B8_SRGB_BLOCK
        | F::ETC2_R8G8B8A1_UNORM_BLOCK
        | F::ETC2_R8G8B8A1_SRGB_BLOCK
        | F::EAC_R11_UNORM_BLOCK
        | F::EAC_R11_SNORM_BLOCK => (8, [4, 4]),
        F::ETC2_R8G8B8A8_UNORM_BLOCK
        | F::ETC2_R8G8B8A8_SRGB_BLOCK
        | F::EAC_R11G11_UNORM_BLOCK
        | F::EAC_R11G11_SNORM_BLOCK => (16, [4, 4]),
        _ => return astc(format).map(|e| (16, e)),
    })
}

/// The texel extent of an ASTC LDR format's block (UNORM and SRGB; 16 bytes each).
fn astc(format: vk::Format) -> Option<[u32; 2]> {
    use vk::Format as F;
    const ASTC: [(F, F, [u32; 2]); 14] = [
        (F::ASTC_4X4_UNORM_BLOCK, F::ASTC_4X4_SRGB_BLOCK, [4, 4]),
        (F::ASTC_5X4_UNORM_BLOCK, F::ASTC_5X4_SRGB_BLOCK, [5, 4]),
        (F::ASTC_5X5_UNORM_BLOCK, F::ASTC_5X5_SRGB_BLOCK, [5, 5]),
        (F::ASTC_6X5_UNORM_BLOCK, F::ASTC_6X5_SRGB_BLOCK, [6, 5]),
        (F::ASTC_6X6_UNORM_BLOCK, F::ASTC_6X6_SRGB_BLOCK, [6, 6]),
        (F::ASTC_8X5_UNORM_BLOCK, F::ASTC_8X5_SRGB_BLOCK, [8, 5]),
        (F::ASTC_8X6_UNORM_BLOCK, F::ASTC_8X6_SRGB_BLOCK, [8, 6]),
        (F::ASTC_8X8_UNORM_BLOCK, F::ASTC_8X8_SRGB_BLOCK, [8, 8]),
        (F::ASTC_10X5_UNORM_BLOCK, F::ASTC_10X5_SRGB_BLOCK, [10, 5]),
        (F::ASTC_10X6_UNORM_BLOCK, F::ASTC_10X6_SRGB_BLOCK, [10, 6]),
        (F::ASTC_10X8_UNORM_BLOCK, F::ASTC_10X8_SRGB_BLOCK, [10, 8]),
        (
            F::ASTC_10X10_UNORM_BLOCK,
            F::ASTC_10X10_SRGB_BLOCK,
            [10, 10],
        ),
        (
            F::ASTC_12X10_UNORM_BLOCK,
            F::ASTC_12X10_SRGB_BLOCK,
            [12, 10],
        ),
        (
            F::ASTC_12X12_UNORM_BLOCK,
            F::ASTC_12X12_SRGB_BLOCK,
            [12, 12],
        ),
    ];
    ASTC.iter()
        .find(|(u, s, _)| format == *u || format == *s)
        .map(|(_, _, e)| *e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use vk::Format as F;

    #[test]
    fn uncompressed_formats_are_one_texel_blocks() {
        let b = texel_block(F::R8G8B8A8_UNORM).unwrap();
        assert_eq!((b.bytes, b.extent), (4, [1, 1]));
        assert_eq!(b.bytes_of(7, 3, 2), 7 * 3 * 2 * 4);
        assert_eq!(
            texel_block(F::D32_SFLOAT).unwrap().aspect,
            vk::ImageAspectFlags::DEPTH
        );
    }

    #[test]
    fn compressed_levels_count_whole_blocks() {
        let bc1 = texel_block(F::BC1_RGBA_UNORM_BLOCK).unwrap();
        assert_eq!((bc1.bytes, bc1.extent), (8, [4, 4]));
        // 8×8: 2×2 blocks; the 2×2 and 1×1 mips still take a whole block.
        assert_eq!(bc1.bytes_of(8, 8, 1), 32);
        assert_eq!(bc1.bytes_of(2, 2, 1), 8);
        assert_eq!(bc1.bytes_of(1, 1, 1), 8);
        // 10×6: 3×2 blocks.
        assert_eq!(
            texel_block(F::BC7_SRGB_BLOCK).unwrap().bytes_of(10, 6, 1),
            96
        );
        assert_eq!(texel_block(F::EAC_R11_UNORM_BLOCK).unwrap().bytes, 8);
        assert_eq!(texel_block(F::ETC2_R8G8B8A8_SRGB_BLOCK).unwrap().bytes, 16);
        let astc = texel_block(F::ASTC_10X6_SRGB_BLOCK).unwrap();
        assert_eq!((astc.bytes, astc.extent), (16, [10, 6]));
        // 25×13 texels: 3×3 blocks.
        assert_eq!(astc.bytes_of(25, 13, 1), 9 * 16);
        assert_eq!(
            texel_block(F::ASTC_12X12_UNORM_BLOCK).unwrap().extent,
            [12, 12]
        );
    }

    #[test]
    fn formats_kiln_does_not_know_have_no_block() {
        assert!(texel_block(F::UNDEFINED).is_none());
        assert!(texel_block(F::G8_B8_R8_3PLANE_420_UNORM).is_none());
        // HDR ASTC is VK_EXT_texture_compression_astc_hdr's, which kiln does not enable.
        assert!(texel_block(F::ASTC_4X4_SFLOAT_BLOCK).is_none());
    }
}
