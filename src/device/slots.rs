//! Layer slots: per-device state owned by a layer above `device`.
//!
//! Some registries belong to an upper layer but must live exactly as long as the device and
//! be torn down in the device's order: the set-layout interner (`descriptors`), the
//! pipeline-layout interner and the `VkPipelineCache` (`pipeline`), the command contexts
//! (`queue`), the staging buffers and the transfer settings (`transfer`). This layer cannot name their types (it is the bottom
//! layer), so it keeps them as *slots*: values of any type that implements [`LayerSlot`],
//! found again by their type ([`Shared::slot`]).
//!
//! - **Who owns a slot**: the layer that defines its type. Only that layer looks it up and
//!   uses it; `device` only stores it and calls its hooks.
//! - **Registration**: when the device is created, by `Device::with_desc` (the composition
//!   root, `src/compose.rs`, above every layer), bottom-up in layer order: a slot may
//!   rely on the slots of the layers below it. A type is registered at most once.
//! - **Hooks**: [`LayerSlot::teardown`] (required) and [`LayerSlot::release_memory`] (called
//!   when an allocation ran out of memory, before it is tried once more).
//! - **Teardown order** (`Shared`'s `Drop`): the device waits idle (`vkDeviceWaitIdle`) →
//!   retired objects are destroyed → slots are torn down in reverse order of registration,
//!   each hook getting the device's shared state (raw device, allocator) while the slots
//!   registered before it still exist → the sampler interner is cleared and the queues'
//!   timelines destroyed → the allocator → the `VkDevice` → the instance (messenger, then
//!   `VkInstance`).

use std::any::Any;
use std::sync::Arc;

use super::Shared;
use crate::error::{DeviceError, Error, Result};

/// Per-device state of an upper layer (see the module docs).
pub(crate) trait LayerSlot: Any + Send + Sync {
    /// Destroys the slot's Vulkan objects. Called once, at device teardown, after the
    /// device is idle and every retired object was destroyed, before the allocator and the
    /// `VkDevice`; slots registered later are already torn down.
    fn teardown(&mut self, device: &Shared);

    /// Memory ran out: frees what can be made again later and returns the bytes freed.
    fn release_memory(&self, _device: &Shared) -> u64 {
        0
    }
}

/// The slots of one device, in registration order.
#[derive(Default)]
pub(crate) struct Slots {
    entries: Vec<Box<dyn LayerSlot>>,
}

/// A lookup of a slot that was never registered: a bug in device creation.
const UNREGISTERED: DeviceError = DeviceError::Internal {
    what: "a layer slot was looked up that device creation did not register",
};

impl Slots {
    fn find<T: LayerSlot>(&self) -> Option<&T> {
        self.entries
            .iter()
            .find_map(|e| (&**e as &dyn Any).downcast_ref::<T>())
    }
}

impl Shared {
    /// Registers `slot` (at device creation, bottom-up in layer order). Errors if a slot of
    /// this type exists already.
    pub(crate) fn register_slot<T: LayerSlot>(&mut self, slot: T) -> Result<()> {
        if self.slots.find::<T>().is_some() {
            return Err(Error::Internal {
                what: "a layer slot was registered twice",
            });
        }
        self.slots.entries.push(Box::new(slot));
        Ok(())
    }

    /// The slot of type `T`. Errors only if device creation did not register it.
    #[inline]
    pub(crate) fn slot<T: LayerSlot>(&self) -> Result<&T, DeviceError> {
        self.slots.find::<T>().ok_or(UNREGISTERED)
    }

    /// Calls every slot's [`LayerSlot::release_memory`]; returns the bytes freed.
    pub(crate) fn release_slot_memory(&self) -> u64 {
        self.slots
            .entries
            .iter()
            .map(|s| s.release_memory(self))
            .sum()
    }

    /// Tears the slots down in reverse order of registration (device teardown).
    pub(super) fn teardown_slots(&mut self) {
        while let Some(mut slot) = self.slots.entries.pop() {
            slot.teardown(self);
        }
    }
}

/// The option structs of the layers above `device` on a [`DeviceDesc`](super::DeviceDesc)
/// (the transfer layer's `TransferDesc`): this layer cannot name their types either, so the
/// description keeps them by type, as the device keeps slots. The layer that defines a type
/// sets it (its builder methods on `DeviceDesc`) and reads it back at device creation.
#[derive(Clone, Default)]
pub(crate) struct LayerOptions {
    entries: Vec<Arc<dyn LayerOption>>,
}

/// An option struct of an upper layer (any `Debug + Send + Sync` type).
pub(crate) trait LayerOption: Any + std::fmt::Debug + Send + Sync {}

impl<T: Any + std::fmt::Debug + Send + Sync> LayerOption for T {}

impl LayerOptions {
    /// The options of type `T`, where set.
    pub(crate) fn get<T: LayerOption>(&self) -> Option<&T> {
        self.entries
            .iter()
            .find_map(|e| (&**e as &dyn Any).downcast_ref::<T>())
    }

    /// Sets the options of type `T` (replacing earlier ones of that type).
    pub(crate) fn set<T: LayerOption>(&mut self, options: T) {
        self.entries
            .retain(|e| (&**e as &dyn Any).downcast_ref::<T>().is_none());
        self.entries.push(Arc::new(options));
    }
}

impl std::fmt::Debug for LayerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter()).finish()
    }
}
