//! A minimal reproduction of the Khronos loader race that `kiln::device::loader` works
//! around, in raw `ash` (no kiln): one thread keeps creating instances and enumerating
//! their physical devices while another keeps calling `vkGetDeviceProcAddr` on a device of
//! its own instance for `vkGetDeviceQueue2` (which the loader resolves by walking every
//! instance; ash asks for it in `Device::load`, right after `vkCreateDevice`).
//!
//! `vkEnumeratePhysicalDevices` frees the drivers that report no device
//! (`unload_drivers_without_physical_devices`, loader 1.3.280+, KhronosGroup/Vulkan-Loader
//! #1471) without the lock under which `vkGetDeviceProcAddr` (`loader_get_icd_and_device`)
//! walks every instance's driver list: a use-after-free. With Debian 13's loader 1.4.309 and
//! `mesa-vulkan-drivers` (seven drivers, one with a device: lavapipe) it segfaulted in 1 of
//! 3 runs of 2000 iterations (2026-12-03; kiln's parallel tests did in 3 of 3 before the
//! lock); with one driver (`VK_DRIVER_FILES=…/lvp_icd.json`) or loader 1.3.239 it runs to
//! the end. Run: `cargo run -p kiln-examples --example loader_unload_race [iterations]`.

use std::sync::atomic::{AtomicBool, Ordering};

use ash::vk;

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    // SAFETY: loads the system loader; every object below is destroyed before the end.
    let entry = unsafe { ash::Entry::load() }.expect("no Vulkan loader");
    let app = vk::ApplicationInfo::default().api_version(vk::API_VERSION_1_1);
    let info = vk::InstanceCreateInfo::default().application_info(&app);
    // SAFETY: plain creates; the device gets one queue of family 0.
    let (instance, device) = unsafe {
        let instance = entry
            .create_instance(&info, None)
            .expect("vkCreateInstance");
        let pd = instance.enumerate_physical_devices().expect("enumerate")[0];
        let prio = [1.0f32];
        let q = [vk::DeviceQueueCreateInfo::default().queue_priorities(&prio)];
        let device = instance
            .create_device(
                pd,
                &vk::DeviceCreateInfo::default().queue_create_infos(&q),
                None,
            )
            .expect("vkCreateDevice");
        (instance, device)
    };
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..n {
                // SAFETY: an instance of this thread's own, destroyed right away.
                unsafe {
                    let other = entry
                        .create_instance(&info, None)
                        .expect("vkCreateInstance");
                    let _ = other.enumerate_physical_devices();
                    other.destroy_instance(None);
                }
            }
            done.store(true, Ordering::Release);
        });
        let mut calls = 0u64;
        while !done.load(Ordering::Acquire) {
            // SAFETY: a live device of this instance; the name is NUL-terminated.
            let f = unsafe {
                instance.get_device_proc_addr(device.handle(), c"vkGetDeviceQueue2".as_ptr())
            };
            assert!(f.is_some());
            calls += 1;
        }
        println!("ok: {n} instances enumerated beside {calls} vkGetDeviceProcAddr calls");
    });
    // SAFETY: nothing created from them is alive.
    unsafe {
        device.destroy_device(None);
        instance.destroy_instance(None);
    }
}
