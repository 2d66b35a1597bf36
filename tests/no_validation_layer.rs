//! A missing validation layer gives one warning with the package to install, and kiln
//! continues without it (its own test binary: it changes the process environment).

#[test]
fn missing_layer_warns_and_continues() {
    // The loader (1.3.234+) hides layers listed here from the application.
    std::env::set_var("VK_LOADER_LAYERS_DISABLE", "~all~");
    let device = kiln::Device::with_desc(&kiln::DeviceDesc::default().validation(Some(true)))
        .expect("a device without the layer");
    assert!(
        !device.validation_report().enabled,
        "the layer should be unavailable"
    );
    let buf = device
        .buffer_from_slice("x", kiln::vk::BufferUsageFlags::STORAGE_BUFFER, &[7u32; 4])
        .unwrap();
    assert_eq!(buf.read::<u32>().unwrap(), vec![7; 4]);
}
