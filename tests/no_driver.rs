//! With no Vulkan driver, `Device::new` fails with a coded error that says how to install
//! one (its own test binary: it changes the process environment).

#[test]
fn no_driver_is_a_clear_error() {
    // The loader reads VK_DRIVER_FILES (and the older VK_ICD_FILENAMES) at instance creation.
    std::env::set_var("VK_DRIVER_FILES", "/nonexistent/kiln-no-driver.json");
    std::env::set_var("VK_ICD_FILENAMES", "/nonexistent/kiln-no-driver.json");
    let err = kiln::Device::new().unwrap_err();
    assert_eq!(err.code(), "KILN-E101", "{err}");
    assert!(err.to_string().contains("mesa-vulkan-drivers"), "{err}");
}
