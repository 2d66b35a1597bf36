//! Set-layout descriptions and their content-keyed interner, growing pools, descriptor
//! sets and checked writes (`write.rs`: the write checks set writes and push descriptors
//! share).

mod device;
mod layout;
mod names;
mod pool;
mod set;
mod write;

pub(crate) use layout::{get_or_create as set_layout, SetLayoutCache};
pub use layout::{DescriptorSetLayoutDesc, SetLayout, SetLayoutBinding};
pub(crate) use names::BindingNames;
pub use set::DescriptorSet;
pub(crate) use set::{allocate_set_in, SetResource};
pub(crate) use write::{
    check_buffer_write_in, check_image_write_in, check_texel_write_in, BufferWrite, ImageWrite,
};

use crate::device::Shared;
use crate::error::Result;

/// Registers this layer's slot (the set-layout interner) on a device being created.
pub(crate) fn register_slots(shared: &mut Shared) -> Result<()> {
    shared.register_slot(SetLayoutCache::default())
}
