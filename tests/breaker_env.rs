//! Breaker: `KILN_VALIDATION` overrides (one test per process: it sets the environment).

/// `KILN_VALIDATION=0` turns the layer off (report says so, work still runs);
/// `KILN_VALIDATION=1` turns it on; an explicit `DeviceDesc::validation` wins over both.
#[test]
fn kiln_validation_env_overrides() {
    // This test binary has a single test, so no other thread reads the environment.
    std::env::set_var("KILN_VALIDATION", "0");
    let off = kiln::Device::new().unwrap();
    assert!(!off.validation_report().enabled);
    let b = off.storage_buffer::<u32>("b", 4).unwrap();
    assert_eq!(b.read::<u32>().unwrap(), vec![0; 4]);
    drop(b);
    let forced = kiln::Device::with_desc(&kiln::DeviceDesc {
        validation: Some(true),
        ..Default::default()
    })
    .unwrap();
    assert!(forced.validation_report().enabled);
    drop((off, forced));
    std::env::set_var("KILN_VALIDATION", "1");
    let on = kiln::Device::new().unwrap();
    let r = on.validation_report();
    assert!(r.enabled);
    let b = on.storage_buffer::<u32>("b", 4).unwrap();
    assert_eq!(b.read::<u32>().unwrap(), vec![0; 4]);
    drop(b);
    let r2 = on.validation_report();
    assert!(r2.is_clean(), "{:?}", r2.messages);
}
