//! Samplers from a description, interned by content like set layouts: equal
//! [`SamplerDesc`]s give the same `VkSampler` (and the same [`Sampler::id`]) while any holder
//! is alive, so immutable samplers in set layouts can be compared by description.

use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ash::vk;

use super::Shared;
use crate::error::{vk_device_err, MemoryError, Result};

/// A sampler by content (`VkSamplerCreateInfo` without pointers). Floats compare and hash
/// by their bits, so `0.0` and `-0.0` are different descriptions and a NaN equals itself.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SamplerDesc {
    /// Magnification filter.
    pub mag_filter: vk::Filter,
    /// Minification filter.
    pub min_filter: vk::Filter,
    /// How mip levels are chosen and blended.
    pub mipmap_mode: vk::SamplerMipmapMode,
    /// Addressing outside [0, 1) along u.
    pub address_mode_u: vk::SamplerAddressMode,
    /// Addressing outside [0, 1) along v.
    pub address_mode_v: vk::SamplerAddressMode,
    /// Addressing outside [0, 1) along w.
    pub address_mode_w: vk::SamplerAddressMode,
    /// Bias added to the computed level of detail.
    pub mip_lod_bias: f32,
    /// Maximum anisotropy (needs the `samplerAnisotropy` feature), or `None`.
    pub max_anisotropy: Option<f32>,
    /// Depth-compare operation (shadow samplers), or `None`.
    pub compare_op: Option<vk::CompareOp>,
    /// Smallest level of detail (clamps the computed one).
    pub min_lod: f32,
    /// `vk::LOD_CLAMP_NONE` for every mip.
    pub max_lod: f32,
    /// Colour read outside the image with CLAMP_TO_BORDER.
    pub border_color: vk::BorderColor,
    /// Texel coordinates instead of [0, 1) (VUID-VkSamplerCreateInfo-unnormalizedCoordinates-01072 restricts the other fields).
    pub unnormalized_coordinates: bool,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { SamplerDesc {
    mag_filter: vk::Filter,
    min_filter: vk::Filter,
    mipmap_mode: vk::SamplerMipmapMode,
    address_mode_u: vk::SamplerAddressMode,
    address_mode_v: vk::SamplerAddressMode,
    address_mode_w: vk::SamplerAddressMode,
    mip_lod_bias: f32,
    max_anisotropy: Option<f32>,
    compare_op: Option<vk::CompareOp>,
    min_lod: f32,
    max_lod: f32,
    border_color: vk::BorderColor,
    unnormalized_coordinates: bool,
} }

impl Default for SamplerDesc {
    /// Linear filtering, linear mips, repeat addressing, all mips.
    fn default() -> Self {
        SamplerDesc {
            mag_filter: vk::Filter::LINEAR,
            min_filter: vk::Filter::LINEAR,
            mipmap_mode: vk::SamplerMipmapMode::LINEAR,
            address_mode_u: vk::SamplerAddressMode::REPEAT,
            address_mode_v: vk::SamplerAddressMode::REPEAT,
            address_mode_w: vk::SamplerAddressMode::REPEAT,
            mip_lod_bias: 0.0,
            max_anisotropy: None,
            compare_op: None,
            min_lod: 0.0,
            max_lod: vk::LOD_CLAMP_NONE,
            border_color: vk::BorderColor::FLOAT_TRANSPARENT_BLACK,
            unnormalized_coordinates: false,
        }
    }
}

impl SamplerDesc {
    /// Nearest filtering, clamp to edge: exact texel fetches.
    pub fn nearest_clamp() -> Self {
        SamplerDesc {
            mag_filter: vk::Filter::NEAREST,
            min_filter: vk::Filter::NEAREST,
            mipmap_mode: vk::SamplerMipmapMode::NEAREST,
            address_mode_u: vk::SamplerAddressMode::CLAMP_TO_EDGE,
            address_mode_v: vk::SamplerAddressMode::CLAMP_TO_EDGE,
            address_mode_w: vk::SamplerAddressMode::CLAMP_TO_EDGE,
            ..Default::default()
        }
    }

    /// Every field as plain integers (floats by bits): the identity used by Eq and Hash.
    fn key(&self) -> [i64; 13] {
        [
            self.mag_filter.as_raw() as i64,
            self.min_filter.as_raw() as i64,
            self.mipmap_mode.as_raw() as i64,
            self.address_mode_u.as_raw() as i64,
            self.address_mode_v.as_raw() as i64,
            self.address_mode_w.as_raw() as i64,
            self.mip_lod_bias.to_bits() as i64,
            self.max_anisotropy.map_or(-1, |a| a.to_bits() as i64),
            self.compare_op.map_or(-1, |c| c.as_raw() as i64),
            self.min_lod.to_bits() as i64,
            self.max_lod.to_bits() as i64,
            self.border_color.as_raw() as i64,
            self.unnormalized_coordinates as i64,
        ]
    }
}

