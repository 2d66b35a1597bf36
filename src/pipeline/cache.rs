//! The persisted `VkPipelineCache` (Vulkan spec §10.7 "Pipeline Cache").
//!
//! Every device owns one pipeline cache that all of kiln's pipeline creation goes through.
//! It is loaded from disk when the device is created and written back when the device
//! drops, so the second run of a program skips the driver's shader compiler.
//!
//! (File name, `KILN_PIPELINE_CACHE`, the header check and atomic writes are documented
//! on [`PipelineCacheStatus`].)

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use ash::vk;

use crate::device::{LayerSlot, Shared};
use crate::error::{vk_device_err, PipelineError, Result};

/// Size of `VkPipelineCacheHeaderVersionOne` in bytes.
pub(crate) const HEADER_SIZE: usize = 16 + vk::UUID_SIZE;

/// What happened to the on-disk pipeline cache when the device was created
/// ([`Device::pipeline_cache_status`](crate::Device::pipeline_cache_status)).
///
/// Every device owns one `VkPipelineCache` that all of kiln's compute pipeline creation goes
/// through. It is loaded from disk when the device is created and written back when the
/// device drops, so the second run of a program skips the driver's shader compiler.
///
/// - **File**: `<dir>/<vendorID>-<deviceID>-<driverVersion>-<pipelineCacheUUID>.bin`
///   (hex), holding exactly what `vkGetPipelineCacheData` returned. `<dir>` is
///   `$KILN_PIPELINE_CACHE_DIR`, else `$XDG_CACHE_HOME/kiln`, else `$HOME/.cache/kiln`.
///   A driver update changes the driver version or UUID and so the file name: stale data is
///   never handed to a new driver.
/// - **Disable**: `KILN_PIPELINE_CACHE=0` (or `false`/`off`): an in-memory cache is still
///   used within the process, nothing is read or written.
/// - **Validation**: before any byte reaches the driver, the file's
///   `VkPipelineCacheHeaderVersionOne` (spec §10.7.4, little-endian) is checked: header
///   length ≥ 32 and ≤ file length, header version 1, vendor ID, device ID and
///   `pipelineCacheUUID` equal to the device's. A file that fails is ignored with a
///   `KILN-W002` warning and an empty cache is used.
/// - **Writing**: atomic — the data goes to a temporary file in the same folder, which is
///   then renamed over the old one, so a crash or a concurrent process never leaves a
///   half-written file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PipelineCacheStatus {
    /// `KILN_PIPELINE_CACHE=0`, or no cache folder could be determined.
    Disabled,
    /// No file existed yet; the cache starts empty and is written on drop.
    Empty {
        /// The cache file (written when the device drops).
        path: PathBuf,
    },
    /// `bytes` bytes were loaded from `path`.
    Loaded {
        /// The cache file.
        path: PathBuf,
        /// Bytes of cache data given to the driver.
        bytes: usize,
    },
    /// The file was unreadable or its header did not match; it was ignored (and will be
    /// replaced on drop).
    Ignored {
        /// The cache file.
        path: PathBuf,
        /// Why it was ignored (unreadable, another driver's header, torn).
        reason: String,
    },
}

/// Whether the persisted cache is wanted (`KILN_PIPELINE_CACHE`, default on).
pub(crate) fn persistence_enabled() -> bool {
    !matches!(
        std::env::var("KILN_PIPELINE_CACHE").as_deref(),
        Ok("0") | Ok("false") | Ok("off")
    )
}

/// The folder cache files go to (see the module docs), or `None` when no variable names
/// one.
pub fn cache_dir() -> Option<PathBuf> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = non_empty("KILN_PIPELINE_CACHE_DIR") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("kiln"));
    }
    non_empty("HOME").map(|h| PathBuf::from(h).join(".cache").join("kiln"))
}

/// The cache file name for a device: vendor, device, driver version and UUID in hex.
pub fn file_name(props: &vk::PhysicalDeviceProperties) -> String {
    let uuid: String = props
        .pipeline_cache_uuid
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{:04x}-{:04x}-{:08x}-{uuid}.bin",
        props.vendor_id, props.device_id, props.driver_version
    )
}

