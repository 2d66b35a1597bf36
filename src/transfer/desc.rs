//! [`TransferDesc`], the transfer layer's options (given to a device as
//! `DeviceDesc::transfers`), the queue policies it names ([`ReadbackQueue`],
//! [`UploadQueue`]), how the environment variables that stand in for them are read
//! (`KILN_READBACK_QUEUE`, `KILN_UPLOAD_QUEUE`, `KILN_TRANSFER_SPLIT`), and the per-device
//! settings made of them (`TransferSettings`, a layer slot).

use super::host_memory::HostBufferMemory;
use super::split::{self, TransferSplit};
use crate::device::{DeviceDesc, LayerSlot, Shared};

/// The transfer layer's options for [`Device::with_desc`](crate::Device::with_desc): where
/// host buffers take memory from, which queues uploads and readbacks use, how large
/// host-buffer copies are split over queues. Given as
/// [`DeviceDesc::transfers`](crate::DeviceDesc::transfers); `DeviceDesc`'s
/// `host_buffer_memory`, `readback_queue`, `upload_queue` and `transfer_split` are
/// shorthands that set one field of it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TransferDesc {
    /// Where host buffers (`Device::host_buffer`) take their memory from: the driver's
    /// host-cached memory type, or host pages kiln maps itself and imports
    /// (`VK_EXT_external_memory_host`); default [`HostBufferMemory::Auto`].
    pub host_buffer_memory: HostBufferMemory,
    /// Which queue kiln's readbacks use ([`ReadbackQueue`]; default `Auto`: the
    /// `KILN_READBACK_QUEUE` environment variable where set, else kiln's policy).
    pub readback_queue: ReadbackQueue,
    /// Which queue kiln's uploads use ([`UploadQueue`]; default `Auto`: the
    /// `KILN_UPLOAD_QUEUE` environment variable where set, else the first transfer queue).
    pub upload_queue: UploadQueue,
    /// How large copies between host buffers (or imported memory) and device buffers are
    /// split over queues ([`TransferSplit`]: by default copies of 64 MiB or more in up to
    /// three parts on three queues); `None` = the `KILN_TRANSFER_SPLIT` environment variable
    /// where set (`off`, `<parts>` or `<parts>:<min MiB>`), else [`TransferSplit::DEFAULT`].
    pub transfer_split: Option<TransferSplit>,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`.
setters! { TransferDesc {
    host_buffer_memory: HostBufferMemory,
    readback_queue: ReadbackQueue,
    upload_queue: UploadQueue,
    transfer_split: Option<TransferSplit>,
} }

impl DeviceDesc {
    /// Sets the transfer layer's options ([`TransferDesc`]), replacing all of them: a
    /// shorthand called before (`readback_queue`, `upload_queue`, `transfer_split`,
    /// `host_buffer_memory`) is undone, one called after changes its one field. Settings
    /// left `Auto`/`None` are read from `KILN_READBACK_QUEUE`, `KILN_UPLOAD_QUEUE` and
    /// `KILN_TRANSFER_SPLIT` at device creation.
    pub fn transfers(mut self, transfers: TransferDesc) -> Self {
        self.layers.set(transfers);
        self
    }

    /// The transfer layer's options ([`transfers`](Self::transfers); the default where
    /// none were given).
    pub fn transfer_desc(&self) -> TransferDesc {
        self.layers
            .get::<TransferDesc>()
            .cloned()
            .unwrap_or_default()
    }

    /// Shorthand: sets [`TransferDesc::host_buffer_memory`] of
    /// [`transfers`](Self::transfers).
    pub fn host_buffer_memory(self, host_buffer_memory: HostBufferMemory) -> Self {
        let t = self.transfer_desc().host_buffer_memory(host_buffer_memory);
        self.transfers(t)
    }

    /// Shorthand: sets [`TransferDesc::readback_queue`] of [`transfers`](Self::transfers).
    pub fn readback_queue(self, readback_queue: ReadbackQueue) -> Self {
        let t = self.transfer_desc().readback_queue(readback_queue);
        self.transfers(t)
    }

    /// Shorthand: sets [`TransferDesc::upload_queue`] of [`transfers`](Self::transfers).
    pub fn upload_queue(self, upload_queue: UploadQueue) -> Self {
        let t = self.transfer_desc().upload_queue(upload_queue);
        self.transfers(t)
    }

    /// Shorthand: sets [`TransferDesc::transfer_split`] of [`transfers`](Self::transfers).
    pub fn transfer_split(self, transfer_split: Option<TransferSplit>) -> Self {
        let t = self.transfer_desc().transfer_split(transfer_split);
        self.transfers(t)
    }
}

/// Which queue kiln's readbacks use (`TransferDesc::readback_queue`,
/// [`Device::readback_queue`](crate::Device::readback_queue)); uploads use the first
/// transfer queue. A queue runs its submissions in order, so readbacks overlap uploads only
/// on another queue, and only where that queue's copies run on another copy engine.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadbackQueue {
    /// kiln's policy (`transfer/copies.rs`, `readback_policy`): the last transfer queue.
    #[default]
    Auto,
    /// The last transfer queue (the second where kiln created two; else the first, or the
    /// main queue on a device without transfer queues).
    Transfer,
    /// The main queue.
    Main,
    /// The first async-compute queue (the main queue where the device has none).
    Compute,
    /// A compute-capable queue beside the first async-compute queue (where a stream's
    /// dispatches run): the second async-compute queue where kiln created one
    /// (`DeviceDesc::compute_queues` ≥ 2), else the main queue; a readback into a host
    /// buffer there is a dispatch of kiln's copy shader (the shader cores write host memory)
    /// instead of a copy-engine copy, where the copy allows it (`transfer/shader_copy.rs`):
    /// for devices whose copy engines do not run an upload and a readback at once.
    ComputeShader,
}

/// Which queue kiln's uploads use (`TransferDesc::upload_queue`,
/// [`Device::upload_queue`](crate::Device::upload_queue)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UploadQueue {
    /// kiln's policy: the first transfer queue.
    #[default]
    Auto,
    /// The first transfer queue (the main queue on a device without transfer queues).
    Transfer,
    /// The main queue.
    Main,
    /// The compute-capable queue [`ReadbackQueue::ComputeShader`] names (the second
    /// async-compute queue where kiln created one, else the main queue); an upload from a
    /// host buffer there is a dispatch of kiln's copy shader (the shader cores read host
    /// memory over the bus) instead of a copy-engine copy, where the copy allows it
    /// (`transfer/shader_copy.rs`): the upload stage of a stream beside copy-engine readbacks.
    ComputeShader,
}

/// `desc` (`TransferDesc::upload_queue`) unless `Auto`, else `KILN_UPLOAD_QUEUE` (`transfer`,
/// `main`, `compute-shader`) where set; a value it does not know is logged as `KILN-W015`.
fn upload_queue_setting(desc: UploadQueue) -> UploadQueue {
    if desc != UploadQueue::Auto {
        return desc;
    }
    match std::env::var("KILN_UPLOAD_QUEUE").as_deref() {
        Err(_) | Ok("") | Ok("auto") => UploadQueue::Auto,
        Ok("transfer") => UploadQueue::Transfer,
        Ok("main") => UploadQueue::Main,
        Ok("compute-shader") => UploadQueue::ComputeShader,
        Ok(other) => {
            log::warn!(
                "KILN-W015: KILN_UPLOAD_QUEUE=`{other}` is not one of auto, transfer, main, \
                 compute-shader; kiln's policy (auto) is used"
            );
            UploadQueue::Auto
        }
    }
}

/// `desc` (`TransferDesc::readback_queue`) unless `Auto`, else `KILN_READBACK_QUEUE` (`transfer`, `main`,
/// `compute`, `compute-shader`) where set, a value it does not know logged as `KILN-W012`.
fn readback_queue_setting(desc: ReadbackQueue) -> ReadbackQueue {
    if desc != ReadbackQueue::Auto {
        return desc;
    }
    match std::env::var("KILN_READBACK_QUEUE").as_deref() {
        Err(_) | Ok("") | Ok("auto") => ReadbackQueue::Auto,
        Ok("transfer") => ReadbackQueue::Transfer,
        Ok("main") => ReadbackQueue::Main,
        Ok("compute") => ReadbackQueue::Compute,
        Ok("compute-shader") => ReadbackQueue::ComputeShader,
        Ok(other) => {
            log::warn!(
                "KILN-W012: KILN_READBACK_QUEUE=`{other}` is not one of auto, transfer, main, \
                 compute, compute-shader; kiln's policy (auto) is used"
            );
            ReadbackQueue::Auto
        }
    }
}

/// A device's transfer settings: its [`TransferDesc`] with the environment read (a layer
/// slot, registered at device creation). The host-buffer memory and the split are the
/// bench's knobs: with feature `unstable-hooks` they are atomics that
/// `Device::debug_set_host_buffer_memory` and `Device::debug_set_transfer_split` change,
/// else plain values.
pub(crate) struct TransferSettings {
    pub readback_queue: ReadbackQueue,
    pub upload_queue: UploadQueue,
    #[cfg(not(feature = "unstable-hooks"))]
    host_buffer_memory: HostBufferMemory,
    #[cfg(not(feature = "unstable-hooks"))]
    split: TransferSplit,
    #[cfg(feature = "unstable-hooks")]
    knobs: Knobs,
}

/// The bench's knobs (`HostBufferMemory::to_u8`; the split's `min_bytes`, `max_parts`).
#[cfg(feature = "unstable-hooks")]
struct Knobs {
    host_buffer_memory: std::sync::atomic::AtomicU8,
    split_min_bytes: std::sync::atomic::AtomicU64,
    split_max_parts: std::sync::atomic::AtomicU32,
}

impl TransferSettings {
    /// `desc` with the environment read where it leaves a setting to it.
    pub(crate) fn new(desc: &TransferDesc) -> TransferSettings {
        let split = split::from_desc(desc.transfer_split);
        TransferSettings {
            readback_queue: readback_queue_setting(desc.readback_queue),
            upload_queue: upload_queue_setting(desc.upload_queue),
            #[cfg(not(feature = "unstable-hooks"))]
            host_buffer_memory: desc.host_buffer_memory,
            #[cfg(not(feature = "unstable-hooks"))]
            split,
            #[cfg(feature = "unstable-hooks")]
            knobs: Knobs {
                host_buffer_memory: desc.host_buffer_memory.to_u8().into(),
                split_min_bytes: split.min_bytes.into(),
                split_max_parts: split.max_parts.into(),
            },
        }
    }

    /// Where host buffers take their memory from now.
    pub(crate) fn host_buffer_memory(&self) -> HostBufferMemory {
        #[cfg(feature = "unstable-hooks")]
        return HostBufferMemory::from_u8(
            self.knobs
                .host_buffer_memory
                .load(std::sync::atomic::Ordering::Relaxed),
        );
        #[cfg(not(feature = "unstable-hooks"))]
        self.host_buffer_memory
    }

    /// The split policy now.
    pub(crate) fn split(&self) -> TransferSplit {
        #[cfg(feature = "unstable-hooks")]
        return TransferSplit {
            min_bytes: self
                .knobs
                .split_min_bytes
                .load(std::sync::atomic::Ordering::Relaxed),
            max_parts: self
                .knobs
                .split_max_parts
                .load(std::sync::atomic::Ordering::Relaxed),
        };
        #[cfg(not(feature = "unstable-hooks"))]
        self.split
    }

    /// Changes where later host buffers take their memory from (the bench's sweep).
    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn set_host_buffer_memory(&self, memory: HostBufferMemory) {
        let k = &self.knobs;
        k.host_buffer_memory
            .store(memory.to_u8(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Changes the split policy for later copies (the bench's sweep).
    #[cfg(feature = "unstable-hooks")]
    pub(crate) fn set_split(&self, split: TransferSplit) {
        let k = &self.knobs;
        k.split_min_bytes
            .store(split.min_bytes, std::sync::atomic::Ordering::Relaxed);
        k.split_max_parts
            .store(split.max_parts, std::sync::atomic::Ordering::Relaxed);
    }
}

impl LayerSlot for TransferSettings {
    fn teardown(&mut self, _device: &Shared) {}
}

/// The transfer settings of `shared` (registered at device creation, so the fallback, the
/// defaults with the environment read, is never reached on a device `Device::with_desc`
/// made).
pub(crate) fn settings(shared: &Shared) -> &TransferSettings {
    static FALLBACK: std::sync::OnceLock<TransferSettings> = std::sync::OnceLock::new();
    shared.slot::<TransferSettings>().unwrap_or_else(|_| {
        FALLBACK.get_or_init(|| TransferSettings::new(&TransferDesc::default()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_desc_shorthands_set_one_field_of_the_transfer_desc() {
        let d = DeviceDesc::default();
        assert_eq!(d.transfer_desc(), TransferDesc::default());
        let d = d
            .readback_queue(ReadbackQueue::Main)
            .transfer_split(Some(TransferSplit::OFF))
            .host_buffer_memory(HostBufferMemory::Driver)
            .upload_queue(UploadQueue::ComputeShader);
        let want = TransferDesc::default()
            .readback_queue(ReadbackQueue::Main)
            .transfer_split(Some(TransferSplit::OFF))
            .host_buffer_memory(HostBufferMemory::Driver)
            .upload_queue(UploadQueue::ComputeShader);
        assert_eq!(d.transfer_desc(), want);
        // `transfers` replaces the whole struct; a shorthand after it changes one field.
        let d = d
            .transfers(TransferDesc::default())
            .upload_queue(UploadQueue::Main);
        assert_eq!(
            d.transfer_desc(),
            TransferDesc::default().upload_queue(UploadQueue::Main)
        );
        // A clone of the description carries its transfer options.
        assert_eq!(d.clone().transfer_desc(), d.transfer_desc());
    }

    #[test]
    fn settings_keep_what_the_desc_names() {
        let desc = TransferDesc::default()
            .readback_queue(ReadbackQueue::Compute)
            .upload_queue(UploadQueue::Main)
            .transfer_split(Some(TransferSplit {
                min_bytes: 1 << 20,
                max_parts: 2,
            }))
            .host_buffer_memory(HostBufferMemory::Imported);
        let s = TransferSettings::new(&desc);
        assert_eq!(s.readback_queue, ReadbackQueue::Compute);
        assert_eq!(s.upload_queue, UploadQueue::Main);
        assert_eq!(s.host_buffer_memory(), HostBufferMemory::Imported);
        assert_eq!(
            s.split(),
            TransferSplit {
                min_bytes: 1 << 20,
                max_parts: 2
            }
        );
    }
}
