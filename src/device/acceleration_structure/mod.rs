//! Acceleration structures (VK_KHR_acceleration_structure; Vulkan spec §37 "Acceleration
//! Structures"): what ray queries (VK_KHR_ray_query) trace rays through.
//!
//! An [`AccelerationStructure`] is created from its description
//! ([`AccelerationStructureDesc`]: triangle geometries for a bottom-level structure,
//! instances of bottom-level ones for a top-level structure), every input checked first
//! (`desc.rs`: `KILN-E107` without the feature, `KILN-E157` buffers without build-input
//! usage, `KILN-E170` formats, strides, ranges, `KILN-E171` counts beyond the device
//! limits). Its size comes from `vkGetAccelerationStructureBuildSizesKHR`; its storage is a
//! kiln [`Buffer`] (ACCELERATION_STRUCTURE_STORAGE and SHADER_DEVICE_ADDRESS usage) that
//! owns the `VkAccelerationStructureKHR` ([`Buffer::new_owning`]): whatever keeps the
//! buffer alive (a recording that builds or reads the structure keeps it until its
//! submission completed, a descriptor set holds it) keeps the structure alive, and the
//! structure is destroyed right before its buffer.
//! A top-level structure's instances are written at creation into a buffer of its own
//! (host-visible, ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY usage), and it holds the
//! bottom-level structures they place.
//!
//! The structure keeps its inputs (the vertex and index buffers, with their device
//! addresses), so a build is
//! [`Recorder::build_acceleration_structures`](crate::Recorder::build_acceleration_structures)
//! with the structure alone: it reads the inputs' current contents (write them, e.g. by a
//! dispatch, and build again to follow them).

mod desc;
mod features;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;
use gpu_allocator::MemoryLocation;

pub use desc::{
    AccelerationStructureDesc, AccelerationStructureGeometry, AccelerationStructureInstance,
    AccelerationStructureTriangles,
};
pub(crate) use features::limits;
pub use features::AccelerationStructureLimits;

use super::buffer::Dependent;
use super::{Buffer, BufferDesc, Device, Shared};
use crate::error::{vk_err, DeviceError, Error, Result};

/// Bytes of one `VkAccelerationStructureInstanceKHR`.
const INSTANCE_SIZE: u64 = std::mem::size_of::<vk::AccelerationStructureInstanceKHR>() as u64;

/// A bottom-level (triangles) or top-level (instances) acceleration structure of one device:
/// a cheap-to-clone handle. Built on the device by
/// [`Recorder::build_acceleration_structures`](crate::Recorder::build_acceleration_structures);
/// read by shaders through a descriptor
/// ([`DescriptorSet::write_acceleration_structure`](
/// crate::DescriptorSet::write_acceleration_structure), top-level only). See the module
/// docs for its lifetime.
#[derive(Clone)]
pub struct AccelerationStructure(Arc<Inner>);

struct Inner {
    raw: vk::AccelerationStructureKHR,
    /// The memory it lives in; owns `raw` (see the module docs).
    storage: Buffer,
    ty: vk::AccelerationStructureTypeKHR,
    flags: vk::BuildAccelerationStructureFlagsKHR,
    label: String,
    address: vk::DeviceAddress,
    build_scratch_size: u64,
    geometry: Geometry,
    /// A recording that builds it was submitted.
    built: AtomicBool,
}

/// What a structure is built from, as it keeps it.
pub(crate) enum Geometry {
    Triangles(Vec<desc::Triangles>),
    Instances {
        /// The `VkAccelerationStructureInstanceKHR`s, written at creation.
        buffer: Buffer,
        address: vk::DeviceAddress,
        count: u32,
        /// The bottom-level structures the instances place.
        bottom: Vec<AccelerationStructure>,
    },
}

/// How a build uses one of its inputs (for the automatic barriers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BuildInput {
    /// Vertices, indices, instances: read as shader data at the build stage.
    Data,
    /// A bottom-level structure a top-level build refers to.
    Structure,
}

impl std::fmt::Debug for AccelerationStructure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccelerationStructure")
            .field("label", &self.0.label)
            .field("type", &self.0.ty)
            .field("size", &self.0.storage.size())
            .finish()
    }
}

