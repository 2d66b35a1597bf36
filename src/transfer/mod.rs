//! The transfer layer, above `queue`: the staging cache, chunked and split copies between
//! host memory and device buffers, host buffers and the host pages kiln maps for them,
//! kiln's copy shader, buffer/image uploads and readbacks, blocking and asynchronous, and
//! copies between devices.
//!
//! Every copy here is recorded and submitted through the `queue` layer's one record and
//! submit path (`queue::submit`).
//!
//! Files: `staging` (the staging cache), `chunks` (chunked, pipelined, multi-threaded
//! staged transfers), `desc` ([`TransferDesc`], the queue policies, the environment variables, the
//! per-device settings), `split` ([`TransferSplit`] and its pure policy), `host_memory`
//! ([`HostBufferMemory`], the host pages of `HostRegion`), `host` ([`HostBuffer`], imported
//! memory), `shader_copy` (readbacks and uploads by kiln's copy shader, `shaders/copy.comp`),
//! `copies` (`Buffer`/`Image` uploads and readbacks, [`Transfer`] and
//! [`Queue`](crate::Queue)'s transfer methods), `between` (copies between devices).

mod between;
mod chunks;
mod copies;
mod desc;
mod device;
mod host;
mod host_memory;
mod shader_copy;
mod split;
mod staging;

pub use between::{copy_between_devices, copy_between_devices_in_chunks, BETWEEN_DEVICES_CHUNK};
pub use copies::Transfer;
pub use desc::{ReadbackQueue, TransferDesc, UploadQueue};
pub use host::HostBuffer;
pub use host_memory::HostBufferMemory;
pub use split::{TransferPart, TransferSplit, SPLIT_ALIGN};
pub use staging::StagingUsage;
#[cfg(feature = "unstable-hooks")]
pub use staging::STAGING_CHUNK;

use crate::device::{DeviceDesc, Shared};
use crate::error::Result;

/// Registers this layer's slots (its settings from `desc`'s [`TransferDesc`], the staging
/// cache, the copy shader's pipelines) on a device being created.
pub(crate) fn register_slots(shared: &mut Shared, desc: &DeviceDesc) -> Result<()> {
    shared.register_slot(desc::TransferSettings::new(&desc.transfer_desc()))?;
    shared.register_slot(staging::StagingCache::default())?;
    shared.register_slot(shader_copy::ShaderCopies::default())
}
