//! Shared test helpers (the library of the `kiln-tests` package, named `common`): every GPU
//! test runs on a real Vulkan device (lavapipe in CI) under the Khronos validation layer,
//! and fails on any validation error or warning.

pub mod corpus;
pub mod fixtures;

use kiln::{Device, DeviceDesc};

/// The offscreen render of the seed scene (`tests/golden/material_scene.png`, 512×512),
/// embedded at build time. `KILN_UPDATE_GOLDEN=1` makes the golden-image test rewrite the
/// file; see `tests/golden/README.md`.
pub const GOLDEN_SCENE_PNG: &[u8] = include_bytes!("../golden/material_scene.png");

/// Where [`GOLDEN_SCENE_PNG`] comes from in the checkout (written only on request).
pub const GOLDEN_SCENE_PATH: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/golden/material_scene.png");

/// [`GOLDEN_SCENE_PNG`] decoded.
pub fn golden_scene() -> image::RgbaImage {
    image::load_from_memory(GOLDEN_SCENE_PNG)
        .expect("tests/golden/material_scene.png decodes")
        .to_rgba8()
}

/// A device with validation forced on. Fails (never skips) with a clear message when no
/// device or no validation layer is installed.
pub fn device() -> Device {
    let _ = env_logger::builder().is_test(true).try_init();
    let device = Device::with_desc(&DeviceDesc {
        validation: Some(true),
        ..Default::default()
    })
    .unwrap_or_else(|e| {
        panic!(
            "no Vulkan device for the GPU tests: {e}\n\
             install a driver and the loader: `apt-get install libvulkan1 mesa-vulkan-drivers \
             vulkan-validationlayers` (or run `cargo xtask test`, which does)"
        )
    });
    assert!(
        device.validation_report().enabled,
        "VK_LAYER_KHRONOS_validation is not installed; the GPU tests must run under it \
         (`apt-get install vulkan-validationlayers`)"
    );
    device
}

/// Panics listing the messages if the validation layer reported any error or warning.
#[track_caller]
pub fn assert_clean(device: &Device) {
    let r = device.validation_report();
    assert!(
        r.is_clean(),
        "validation reported {} error(s), {} warning(s):\n{}",
        r.errors,
        r.warnings,
        r.messages.join("\n")
    );
}

/// Like [`assert_clean`], for a watch that outlived its device; also asserts that the
/// device really was torn down (no kiln object kept it alive).
#[track_caller]
pub fn assert_watch_clean(watch: &kiln::ValidationWatch) {
    assert!(
        watch.torn_down(),
        "the device was not destroyed: some object still holds it"
    );
    let r = watch.report();
    assert!(
        r.is_clean(),
        "validation reported {} error(s), {} warning(s):\n{}",
        r.errors,
        r.warnings,
        r.messages.join("\n")
    );
}
