//! Block-compressed images (Vulkan spec §34.2): levels counted in whole texel blocks, uploads
//! and readbacks of every level byte for byte, and BC1 blocks of known colours decoded by
//! the device and fetched by a shader texel for texel. Where the device lacks BC
//! (`Features::texture_compression_bc`), the coded error; ETC2 and ASTC round-trip where
//! the device has them and are coded errors where it does not. A compressed image cannot be
//! a colour attachment or get mips by blits: coded errors too.

use common::{assert_clean, device};
use kiln::{vk, Device, ImageDesc, SamplerDesc};

/// A solid BC1 block of RGB565 colour `c` (color0 = c > color1 = 0: four-colour mode,
/// alpha 1; every index 0: color0).
fn bc1_solid(c: u16) -> [u8; 8] {
    let [lo, hi] = c.to_le_bytes();
    [lo, hi, 0, 0, 0, 0, 0, 0]
}

/// An 8×8 BC1 texture's blocks: red, green (top row), blue, white (bottom row).
fn quadrants() -> Vec<u8> {
    [0xF800u16, 0x07E0, 0x001F, 0xFFFF]
        .iter()
        .flat_map(|c| bc1_solid(*c))
        .collect()
}

/// The RGBA8 colour (packed as `packUnorm4x8` does) of texel (x, y) of [`quadrants`].
fn expected(x: u32, y: u32) -> u32 {
    let rgba: [u8; 4] = match (x / 4, y / 4) {
        (0, 0) => [255, 0, 0, 255],
        (1, 0) => [0, 255, 0, 255],
        (0, 1) => [0, 0, 255, 255],
        _ => [255, 255, 255, 255],
    };
    u32::from_le_bytes(rgba)
}

fn bc1(device: &Device, mips: u32) -> Result<kiln::Image, kiln::MemoryError> {
    device
        .image(&ImageDesc::texture("bc1", 8, 8, vk::Format::BC1_RGBA_UNORM_BLOCK).mip_levels(mips))
}

#[test]
fn bc1_blocks_upload_read_back_and_decode_texel_for_texel() {
    let device = device();
    if !device.features().texture_compression_bc {
        let err = bc1(&device, 1).unwrap_err();
        assert_eq!(err.code(), "KILN-E180", "{err}");
        assert!(err.to_string().contains("does not support"), "{err}");
        eprintln!(
            "compressed: {} lacks BC: checked the error",
            device.info().name
        );
        assert_clean(&device);
        return;
    }
    // Four mips: 8×8 (2×2 blocks), then 4×4, 2×2 and 1×1, one block each.
    let image = bc1(&device, 4).unwrap();
    let sizes: Vec<u64> = (0..4).map(|l| image.level_size(l)).collect();
    assert_eq!(sizes, [32, 8, 8, 8]);
    let levels: Vec<Vec<u8>> = (0..4u16)
        .map(|l| {
            if l == 0 {
                quadrants()
            } else {
                bc1_solid(0x1234 + l).to_vec()
            }
        })
        .collect();
    for (l, bytes) in levels.iter().enumerate() {
        image.upload_level(l as u32, bytes).unwrap();
    }
    for (l, bytes) in levels.iter().enumerate() {
        assert_eq!(&image.read_level(l as u32).unwrap(), bytes, "mip {l}");
    }
    // A level of the wrong size is refused.
    let err = image.upload_level(1, &[0u8; 16]).unwrap_err();
    assert_eq!(err.code(), "KILN-E181", "{err}");
    // The device decodes the blocks.
    let m = kiln::include_spirv!("test/fetch_texels.comp").unwrap();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let out = device.storage_buffer::<u32>("texels", 64).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_combined(0, &image, &sampler).unwrap();
    set.write_buffer(1, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    let got: Vec<u32> = out.read().unwrap();
    let want: Vec<u32> = (0..64).map(|i| expected(i % 8, i / 8)).collect();
    assert_eq!(got, want);
    // No blits into a compressed image, no rendering into one.
    let err = device
        .execute(|r| Ok(r.generate_mips(&image)?))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E183", "{err}");
    let err = device
        .image(&ImageDesc::color_target(
            "bc1 target",
            8,
            8,
            vk::Format::BC1_RGBA_UNORM_BLOCK,
        ))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E180", "{err}");
    assert_clean(&device);
}

/// ETC2 (8-byte RGB8 blocks) and ASTC 6×6 (16-byte blocks, 2×2 of them for 10×10 texels):
/// where the device has the format family, an upload reads back byte for byte; where it
/// does not, creating the image is `KILN-E180`.
#[test]
fn etc2_and_astc_levels_round_trip_or_are_coded_errors() {
    let device = device();
    let f = device.features().clone();
    let cases = [
        (
            vk::Format::ETC2_R8G8B8_UNORM_BLOCK,
            f.texture_compression_etc2,
            (8, 8),
            32usize,
        ),
        (
            vk::Format::ASTC_6X6_UNORM_BLOCK,
            f.texture_compression_astc_ldr,
            (10, 10),
            64,
        ),
    ];
    for (format, supported, (w, h), size) in cases {
        let made = device.image(&ImageDesc::texture("compressed", w, h, format));
        if !supported {
            let err = made.unwrap_err();
            assert_eq!(err.code(), "KILN-E180", "{format:?}: {err}");
            eprintln!(
                "compressed: {} lacks {format:?}: checked the error",
                device.info().name
            );
            continue;
        }
        let image = made.unwrap();
        assert_eq!(image.level_size(0), size as u64, "{format:?}");
        let bytes: Vec<u8> = (0..size).map(|i| (i * 37 % 251) as u8).collect();
        image.upload(&bytes).unwrap();
        assert_eq!(image.read().unwrap(), bytes, "{format:?}");
    }
    assert_clean(&device);
}