/// The device's VK_KHR_acceleration_structure functions, or `KILN-E107` naming `label`.
pub(crate) fn functions<'s>(
    shared: &'s Shared,
    label: &str,
) -> Result<&'s ash::khr::acceleration_structure::Device, DeviceError> {
    shared
        .acceleration_structure
        .as_ref()
        .ok_or_else(|| DeviceError::MissingFeature {
            device: shared.info.name.clone(),
            what: format!(
                "accelerationStructure (VK_KHR_acceleration_structure), needed by acceleration \
                 structure `{label}` (Features::acceleration_structure)"
            ),
        })
}

impl Device {
    /// Creates an acceleration structure, not built yet: a bottom-level one of triangles
    /// or a top-level one of instances ([`AccelerationStructureDesc::bottom_level`],
    /// [`top_level`](AccelerationStructureDesc::top_level)); build it with
    /// [`Recorder::build_acceleration_structures`](crate::Recorder::build_acceleration_structures).
    ///
    /// Errors: `KILN-E107` the device lacks `accelerationStructure`
    /// ([`Features::acceleration_structure`](crate::Features::acceleration_structure)),
    /// `KILN-E109` a buffer or structure of another device, `KILN-E157` an input buffer
    /// without ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR usage, `KILN-E170` an input
    /// Vulkan would reject (vertex format, stride, offsets, ranges, index type, flags, an
    /// instance of a top-level structure, 24-bit fields), `KILN-E171` counts beyond
    /// `maxGeometryCount`, `maxPrimitiveCount` or `maxInstanceCount`, and the errors of
    /// [`buffer`](Device::buffer).
    pub fn acceleration_structure(
        &self,
        desc: &AccelerationStructureDesc<'_>,
    ) -> Result<AccelerationStructure> {
        AccelerationStructure::new(&self.shared, desc)
    }
}

impl AccelerationStructure {
    /// Creates the structure `desc` describes (see the module docs), not built yet.
    ///
    /// Errors: `KILN-E107` the device lacks `accelerationStructure`, `KILN-E109` a buffer or
    /// structure of another device, `KILN-E157` an input buffer without
    /// ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR or SHADER_DEVICE_ADDRESS usage,
    /// `KILN-E170` an input Vulkan would reject, `KILN-E171` counts beyond the device's
    /// limits, and the errors of buffer creation (`KILN-E150`, `KILN-E154`, …).
    pub(crate) fn new(
        shared: &Arc<Shared>,
        desc: &AccelerationStructureDesc<'_>,
    ) -> Result<AccelerationStructure> {
        let fns = functions(shared, desc.label)?;
        desc::check_desc(shared, desc)?;
        let (ty, geometry) = match desc.geometry {
            AccelerationStructureGeometry::Triangles(t) => {
                let checked = t
                    .iter()
                    .enumerate()
                    .map(|(i, t)| desc::check_triangles(shared, desc.label, i, t))
                    .collect::<Result<Vec<_>>>()?;
                (
                    vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL,
                    Geometry::Triangles(checked),
                )
            }
            AccelerationStructureGeometry::Instances(i) => (
                vk::AccelerationStructureTypeKHR::TOP_LEVEL,
                instances(shared, desc.label, i)?,
            ),
        };
        let (geometries, counts) = geometry.build_geometry();
        let info = vk::AccelerationStructureBuildGeometryInfoKHR::default()
            .ty(ty)
            .flags(desc.flags)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .geometries(&geometries);
        let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
        // SAFETY: the geometries were checked against the device (formats, index types,
        // counts within its limits); `counts` has one entry per geometry; device builds.
        unsafe {
            fns.get_acceleration_structure_build_sizes(
                vk::AccelerationStructureBuildTypeKHR::DEVICE,
                &info,
                &counts,
                &mut sizes,
            )
        };
        let mut raw = vk::AccelerationStructureKHR::null();
        let storage = Buffer::new_owning(
            shared,
            &BufferDesc {
                label: desc.label,
                size: sizes.acceleration_structure_size.max(1),
                // A structure's device address needs its buffer's
                // (VUID-vkGetAccelerationStructureDeviceAddressKHR-pInfo-09542).
                usage: vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR
                    | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS,
                location: MemoryLocation::GpuOnly,
            },
            |buffer| -> Result<Dependent> {
                raw = create(fns, buffer, sizes.acceleration_structure_size, ty)?;
                shared.set_name(raw, desc.label);
                let fns = fns.clone();
                let destroy: Dependent = Box::new(move |_s: &Shared| {
                    // SAFETY: run by the buffer's retirement, once every submission that
                    // kept the buffer (every build and every use through a set) completed;
                    // the structure is not used again.
                    unsafe { fns.destroy_acceleration_structure(raw, None) }
                });
                Ok(destroy)
            },
        )?;
        let address_info =
            vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(raw);
        // SAFETY: `raw` was created above on this device with the extension enabled.
        let address = unsafe { fns.get_acceleration_structure_device_address(&address_info) };
        Ok(AccelerationStructure(Arc::new(Inner {
            raw,
            storage,
            ty,
            flags: desc.flags,
            label: desc.label.to_string(),
            address,
            build_scratch_size: sizes.build_scratch_size,
            geometry,
            built: AtomicBool::new(false),
        })))
    }

