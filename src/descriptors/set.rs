//! Descriptor sets and checked writes.
//!
//! A write is checked against the set layout before Vulkan sees it: the binding exists,
//! the descriptor type matches (VUID-VkWriteDescriptorSet-descriptorType-00330 ff.), the
//! array element is in range (VUID-VkWriteDescriptorSet-dstArrayElement-00321), the buffer
//! was created with the matching usage (VUID-VkWriteDescriptorSet-descriptorType-00331,
//! -00330), the range is within `maxUniformBufferRange` / `maxStorageBufferRange`
//! (VUID-VkWriteDescriptorSet-descriptorType-00332, -00333) and the offset is aligned
//! (VUID-VkWriteDescriptorSet-descriptorType-00327, -00328). A failed check returns an
//! error and makes no Vulkan call.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::layout::SetLayout;
use crate::device::{Buffer, Device};
use crate::error::{Error, Result};

/// A resource a set refers to, kept alive as long as the set is.
#[derive(Clone, Debug)]
#[allow(dead_code)] // held only to keep the resource alive
enum Held {
    Buffer(Buffer),
}

/// A descriptor set allocated from its layout's growing pool. Freed on drop.
pub struct DescriptorSet {
    layout: Arc<SetLayout>,
    raw: vk::DescriptorSet,
    pool: usize,
    set: u32,
    names: Arc<BTreeMap<String, u32>>,
    /// Per layout binding (same order as the layout's bindings), per array element.
    held: Vec<Vec<Option<Held>>>,
    /// Timeline value of the last submission that bound this set.
    pub(crate) last_used: AtomicU64,
}

impl std::fmt::Debug for DescriptorSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DescriptorSet")
            .field("set", &self.set)
            .field("layout_id", &self.layout.id())
            .finish()
    }
}

impl Device {
    /// Allocates a set of `layout` for set number `set` (the number is used in messages).
    /// `names` maps reflected binding names to numbers for [`DescriptorSet::write_named`].
    pub fn allocate_set(
        &self,
        layout: &Arc<SetLayout>,
        set: u32,
        names: Arc<BTreeMap<String, u32>>,
    ) -> Result<DescriptorSet> {
        self.allocate_set_with_count(layout, set, names, None)
    }

    /// Like [`allocate_set`](Self::allocate_set), giving the actual descriptor count of the
    /// layout's `VARIABLE_DESCRIPTOR_COUNT` binding (default: its maximum). Pool usage
    /// follows the actual count (Vulkan spec §14.2.3).
    ///
    /// Errors: `KILN-E203` count above the binding's maximum, `KILN-E109` a layout of
    /// another device.
    pub fn allocate_set_with_count(
        &self,
        layout: &Arc<SetLayout>,
        set: u32,
        names: Arc<BTreeMap<String, u32>>,
        variable_count: Option<u32>,
    ) -> Result<DescriptorSet> {
        if !Arc::ptr_eq(&layout.shared, &self.shared) {
            return Err(Error::ForeignObject {
                object: format!("set layout {} (set {set})", layout.id()),
            });
        }
        let variable = layout.desc().bindings().last().filter(|b| {
            b.flags
                .contains(vk::DescriptorBindingFlags::VARIABLE_DESCRIPTOR_COUNT)
        });
        let count = match (variable, variable_count) {
            (Some(b), Some(n)) if n > b.count => {
                return Err(Error::ArrayElementOutOfRange {
                    set,
                    binding: b.binding,
                    count: b.count,
                    element: n,
                })
            }
            (Some(_), Some(n)) => Some(n),
            (Some(b), None) => Some(b.count),
            (None, _) => None,
        };
        let (raw, pool) = layout
            .pools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .allocate(&self.shared.raw, layout.raw(), count)?;
        let last = layout.desc().bindings().len().saturating_sub(1);
        let held = layout
            .desc()
            .bindings()
            .iter()
            .enumerate()
            .map(|(i, b)| match count {
                Some(n) if i == last => vec![None; n as usize],
                _ => vec![None; b.count as usize],
            })
            .collect();
        Ok(DescriptorSet {
            layout: layout.clone(),
            raw,
            pool,
            set,
            names,
            held,
            last_used: AtomicU64::new(0),
        })
    }
}

