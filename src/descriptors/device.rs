//! `impl Device` of the descriptors layer: set layouts and descriptor sets.

use std::sync::Arc;

use super::layout::{get_or_create, SetLayoutCache};
use super::{allocate_set_in, DescriptorSet, DescriptorSetLayoutDesc, SetLayout};
use crate::device::Device;
use crate::error::{DescriptorError, Result};

impl Device {
    /// The interned set layout for a description (the same handle for equal content).
    ///
    /// Errors: `KILN-E209` a description Vulkan would reject on this device, `KILN-E190` an
    /// invalid immutable sampler.
    pub fn set_layout(
        &self,
        desc: &DescriptorSetLayoutDesc,
    ) -> Result<Arc<SetLayout>, DescriptorError> {
        get_or_create(&self.shared, desc)
    }

    /// Number of distinct live set layouts on this device.
    pub fn set_layout_count(&self) -> usize {
        self.shared
            .slot::<SetLayoutCache>()
            .map_or(0, SetLayoutCache::live)
    }

    /// Allocates a descriptor set of `layout` for set number `set` (the number is used in
    /// messages). A set made from a pipeline ([`ComputePipeline::descriptor_set`]) also
    /// knows the reflected binding names ([`DescriptorSet::write_named`]); this one does
    /// not.
    ///
    /// Errors: `KILN-E109` a layout of another device.
    ///
    /// [`ComputePipeline::descriptor_set`]: crate::ComputePipeline::descriptor_set
    pub fn descriptor_set(
        &self,
        layout: &Arc<SetLayout>,
        set: u32,
    ) -> Result<DescriptorSet, DescriptorError> {
        self.descriptor_set_with_count(layout, set, None)
    }

    /// Like [`descriptor_set`](Self::descriptor_set), giving the actual descriptor count of
    /// the layout's `VARIABLE_DESCRIPTOR_COUNT` binding (default: its maximum). Pool usage
    /// follows the actual count (Vulkan spec §14.2.3).
    ///
    /// Errors: `KILN-E203` count above the binding's maximum, `KILN-E109` a layout of
    /// another device.
    pub fn descriptor_set_with_count(
        &self,
        layout: &Arc<SetLayout>,
        set: u32,
        variable_count: Option<u32>,
    ) -> Result<DescriptorSet, DescriptorError> {
        allocate_set_in(&self.shared, layout, set, 0, variable_count)
    }
}