    /// The label given at creation.
    pub fn label(&self) -> &str {
        &self.0.label
    }

    /// `BOTTOM_LEVEL` (triangles) or `TOP_LEVEL` (instances).
    pub fn ty(&self) -> vk::AccelerationStructureTypeKHR {
        self.0.ty
    }

    /// The build flags it was created with.
    pub fn flags(&self) -> vk::BuildAccelerationStructureFlagsKHR {
        self.0.flags
    }

    /// Bytes of its storage (`accelerationStructureSize` of
    /// `vkGetAccelerationStructureBuildSizesKHR`).
    pub fn size(&self) -> u64 {
        self.0.storage.size()
    }

    /// Bytes of scratch memory a build needs (`buildScratchSize`; kiln allocates it for
    /// each build command).
    pub fn build_scratch_size(&self) -> u64 {
        self.0.build_scratch_size
    }

    /// Its device address (`vkGetAccelerationStructureDeviceAddressKHR`): what an instance
    /// refers to a bottom-level structure by.
    pub fn device_address(&self) -> vk::DeviceAddress {
        self.0.address
    }

    /// The raw handle (owned by this object: do not destroy it).
    pub fn raw(&self) -> vk::AccelerationStructureKHR {
        self.0.raw
    }

    /// The buffer it lives in (kept by the commands and sets that use the structure).
    pub(crate) fn storage(&self) -> &Buffer {
        &self.0.storage
    }

    /// What it is built from.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.0.geometry
    }

    /// Whether a recording that builds it was submitted.
    pub(crate) fn built(&self) -> bool {
        self.0.built.load(Ordering::Relaxed)
    }

    /// Notes that a recording that builds it was submitted (`RecordedWork::commit_layouts`).
    pub(crate) fn mark_built(&self) {
        self.0.built.store(true, Ordering::Relaxed);
    }

    /// Whether `self` and `other` are the same structure.
    pub(crate) fn same(&self, other: &AccelerationStructure) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Calls `f` with every buffer a build reads, the byte range it reads
    /// (`offset`, `size`) and how.
    pub(crate) fn for_each_input<'s>(
        &'s self,
        mut f: impl FnMut(&'s Buffer, u64, u64, BuildInput),
    ) {
        match &self.0.geometry {
            Geometry::Triangles(ts) => {
                for t in ts {
                    f(
                        &t.vertices,
                        t.vertex_offset,
                        t.vertex_bytes,
                        BuildInput::Data,
                    );
                    if let Some((b, _)) = &t.indices {
                        f(b, t.index_offset, t.index_bytes, BuildInput::Data);
                    }
                }
            }
            Geometry::Instances { buffer, bottom, .. } => {
                f(buffer, 0, buffer.size(), BuildInput::Data);
                for b in bottom {
                    f(b.storage(), 0, b.storage().size(), BuildInput::Structure);
                }
            }
        }
    }

    /// Calls `f` with the storage of every structure a ray traced through this one
    /// traverses: its own and, for a top-level structure, its bottom-level ones'.
    pub(crate) fn for_each_traversed<'s>(&'s self, mut f: impl FnMut(&'s Buffer)) {
        f(&self.0.storage);
        if let Geometry::Instances { bottom, .. } = &self.0.geometry {
            for b in bottom {
                f(b.storage());
            }
        }
    }
}