fn usage_for(ty: vk::DescriptorType) -> vk::BufferUsageFlags {
    match ty {
        vk::DescriptorType::UNIFORM_BUFFER | vk::DescriptorType::UNIFORM_BUFFER_DYNAMIC => {
            vk::BufferUsageFlags::UNIFORM_BUFFER
        }
        vk::DescriptorType::STORAGE_BUFFER | vk::DescriptorType::STORAGE_BUFFER_DYNAMIC => {
            vk::BufferUsageFlags::STORAGE_BUFFER
        }
        _ => vk::BufferUsageFlags::empty(),
    }
}

impl DescriptorSet {
    /// The set's layout (interned).
    pub fn layout(&self) -> &Arc<SetLayout> {
        &self.layout
    }

    /// The set number this set was allocated for.
    pub fn set_number(&self) -> u32 {
        self.set
    }

    /// The raw handle (owned by this object).
    pub fn raw(&self) -> vk::DescriptorSet {
        self.raw
    }

    /// The binding number of a reflected name.
    pub fn binding_of(&self, name: &str) -> Result<u32> {
        self.names
            .get(name)
            .copied()
            .ok_or_else(|| Error::NoSuchBindingName {
                set: self.set,
                name: name.to_string(),
            })
    }

    /// Writes the whole `buffer` to `binding` (element 0); the descriptor type is the
    /// layout's (uniform or storage buffer).
    pub fn write_buffer(&mut self, binding: u32, buffer: &Buffer) -> Result<()> {
        self.write_buffer_range(binding, 0, None, buffer, 0, buffer.size())
    }

    /// Writes the whole `buffer` to array element `element` of `binding`.
    pub fn write_buffer_at(&mut self, binding: u32, element: u32, buffer: &Buffer) -> Result<()> {
        self.write_buffer_range(binding, element, None, buffer, 0, buffer.size())
    }

    /// Writes `buffer` to the binding whose reflected name is `name`.
    pub fn write_named(&mut self, name: &str, buffer: &Buffer) -> Result<()> {
        let binding = self.binding_of(name)?;
        self.write_buffer(binding, buffer)
    }

    /// Writes `buffer` as a uniform buffer: an error if the binding is not one.
    pub fn write_uniform_buffer(&mut self, binding: u32, buffer: &Buffer) -> Result<()> {
        let ty = Some(vk::DescriptorType::UNIFORM_BUFFER);
        self.write_buffer_range(binding, 0, ty, buffer, 0, buffer.size())
    }

    /// Writes `buffer` as a storage buffer: an error if the binding is not one.
    pub fn write_storage_buffer(&mut self, binding: u32, buffer: &Buffer) -> Result<()> {
        let ty = Some(vk::DescriptorType::STORAGE_BUFFER);
        self.write_buffer_range(binding, 0, ty, buffer, 0, buffer.size())
    }

