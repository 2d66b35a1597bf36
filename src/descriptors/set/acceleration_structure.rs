//! Acceleration structure descriptors (`accelerationStructureEXT` in GLSL,
//! VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR): checked writes of top-level structures.

use std::sync::Arc;

use ash::vk;

use super::{DescriptorSet, Held};
use crate::device::AccelerationStructure;
use crate::error::{DescriptorError, DeviceError, Result};

impl DescriptorSet {
    /// Writes the top-level acceleration structure `structure` to `binding` (element 0).
    ///
    /// Errors: as [`write_acceleration_structure_at`](Self::write_acceleration_structure_at).
    pub fn write_acceleration_structure(
        &mut self,
        binding: u32,
        structure: &AccelerationStructure,
    ) -> Result<(), DescriptorError> {
        self.write_acceleration_structure_at(binding, 0, structure)
    }

    /// Writes the top-level acceleration structure `structure` to array element `element`
    /// of an ACCELERATION_STRUCTURE_KHR `binding`. The set keeps the structure (and the
    /// bottom-level ones it places) alive; a dispatch or draw that reads it through the set
    /// waits for its last build (automatic barriers: `ACCELERATION_STRUCTURE_READ` at the
    /// shader's stages).
    ///
    /// Errors: `KILN-E200` no such binding, `KILN-E202` the binding is not an acceleration
    /// structure (VUID-VkWriteDescriptorSet-descriptorType-00325 ff.), `KILN-E203` element
    /// out of range, `KILN-E109` a structure of another device, `KILN-E230` a bottom-level
    /// structure (VUID-VkWriteDescriptorSetAccelerationStructureKHR-pAccelerationStructures-03579).
    pub fn write_acceleration_structure_at(
        &mut self,
        binding: u32,
        element: u32,
        structure: &AccelerationStructure,
    ) -> Result<(), DescriptorError> {
        use vk::DescriptorType as T;
        let idx = self.binding_index(binding)?;
        let expected = self.layout.desc().bindings()[idx].descriptor_type;
        if expected != T::ACCELERATION_STRUCTURE_KHR {
            return Err(DescriptorError::DescriptorTypeMismatch {
                set: self.set,
                binding,
                expected,
                found: T::ACCELERATION_STRUCTURE_KHR,
                hint: "this binding is not an acceleration structure; write what its type takes",
            });
        }
        let count = self.slots(idx).len() as u32;
        if element >= count {
            return Err(DescriptorError::ArrayElementOutOfRange {
                set: self.set,
                binding,
                count,
                element,
            });
        }
        if !Arc::ptr_eq(structure.storage().shared(), &self.layout.shared) {
            return Err(DescriptorError::Device(DeviceError::ForeignObject {
                object: format!(
                    "acceleration structure `{}` (written to set {} binding {binding})",
                    structure.label(),
                    self.set
                ),
            }));
        }
        if structure.ty() != vk::AccelerationStructureTypeKHR::TOP_LEVEL {
            return Err(DescriptorError::AccelerationStructureLevel {
                object: structure.label().to_string(),
                set: self.set,
                binding,
            });
        }
        self.wait_unused()?;
        let handles = [structure.raw()];
        let mut structures = vk::WriteDescriptorSetAccelerationStructureKHR::default()
            .acceleration_structures(&handles);
        let mut write = vk::WriteDescriptorSet::default()
            .dst_set(self.raw())
            .dst_binding(binding)
            .dst_array_element(element)
            .descriptor_type(T::ACCELERATION_STRUCTURE_KHR)
            .push_next(&mut structures);
        // The chained struct's count must equal it
        // (VUID-VkWriteDescriptorSet-descriptorType-02382).
        write.descriptor_count = 1;
        // SAFETY: the binding's type, the element, the device and the level were checked
        // above (a layout with this type exists only on a device with the extension
        // enabled); the set is not in use by a pending command buffer (waited above) and
        // `&mut self` synchronizes the update; the structure is kept alive by the set
        // (`store`).
        unsafe { self.layout.shared.raw.update_descriptor_sets(&[write], &[]) };
        self.store(idx, element, Held::AccelerationStructure(structure.clone()));
        Ok(())
    }
}