/// Checks `data` against `VkPipelineCacheHeaderVersionOne` for this device (Vulkan spec
/// §10.7.4; fields are little-endian regardless of host byte order). Returns why it does
/// not match.
pub fn check_header(
    data: &[u8],
    props: &vk::PhysicalDeviceProperties,
) -> std::result::Result<(), String> {
    if data.len() < HEADER_SIZE {
        return Err(format!(
            "{} bytes, shorter than the {HEADER_SIZE}-byte header",
            data.len()
        ));
    }
    let word = |i: usize| u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
    let (len, version, vendor, device) = (word(0), word(4), word(8), word(12));
    if (len as usize) < HEADER_SIZE || len as usize > data.len() {
        return Err(format!(
            "header length {len} is outside [{HEADER_SIZE}, {}]",
            data.len()
        ));
    }
    if version != vk::PipelineCacheHeaderVersion::ONE.as_raw() as u32 {
        return Err(format!("header version {version}, expected 1"));
    }
    if vendor != props.vendor_id || device != props.device_id {
        return Err(format!(
            "made for vendor {vendor:#x} device {device:#x}, this is vendor {:#x} device {:#x}",
            props.vendor_id, props.device_id
        ));
    }
    if data[16..HEADER_SIZE] != props.pipeline_cache_uuid {
        return Err("pipelineCacheUUID differs (another driver build)".into());
    }
    Ok(())
}

/// Reads the file and checks its header.
fn load(path: &Path, props: &vk::PhysicalDeviceProperties) -> std::result::Result<Vec<u8>, String> {
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    check_header(&data, props)?;
    Ok(data)
}

/// A device's pipeline cache and where it persists.
pub(crate) struct PipelineCache {
    raw: vk::PipelineCache,
    path: Option<PathBuf>,
    status: PipelineCacheStatus,
}

impl PipelineCache {
    /// Creates the cache, seeded from disk when the file exists and is valid. Never fails
    /// because of the file: a bad file only yields a warning.
    pub(crate) fn open(
        device: &ash::Device,
        props: &vk::PhysicalDeviceProperties,
    ) -> Result<Self, PipelineError> {
        let path = persistence_enabled()
            .then(cache_dir)
            .flatten()
            .map(|d| d.join(file_name(props)));
        let (data, status) = match &path {
            None => (Vec::new(), PipelineCacheStatus::Disabled),
            Some(p) if !p.exists() => (Vec::new(), PipelineCacheStatus::Empty { path: p.clone() }),
            Some(p) => match load(p, props) {
                Ok(data) => {
                    let bytes = data.len();
                    (
                        data,
                        PipelineCacheStatus::Loaded {
                            path: p.clone(),
                            bytes,
                        },
                    )
                }
                Err(reason) => {
                    log::warn!(
                        "KILN-W002: ignoring pipeline cache file {}: {reason}; starting with an \
                         empty cache (the file is replaced when the device drops)",
                        p.display()
                    );
                    (
                        Vec::new(),
                        PipelineCacheStatus::Ignored {
                            path: p.clone(),
                            reason,
                        },
                    )
                }
            },
        };
        let info = vk::PipelineCacheCreateInfo::default().initial_data(&data);
        // SAFETY: `data` is empty or passed the header check against this device
        // (VUID-VkPipelineCacheCreateInfo-initialDataSize-00769 only asks for the size to
        // match the pointer); the driver validates the body itself (spec §10.7.4).
        let raw = match unsafe { device.create_pipeline_cache(&info, None) } {
            Ok(c) => c,
            Err(e) if !data.is_empty() => {
                log::warn!("KILN-W002: the driver rejected the pipeline cache data ({e:?}); starting empty");
                let empty = vk::PipelineCacheCreateInfo::default();
                // SAFETY: empty create info.
                unsafe { device.create_pipeline_cache(&empty, None) }
                    .map_err(vk_device_err("vkCreatePipelineCache"))?
            }
            Err(e) => return Err(vk_device_err("vkCreatePipelineCache")(e).into()),
        };
        Ok(PipelineCache { raw, path, status })
    }

    pub(crate) fn raw(&self) -> vk::PipelineCache {
        self.raw
    }

