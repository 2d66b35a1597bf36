//! Several devices in one process (`Device::enumerate`, `DeviceDesc::device` by index,
//! name or `uuid:`): each opened side by side, its own work, and objects of one refused by
//! the other (`KILN-E109`). On lavapipe all are the one CPU device, opened twice.

use common::{add, assert_clean, code, device_with_desc};
use kiln::{Device, DeviceDesc};

fn open(wanted: String) -> Device {
    device_with_desc(DeviceDesc::default().device(Some(wanted)))
}

#[test]
fn devices_are_enumerated_and_opened_side_by_side_by_index_name_and_uuid() {
    let all = Device::enumerate().unwrap();
    assert!(!all.is_empty());
    for (i, info) in all.iter().enumerate() {
        assert_eq!(info.index, i);
        println!("device {i}: {} uuid {:02x?}", info.name, info.device_uuid);
    }
    let first = &all[0];
    assert_ne!(
        first.device_uuid, [0u8; 16],
        "Vulkan 1.2 drivers report a UUID"
    );
    let uuid: String = first
        .device_uuid
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let by_index = open("0".into());
    let by_uuid = open(format!("uuid:{uuid}"));
    let by_name = open(first.name.clone());
    for d in [&by_index, &by_uuid, &by_name] {
        assert_eq!(d.info().device_uuid, first.device_uuid);
        assert_eq!(d.info().index, 0);
    }
    // Each runs its own work, at the same time.
    std::thread::scope(|s| {
        for d in [&by_index, &by_uuid, &by_name] {
            s.spawn(move || add::run_and_check(d, 4096));
        }
    });
    // One device's buffer in another's set: refused.
    let p = add::vector_add(&by_uuid);
    let foreign = by_index.storage_buffer::<f32>("foreign", 4).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    assert_eq!(code(set.write_buffer(0, &foreign)), "KILN-E109");
    // An unknown UUID is KILN-E102, listing the devices with theirs.
    let e =
        Device::with_desc(&DeviceDesc::default().device(Some(format!("uuid:{}", "0".repeat(32)))))
            .unwrap_err();
    assert_eq!(e.code(), "KILN-E102", "{e}");
    assert!(e.to_string().contains(&uuid), "{e}");
    for d in [&by_index, &by_uuid, &by_name] {
        assert_clean(d);
    }
}