impl Geometry {
    /// The geometries of a build and each one's primitive count.
    pub(crate) fn build_geometry(
        &self,
    ) -> (Vec<vk::AccelerationStructureGeometryKHR<'static>>, Vec<u32>) {
        match self {
            Geometry::Triangles(ts) => (
                ts.iter().map(desc::Triangles::geometry).collect(),
                ts.iter().map(|t| t.triangle_count).collect(),
            ),
            Geometry::Instances { address, count, .. } => {
                let instances = vk::AccelerationStructureGeometryInstancesDataKHR::default()
                    .array_of_pointers(false)
                    .data(vk::DeviceOrHostAddressConstKHR {
                        device_address: *address,
                    });
                let g = vk::AccelerationStructureGeometryKHR::default()
                    .geometry_type(vk::GeometryTypeKHR::INSTANCES)
                    .geometry(vk::AccelerationStructureGeometryDataKHR { instances });
                (vec![g], vec![*count])
            }
        }
    }
}

/// Creates the `VkAccelerationStructureKHR` of `size` bytes at offset 0 of `buffer`.
fn create(
    fns: &ash::khr::acceleration_structure::Device,
    buffer: vk::Buffer,
    size: u64,
    ty: vk::AccelerationStructureTypeKHR,
) -> Result<vk::AccelerationStructureKHR> {
    let info = vk::AccelerationStructureCreateInfoKHR::default()
        .buffer(buffer)
        .offset(0)
        .size(size)
        .ty(ty);
    // SAFETY: `buffer` was created with ACCELERATION_STRUCTURE_STORAGE usage and at least
    // `size` bytes (its memory bound); offset 0 is a multiple of 256
    // (VUID-VkAccelerationStructureCreateInfoKHR-offset-03734); the extension is enabled.
    unsafe { fns.create_acceleration_structure(&info, None) }
        .map_err(vk_err("vkCreateAccelerationStructureKHR"))
}

/// The instances of top-level structure `label`, checked and written into a buffer of its
/// own. Errors: `KILN-E170`, `KILN-E109`, and those of buffer creation.
fn instances(
    shared: &Arc<Shared>,
    label: &str,
    list: &[AccelerationStructureInstance<'_>],
) -> Result<Geometry> {
    let raw = list
        .iter()
        .enumerate()
        .map(|(i, inst)| desc::instance(shared, label, i, inst))
        .collect::<Result<Vec<_>>>()?;
    let bottom = list.iter().map(|i| i.bottom_level.clone()).collect();
    let buffer = Buffer::new(
        shared,
        &BufferDesc {
            label: &format!("{label} (instances)"),
            size: INSTANCE_SIZE * (raw.len() as u64).max(1),
            usage: vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR,
            location: MemoryLocation::CpuToGpu,
        },
    )?;
    let address = desc::input_address(shared, label, &buffer, "instance buffer")?;
    // VUID-vkCmdBuildAccelerationStructuresKHR-pInfos-03717: 16-byte aligned instances.
    let Some(ptr) = buffer.mapped_ptr().filter(|_| address.is_multiple_of(16)) else {
        return Err(Error::Internal {
            what: "a host-visible instance buffer was not mapped or not 16-byte aligned",
        });
    };
    // SAFETY: the mapping holds at least `raw.len()` instances (the buffer's size); no
    // submission uses the new buffer; `VkAccelerationStructureInstanceKHR` is plain data
    // laid out as Vulkan reads it; CpuToGpu memory is host-coherent, so the writes are
    // visible to the submissions that follow.
    unsafe {
        std::ptr::copy_nonoverlapping(
            raw.as_ptr().cast::<u8>(),
            ptr.as_ptr().cast::<u8>(),
            raw.len() * INSTANCE_SIZE as usize,
        )
    };
    Ok(Geometry::Instances {
        buffer,
        address,
        count: raw.len() as u32,
        bottom,
    })
}