impl PartialEq for SamplerDesc {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}
impl Eq for SamplerDesc {}
impl PartialOrd for SamplerDesc {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for SamplerDesc {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}
impl Hash for SamplerDesc {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

/// An interned `VkSampler`: cheap to clone; destroyed when the last holder drops.
#[derive(Clone)]
pub struct Sampler(Arc<SamplerInner>);

pub(crate) struct SamplerInner {
    shared: Arc<Shared>,
    raw: vk::Sampler,
    id: u64,
    desc: SamplerDesc,
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler")
            .field("id", &self.0.id)
            .field("desc", &self.0.desc)
            .finish()
    }
}

impl Sampler {
    /// Interning id: equal ids ⇔ equal descriptions (among live samplers of one device).
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// The description the sampler was created (and interned) from.
    pub fn desc(&self) -> &SamplerDesc {
        &self.0.desc
    }
    /// The raw handle (owned by kiln: do not destroy it).
    pub fn raw(&self) -> vk::Sampler {
        self.0.raw
    }
    /// The device state this sampler belongs to.
    pub(crate) fn shared(&self) -> &Arc<Shared> {
        &self.0.shared
    }
}

impl Drop for SamplerInner {
    fn drop(&mut self) {
        self.shared.samplers.forget(&self.desc, self);
        let raw = self.raw;
        // SAFETY: no set refers to the sampler (sets hold a clone); retire runs this after
        // every submission that may use it finished.
        self.shared
            .retire(move |s| unsafe { s.raw.destroy_sampler(raw, None) });
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The device-wide sampler interner.
pub(crate) type SamplerCache = super::interner::Interner<SamplerDesc, SamplerInner>;

fn check(desc: &SamplerDesc, shared: &Shared) -> Result<(), MemoryError> {
    let bad = |detail: String| Err(MemoryError::InvalidSampler { detail });
    let finite = [desc.mip_lod_bias, desc.min_lod];
    if finite.iter().any(|x| !x.is_finite()) || desc.max_lod.is_nan() {
        return bad(format!(
            "mip_lod_bias {} / min_lod {} must be finite and max_lod {} not NaN",
            desc.mip_lod_bias, desc.min_lod, desc.max_lod
        ));
    }
    if desc.max_lod < desc.min_lod {
        return bad(format!(
            "max_lod {} is below min_lod {} (VUID-VkSamplerCreateInfo-maxLod-01973)",
            desc.max_lod, desc.min_lod
        ));
    }
    let limits = shared.limits();
    if desc.mip_lod_bias.abs() > limits.max_sampler_lod_bias {
        return bad(format!(
            "mip_lod_bias {} exceeds maxSamplerLodBias {} (VUID-VkSamplerCreateInfo-mipLodBias-01069)",
            desc.mip_lod_bias, limits.max_sampler_lod_bias
        ));
    }
    if let Some(a) = desc.max_anisotropy {
        if !shared.features.sampler_anisotropy {
            return bad("max_anisotropy needs the samplerAnisotropy feature, which the device lacks (VUID-VkSamplerCreateInfo-anisotropyEnable-01070)".into());
        }
        if !(1.0..=limits.max_sampler_anisotropy).contains(&a) {
            return bad(format!(
                "max_anisotropy {a} is outside 1..={} (maxSamplerAnisotropy, VUID-VkSamplerCreateInfo-anisotropyEnable-01071)",
                limits.max_sampler_anisotropy
            ));
        }
    }
    Ok(())
}

impl Sampler {
    /// The interned sampler for `desc` on the device `shared` (see [`Device::sampler`]).
    ///
    /// [`Device::sampler`]: crate::Device::sampler
    pub(crate) fn get_or_create(
        shared: &Arc<Shared>,
        desc: &SamplerDesc,
    ) -> Result<Sampler, MemoryError> {
        check(desc, shared)?;
        let inner = shared
            .samplers
            .get_or_create(desc, || create(shared, desc))?;
        Ok(Sampler(inner))
    }
}

/// Creates the `VkSampler` for a checked description (outside the interner's lock).
fn create(shared: &Arc<Shared>, desc: &SamplerDesc) -> Result<Arc<SamplerInner>, MemoryError> {
    let mut info = vk::SamplerCreateInfo::default()
        .mag_filter(desc.mag_filter)
        .min_filter(desc.min_filter)
        .mipmap_mode(desc.mipmap_mode)
        .address_mode_u(desc.address_mode_u)
        .address_mode_v(desc.address_mode_v)
        .address_mode_w(desc.address_mode_w)
        .mip_lod_bias(desc.mip_lod_bias)
        .min_lod(desc.min_lod)
        .max_lod(desc.max_lod)
        .border_color(desc.border_color)
        .unnormalized_coordinates(desc.unnormalized_coordinates);
    if let Some(a) = desc.max_anisotropy {
        info = info.anisotropy_enable(true).max_anisotropy(a);
    }
    if let Some(c) = desc.compare_op {
        info = info.compare_enable(true).compare_op(c);
    }
    // SAFETY: the description was checked against the device's limits and features.
    let raw = unsafe { shared.raw.create_sampler(&info, None) }
        .map_err(vk_device_err("vkCreateSampler"))?;
    Ok(Arc::new(SamplerInner {
        shared: shared.clone(),
        raw,
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        desc: *desc,
    }))
}