    pub(crate) fn status(&self) -> &PipelineCacheStatus {
        &self.status
    }

    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Writes the cache's current data to its file (atomically). Errors are logged, not
    /// returned: a cache that cannot be saved only costs compile time next run.
    pub(crate) fn save(&self, device: &ash::Device) {
        let Some(path) = &self.path else { return };
        // SAFETY: the cache belongs to `device`; it is internally synchronized.
        let data = match unsafe { device.get_pipeline_cache_data(self.raw) } {
            Ok(d) => d,
            Err(e) => {
                log::warn!("KILN-W003: vkGetPipelineCacheData failed ({e:?}); cache not saved");
                return;
            }
        };
        if let Err(e) = write_atomically(path, &data) {
            log::warn!(
                "KILN-W003: could not write pipeline cache {}: {e}",
                path.display()
            );
        }
    }

    /// Saves, then destroys the cache. Call once, before the device is destroyed.
    pub(crate) fn save_and_destroy(&mut self, device: &ash::Device) {
        if self.raw == vk::PipelineCache::null() {
            return;
        }
        self.save(device);
        // SAFETY: no pipeline creation is in flight (the device is being dropped: this is
        // the last reference) and the handle is destroyed once (nulled below).
        unsafe { device.destroy_pipeline_cache(self.raw, None) };
        self.raw = vk::PipelineCache::null();
    }
}

impl LayerSlot for PipelineCache {
    fn teardown(&mut self, shared: &Shared) {
        // Every pipeline held an Arc<Shared> or was retired before: save the cache now.
        self.save_and_destroy(&shared.raw);
    }
}

fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    // Unique per process and per save, so devices dropping at once never share a temp file.
    static SAVES: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.{}-{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id(),
        SAVES.fetch_add(1, Ordering::Relaxed)
    ));
    let result = std::fs::write(&tmp, data).and_then(|_| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props() -> vk::PhysicalDeviceProperties {
        vk::PhysicalDeviceProperties {
            vendor_id: 0x10de,
            device_id: 0x2335,
            driver_version: 7,
            pipeline_cache_uuid: [9; 16],
            ..Default::default()
        }
    }

    fn header(p: &vk::PhysicalDeviceProperties) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&32u32.to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&p.vendor_id.to_le_bytes());
        v.extend_from_slice(&p.device_id.to_le_bytes());
        v.extend_from_slice(&p.pipeline_cache_uuid);
        v
    }

    /// Threads saving one path at once: the file is always exactly one writer's data.
    #[test]
    fn concurrent_saves_never_publish_a_torn_file() {
        let dir = std::env::temp_dir().join(format!("kiln-cache-race-{}", std::process::id()));
        let path = dir.join("c.bin");
        let blobs: Vec<Vec<u8>> = (0..6u8)
            .map(|t| vec![t + 1; 200_000 + 37_000 * t as usize])
            .collect();
        std::thread::scope(|s| {
            for b in &blobs {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..40 {
                        write_atomically(path, b).unwrap();
                    }
                });
            }
        });
        let got = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            blobs.contains(&got),
            "torn cache file: {} bytes, first {:?}, last {:?}",
            got.len(),
            got.first(),
            got.last()
        );
    }

    #[test]
    fn header_checks() {
        let p = props();
        let mut h = header(&p);
        assert_eq!(check_header(&h, &p), Ok(()));
        h.extend_from_slice(&[1, 2, 3]);
        assert_eq!(check_header(&h, &p), Ok(()));
        assert!(check_header(&h[..20], &p).unwrap_err().contains("shorter"));
        let mut bad = header(&p);
        bad[4] = 2;
        assert!(check_header(&bad, &p).unwrap_err().contains("version 2"));
        let mut bad = header(&p);
        bad[0] = 200;
        assert!(check_header(&bad, &p).unwrap_err().contains("length 200"));
        let mut bad = header(&p);
        bad[8] = 0;
        assert!(check_header(&bad, &p).unwrap_err().contains("vendor"));
        let mut bad = header(&p);
        bad[31] ^= 1;
        assert!(check_header(&bad, &p).unwrap_err().contains("UUID"));
        assert_eq!(
            file_name(&p),
            "10de-2335-00000007-09090909090909090909090909090909.bin"
        );
    }
}