    /// Writes `[offset, offset + range)` of `buffer` to array element `element` of
    /// `binding`. `ty`, when given, is the descriptor type the caller means to write; it
    /// must equal the layout's. Offsets and ranges are in bytes.
    pub fn write_buffer_range(
        &mut self,
        binding: u32,
        element: u32,
        ty: Option<vk::DescriptorType>,
        buffer: &Buffer,
        offset: u64,
        range: u64,
    ) -> Result<()> {
        let desc = self.layout.desc();
        let idx = desc
            .bindings()
            .binary_search_by_key(&binding, |b| b.binding)
            .map_err(|_| Error::NoSuchBinding {
                set: self.set,
                binding,
                available: desc.bindings().iter().map(|b| b.binding).collect(),
            })?;
        if !Arc::ptr_eq(buffer.shared(), &self.layout.shared) {
            return Err(Error::ForeignObject {
                object: format!(
                    "buffer `{}` (written to set {} binding {binding})",
                    buffer.label(),
                    self.set
                ),
            });
        }
        let b = &desc.bindings()[idx];
        let expected = b.descriptor_type;
        if let Some(found) = ty {
            if found != expected {
                return Err(Error::DescriptorTypeMismatch {
                    set: self.set,
                    binding,
                    expected,
                    found,
                    hint: "write the descriptor type the shader declares",
                });
            }
        }
        let needed = usage_for(expected);
        if needed.is_empty() {
            return Err(Error::DescriptorTypeMismatch {
                set: self.set,
                binding,
                expected,
                found: vk::DescriptorType::STORAGE_BUFFER,
                hint: "this binding takes an image, sampler or texel buffer, not a buffer",
            });
        }
        if !buffer.usage().contains(needed) {
            let found = if buffer
                .usage()
                .contains(vk::BufferUsageFlags::UNIFORM_BUFFER)
            {
                vk::DescriptorType::UNIFORM_BUFFER
            } else if buffer
                .usage()
                .contains(vk::BufferUsageFlags::STORAGE_BUFFER)
            {
                vk::DescriptorType::STORAGE_BUFFER
            } else {
                vk::DescriptorType::from_raw(i32::MAX)
            };
            return Err(Error::DescriptorTypeMismatch {
                set: self.set,
                binding,
                expected,
                found,
                hint:
                    "create the buffer with the matching usage (UNIFORM_BUFFER or STORAGE_BUFFER)",
            });
        }
        let actual = self.held[idx].len() as u32;
        if element >= actual {
            return Err(Error::ArrayElementOutOfRange {
                set: self.set,
                binding,
                count: actual,
                element,
            });
        }
        let end = offset.checked_add(range);
        if end.is_none_or(|e| e > buffer.size()) || range == 0 {
            return Err(Error::BufferOverflow {
                object: buffer.label().to_string(),
                capacity: buffer.size(),
                offset,
                requested: range,
            });
        }
        let limits = self.layout.shared.limits();
        let (limit, limit_name, align, align_name) =
            if needed == vk::BufferUsageFlags::UNIFORM_BUFFER {
                (
                    limits.max_uniform_buffer_range as u64,
                    "maxUniformBufferRange",
                    limits.min_uniform_buffer_offset_alignment,
                    "minUniformBufferOffsetAlignment",
                )
            } else {
                (
                    limits.max_storage_buffer_range as u64,
                    "maxStorageBufferRange",
                    limits.min_storage_buffer_offset_alignment,
                    "minStorageBufferOffsetAlignment",
                )
            };
        if range > limit {
            return Err(Error::BufferRangeTooLarge {
                set: self.set,
                binding,
                range,
                limit,
                limit_name,
            });
        }
        if align > 0 && !offset.is_multiple_of(align) {
            return Err(Error::MisalignedOffset {
                set: self.set,
                binding,
                offset,
                alignment: align,
                limit_name: align_name,
            });
        }
        self.wait_unused()?;
        let info = [vk::DescriptorBufferInfo {
            buffer: buffer.raw(),
            offset,
            range,
        }];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.raw)
            .dst_binding(binding)
            .dst_array_element(element)
            .descriptor_type(expected)
            .buffer_info(&info);
        // SAFETY: every field was checked against the layout and limits above; the set is
        // not in use by a pending command buffer (kiln's execute waits) and `&mut self`
        // gives the external synchronization vkUpdateDescriptorSets needs.
        unsafe { self.layout.shared.raw.update_descriptor_sets(&[write], &[]) };
        self.held[idx][element as usize] = Some(Held::Buffer(buffer.clone()));
        Ok(())
    }

    /// Waits until no pending submission uses this set (VUID-vkUpdateDescriptorSets-None-03047:
    /// a set in use may not be updated without UPDATE_AFTER_BIND).
    fn wait_unused(&self) -> Result<()> {
        let used = self.last_used.load(Ordering::Acquire);
        let shared = &self.layout.shared;
        if used > shared.completed_value() {
            shared.wait_value(used, crate::device::EXECUTE_TIMEOUT)?;
        }
        Ok(())
    }

    /// The first binding (in number order) with an element never written, if any.
    pub fn first_unwritten(&self) -> Option<u32> {
        let desc = self.layout.desc();
        desc.bindings().iter().zip(&self.held).find_map(|(b, h)| {
            let partially = b
                .flags
                .contains(vk::DescriptorBindingFlags::PARTIALLY_BOUND);
            (!partially && h.iter().any(|e| e.is_none())).then_some(b.binding)
        })
    }
}

impl Drop for DescriptorSet {
    fn drop(&mut self) {
        let layout = self.layout.clone();
        let (raw, pool) = (self.raw, self.pool);
        let held = std::mem::take(&mut self.held);
        // The closure keeps the layout (and the resources the set refers to) alive until
        // every submission that may use the set has finished.
        self.layout.shared.retire(move |s| {
            layout
                .pools
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .free(&s.raw, raw, pool);
            drop(held);
        });
    }
}
