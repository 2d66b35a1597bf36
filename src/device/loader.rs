//! One process-wide lock around the Vulkan calls that walk or change the loader's global
//! lists of instances, drivers and devices.
//!
//! The Vulkan spec lets an application create and destroy instances and devices on several
//! threads at once, each with its own objects. The Khronos loader does not fully honour
//! that. Its `loader_get_icd_and_device` walks the driver list of *every* instance (under
//! the loader's own lock); `vkGetDeviceProcAddr`, `vkSetDebugUtilsObjectNameEXT`/`TagEXT`
//! and `vkCreateSwapchainKHR` reach it. Meanwhile `vkEnumeratePhysicalDevices` of another
//! instance frees the drivers that report no device (`unload_drivers_without_physical_devices`,
//! loader 1.3.280 and later, KhronosGroup/Vulkan-Loader#1471) without that lock, before it
//! unlinks them; and `vkCreateDevice` / `vkDestroyDevice` change a driver's device list
//! without it (KhronosGroup/Vulkan-Loader#2018). Both are still so in loader 1.4.360. Two
//! kiln devices used on two threads then crash inside the loader: a segfault in every
//! parallel run of kiln's tests under Debian 13's loader 1.4.309 with Mesa's seven drivers
//! installed (none with one driver, where nothing is unloaded).
//!
//! kiln therefore takes [`exclusive`] around the calls that change those lists
//! (`vkCreateInstance`, `vkDestroyInstance`, `vkEnumeratePhysicalDevices`, `vkCreateDevice`
//! with ash's function loading that follows it, `vkDestroyDevice`) and [`shared`] around the
//! calls that walk them (the `vkGetDeviceProcAddr` of extension loaders, object names,
//! swapchain creation). Each runs once per object, never per recorded command, so the lock
//! costs nothing measurable. It cannot order Vulkan calls that other libraries of the same
//! process make.
//!
//! Lock rules: the lock is a leaf and is never taken twice by one thread. Code holding it
//! calls Vulkan and nothing of kiln's that could take another kiln lock; the
//! debug-messenger callback (which may run inside these calls) takes only the messenger's
//! own state lock, which never waits for this one.

use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The lock (a type of its own so that tests can make private ones).
struct LoaderLock(RwLock<()>);

impl LoaderLock {
    const fn new() -> LoaderLock {
        LoaderLock(RwLock::new(()))
    }

    fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        // A panic while the lock was held leaves no state behind it to repair.
        self.0.write().unwrap_or_else(|p| p.into_inner())
    }

    fn shared(&self) -> RwLockReadGuard<'_, ()> {
        self.0.read().unwrap_or_else(|p| p.into_inner())
    }
}

static LOADER: LoaderLock = LoaderLock::new();

/// Holds the loader lock alone until the guard drops: for calls that change the loader's
/// lists (module docs).
pub(crate) fn exclusive() -> RwLockWriteGuard<'static, ()> {
    LOADER.exclusive()
}

/// Holds the loader lock beside other walkers until the guard drops: for calls that walk
/// the loader's lists (module docs).
pub(crate) fn shared() -> RwLockReadGuard<'static, ()> {
    LOADER.shared()
}

/// `f` under [`shared`]: for the `vkGetDeviceProcAddr` calls of extension loaders
/// (`ash::khr::…::Device::new`).
pub(crate) fn walking<T>(f: impl FnOnce() -> T) -> T {
    let _guard = shared();
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_poisoned_lock_is_still_taken() {
        let lock = LoaderLock::new();
        std::thread::scope(|s| {
            let r = s
                .spawn(|| {
                    let _g = lock.exclusive();
                    panic!("poison the lock");
                })
                .join();
            assert!(r.is_err());
        });
        assert!(lock.0.is_poisoned());
        // The next callers get the lock, not a panic.
        drop(lock.exclusive());
        drop(lock.shared());
    }

    #[test]
    fn walkers_run_beside_each_other_and_exclude_a_writer() {
        let lock = LoaderLock::new();
        let a = lock.shared();
        std::thread::scope(|s| {
            // A second walker on another thread is not blocked by the first,
            assert!(s.spawn(|| drop(lock.shared())).join().is_ok());
            // but a writer is.
            assert!(lock.0.try_write().is_err());
        });
        drop(a);
        assert!(lock.0.try_write().is_ok());
    }
}
