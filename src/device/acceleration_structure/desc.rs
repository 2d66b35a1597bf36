//! What an acceleration structure is built from, and the checks of it that come before
//! any Vulkan call: triangle geometries of a bottom-level structure
//! ([`AccelerationStructureTriangles`]) and instances of a top-level one
//! ([`AccelerationStructureInstance`]), described by an [`AccelerationStructureDesc`].

use ash::vk;

use super::{AccelerationStructure, Geometry};
use crate::device::{format_info, Buffer, Shared};
use crate::error::{Error, Result};

/// How to create an [`AccelerationStructure`]: its label, what it is built from (which
/// also says its level) and its build flags.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct AccelerationStructureDesc<'a> {
    /// Name shown in errors and validation messages.
    pub label: &'a str,
    /// Triangles (a bottom-level structure) or instances (a top-level one).
    pub geometry: AccelerationStructureGeometry<'a>,
    /// `VkBuildAccelerationStructureFlagsKHR` (default `PREFER_FAST_TRACE`; not both
    /// `PREFER_FAST_TRACE` and `PREFER_FAST_BUILD`).
    pub flags: vk::BuildAccelerationStructureFlagsKHR,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { AccelerationStructureDesc<'a> {
    label: &'a str,
    geometry: AccelerationStructureGeometry<'a>,
    flags: vk::BuildAccelerationStructureFlagsKHR,
} }

impl<'a> AccelerationStructureDesc<'a> {
    /// A bottom-level acceleration structure of `triangles` (one geometry each).
    pub fn bottom_level(
        label: &'a str,
        triangles: &'a [AccelerationStructureTriangles<'a>],
    ) -> Self {
        AccelerationStructureDesc {
            label,
            geometry: AccelerationStructureGeometry::Triangles(triangles),
            flags: vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE,
        }
    }

    /// A top-level acceleration structure of `instances` of bottom-level ones.
    pub fn top_level(label: &'a str, instances: &'a [AccelerationStructureInstance<'a>]) -> Self {
        AccelerationStructureDesc {
            label,
            geometry: AccelerationStructureGeometry::Instances(instances),
            flags: vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE,
        }
    }
}

/// What an acceleration structure is built from (`VkAccelerationStructureGeometryKHR`'s
/// geometry types kiln builds).
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum AccelerationStructureGeometry<'a> {
    /// Triangle geometries: a bottom-level structure.
    Triangles(&'a [AccelerationStructureTriangles<'a>]),
    /// Instances of bottom-level structures: a top-level structure.
    Instances(&'a [AccelerationStructureInstance<'a>]),
}

/// One triangle geometry of a bottom-level acceleration structure
/// (`VkAccelerationStructureGeometryTrianglesDataKHR`): vertices read from a buffer, every
/// three a triangle or picked by indices. Offsets, strides and sizes are in bytes. The
/// buffers need ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR usage (kiln adds
/// SHADER_DEVICE_ADDRESS to it); the structure keeps them and reads them at every build.
#[derive(Clone, Copy, Debug)]
pub struct AccelerationStructureTriangles<'a> {
    /// The buffer holding the vertices.
    pub vertex_buffer: &'a Buffer,
    /// Byte offset of vertex 0 (a multiple of the format's component size).
    pub vertex_offset: u64,
    /// The vertex position format (e.g. `R32G32B32_SFLOAT`): one whose buffer features
    /// include ACCELERATION_STRUCTURE_VERTEX_BUFFER_KHR.
    pub vertex_format: vk::Format,
    /// Bytes from one vertex to the next (a multiple of the format's component size).
    pub vertex_stride: u64,
    /// Vertices in the buffer from `vertex_offset` (`maxVertex` + 1); indices must be
    /// below it.
    pub vertex_count: u32,
    /// The buffer holding the indices (`None`: not indexed, vertex `3 i + k` is corner `k`
    /// of triangle `i`).
    pub index_buffer: Option<&'a Buffer>,
    /// Byte offset of index 0 (a multiple of the index size).
    pub index_offset: u64,
    /// `UINT16` or `UINT32` with an index buffer (`NONE_KHR` without one).
    pub index_type: vk::IndexType,
    /// Triangles of the geometry (`3 × triangle_count` vertices or indices are read).
    pub triangle_count: u32,
    /// `VkGeometryFlagsKHR` (default `OPAQUE`: rays never call any-hit logic).
    pub flags: vk::GeometryFlagsKHR,
}

impl<'a> AccelerationStructureTriangles<'a> {
    /// `vertex_count` vertices of `vertex_format` every `vertex_stride` bytes from byte 0 of
    /// `vertices`, every three a triangle; opaque.
    pub fn new(
        vertices: &'a Buffer,
        vertex_format: vk::Format,
        vertex_stride: u64,
        vertex_count: u32,
    ) -> Self {
        AccelerationStructureTriangles {
            vertex_buffer: vertices,
            vertex_offset: 0,
            vertex_format,
            vertex_stride,
            vertex_count,
            index_buffer: None,
            index_offset: 0,
            index_type: vk::IndexType::NONE_KHR,
            triangle_count: vertex_count / 3,
            flags: vk::GeometryFlagsKHR::OPAQUE,
        }
    }

    /// The same vertices, `triangle_count` triangles picked by `3 × triangle_count` indices
    /// of `index_type` from byte 0 of `indices`.
    pub fn indexed(
        self,
        indices: &'a Buffer,
        index_type: vk::IndexType,
        triangle_count: u32,
    ) -> Self {
        AccelerationStructureTriangles {
            index_buffer: Some(indices),
            index_type,
            triangle_count,
            ..self
        }
    }
}

/// One instance of a top-level acceleration structure (`VkAccelerationStructureInstanceKHR`):
/// a bottom-level structure placed by a transform, with what a ray query reports of it.
#[derive(Clone, Copy, Debug)]
pub struct AccelerationStructureInstance<'a> {
    /// Object to world: a row-major 3×4 matrix (`VkTransformMatrixKHR`; the last column
    /// is the translation).
    pub transform: [[f32; 4]; 3],
    /// `instanceCustomIndex` (24 bits): what `rayQueryGetIntersectionInstanceCustomIndexEXT`
    /// returns for a hit of this instance.
    pub custom_index: u32,
    /// Visibility mask: a ray's cull mask ANDed with it must be non-zero for a hit.
    pub mask: u8,
    /// `instanceShaderBindingTableRecordOffset` (24 bits; ray tracing pipelines only).
    pub shader_binding_table_record_offset: u32,
    /// `VkGeometryInstanceFlagsKHR` (culling, opacity overrides).
    pub flags: vk::GeometryInstanceFlagsKHR,
    /// The bottom-level structure it places (kept alive by the top-level one).
    pub bottom_level: &'a AccelerationStructure,
}

impl<'a> AccelerationStructureInstance<'a> {
    /// `bottom_level` where it is (identity transform), custom index 0, mask 0xff.
    pub fn new(bottom_level: &'a AccelerationStructure) -> Self {
        AccelerationStructureInstance {
            transform: [
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
            ],
            custom_index: 0,
            mask: 0xff,
            shader_binding_table_record_offset: 0,
            flags: vk::GeometryInstanceFlagsKHR::empty(),
            bottom_level,
        }
    }
}

/// A triangle geometry as the structure keeps it: its buffers and their device addresses.
pub(crate) struct Triangles {
    pub vertices: Buffer,
    pub vertex_address: vk::DeviceAddress,
    /// Bytes of the vertex buffer read: `[vertex_offset, vertex_offset + vertex_bytes)`.
    pub vertex_offset: u64,
    pub vertex_bytes: u64,
    pub vertex_format: vk::Format,
    pub vertex_stride: u64,
    pub max_vertex: u32,
    pub indices: Option<(Buffer, vk::DeviceAddress)>,
    pub index_offset: u64,
    pub index_bytes: u64,
    pub index_type: vk::IndexType,
    pub triangle_count: u32,
    pub flags: vk::GeometryFlagsKHR,
}

impl Triangles {
    /// The geometry for a build or a size query.
    pub(crate) fn geometry(&self) -> vk::AccelerationStructureGeometryKHR<'static> {
        let triangles = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
            .vertex_format(self.vertex_format)
            .vertex_data(vk::DeviceOrHostAddressConstKHR {
                device_address: self.vertex_address,
            })
            .vertex_stride(self.vertex_stride)
            .max_vertex(self.max_vertex)
            .index_type(self.index_type)
            .index_data(vk::DeviceOrHostAddressConstKHR {
                device_address: self.indices.as_ref().map_or(0, |(_, a)| *a),
            });
        vk::AccelerationStructureGeometryKHR::default()
            .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
            .geometry(vk::AccelerationStructureGeometryDataKHR { triangles })
            .flags(self.flags)
    }
}

/// `KILN-E170` for `label`.
pub(super) fn invalid(label: &str, detail: String) -> Error {
    Error::AccelerationStructureInput {
        object: label.to_string(),
        detail,
    }
}

/// `KILN-E171` when `count` exceeds `limit`.
fn limit(
    shared: &Shared,
    label: &str,
    count: u64,
    limit: u64,
    what: &'static str,
    name: &'static str,
) -> Result<()> {
    if count <= limit {
        return Ok(());
    }
    Err(Error::AccelerationStructureLimit {
        object: label.to_string(),
        count,
        what,
        limit,
        name,
        device: shared.info.name.clone(),
    })
}

/// Checks that `buffer` is of this device and can be read by builds (usage
/// ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR and SHADER_DEVICE_ADDRESS,
/// VUID-vkCmdBuildAccelerationStructuresKHR-geometry-03673); returns its device address.
/// Errors: `KILN-E109`, `KILN-E157`.
pub(super) fn input_address(
    shared: &std::sync::Arc<Shared>,
    label: &str,
    buffer: &Buffer,
    what: &str,
) -> Result<vk::DeviceAddress> {
    if !std::sync::Arc::ptr_eq(buffer.shared(), shared) {
        return Err(Error::ForeignObject {
            object: format!(
                "{what} `{}` of acceleration structure `{label}`",
                buffer.label()
            ),
        });
    }
    let needed = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR
        | vk::BufferUsageFlags::SHADER_DEVICE_ADDRESS;
    if !buffer.usage().contains(needed) {
        return Err(Error::BufferUsage {
            object: buffer.label().to_string(),
            needed: needed & !buffer.usage(),
            call: "an acceleration structure's build input (its vertices, indices or instances)",
        });
    }
    Ok(buffer.device_address()?)
}

/// The size of `format` and of its smallest component, in bytes (`None`: a format kiln
/// does not know).
fn vertex_sizes(format: vk::Format) -> Option<(u64, u64)> {
    use vk::Format as F;
    match format {
        F::R16G16B16_SFLOAT | F::R16G16B16_SNORM | F::R16G16B16_UNORM => Some((6, 2)),
        F::A2B10G10R10_UNORM_PACK32 | F::A2R10G10B10_UNORM_PACK32 => Some((4, 4)),
        f => format_info(f).map(|i| (u64::from(i.bytes), u64::from(i.bytes / i.components.max(1)))),
    }
}

/// Checks one triangle geometry of `label` (geometry `i`) against the device; returns it
/// as the structure keeps it. Errors: `KILN-E170`, `KILN-E109`, `KILN-E157`.
pub(super) fn check_triangles(
    shared: &std::sync::Arc<Shared>,
    label: &str,
    i: usize,
    t: &AccelerationStructureTriangles<'_>,
) -> Result<Triangles> {
    let bad = |detail: String| invalid(label, format!("geometry {i}: {detail}"));
    // SAFETY: a plain query of a format on the device's physical device.
    let props = unsafe {
        shared
            .instance
            .raw
            .get_physical_device_format_properties(shared.physical, t.vertex_format)
    };
    let feature = vk::FormatFeatureFlags::ACCELERATION_STRUCTURE_VERTEX_BUFFER_KHR;
    let sizes = vertex_sizes(t.vertex_format);
    let (Some((size, component)), true) = (sizes, props.buffer_features.contains(feature)) else {
        return Err(bad(format!(
            "vertex format {:?} lacks ACCELERATION_STRUCTURE_VERTEX_BUFFER_KHR in its buffer \
             features on this device; use R32G32B32_SFLOAT (or another format it lists)",
            t.vertex_format
        )));
    };
    let stride = t.vertex_stride;
    if !stride.is_multiple_of(component) || stride > u64::from(u32::MAX) || stride == 0 {
        return Err(bad(format!(
            "vertex stride {stride} is not a non-zero multiple of {component} (the component \
             size of {:?}) below 2^32",
            t.vertex_format
        )));
    }
    if !t.vertex_offset.is_multiple_of(component) {
        return Err(bad(format!(
            "vertex offset {} is not a multiple of {component}, the component size of {:?}",
            t.vertex_offset, t.vertex_format
        )));
    }
    let vertex_bytes = match t.vertex_count {
        0 => 0,
        n => u64::from(n - 1) * stride + size,
    };
    let (buffer, offset) = (t.vertex_buffer, t.vertex_offset);
    if offset
        .checked_add(vertex_bytes)
        .is_none_or(|end| end > buffer.size())
    {
        return Err(bad(format!(
            "{} vertices of {size} bytes every {stride} bytes from offset {offset} do not fit \
             in buffer `{}` ({} bytes)",
            t.vertex_count,
            buffer.label(),
            buffer.size()
        )));
    }
    let vertex_address = input_address(shared, label, buffer, "vertex buffer")? + offset;
    let (indices, index_bytes) = check_indices(shared, label, t).map_err(|e| match e {
        Error::AccelerationStructureInput { detail, .. } => bad(detail),
        e => e,
    })?;
    Ok(Triangles {
        vertices: buffer.clone(),
        vertex_address,
        vertex_offset: offset,
        vertex_bytes,
        vertex_format: t.vertex_format,
        vertex_stride: stride,
        max_vertex: t.vertex_count.saturating_sub(1),
        indices,
        index_offset: t.index_offset,
        index_bytes,
        index_type: t.index_type,
        triangle_count: t.triangle_count,
        flags: t.flags,
    })
}

/// The index buffer of `t` and its device address, and the bytes of it a build reads
/// (`None`, 0: not indexed). Errors: `KILN-E170`, `KILN-E109`, `KILN-E157`.
#[allow(clippy::type_complexity)]
fn check_indices(
    shared: &std::sync::Arc<Shared>,
    label: &str,
    t: &AccelerationStructureTriangles<'_>,
) -> Result<(Option<(Buffer, vk::DeviceAddress)>, u64)> {
    let bad = |detail: String| Err(invalid(label, detail));
    let corners = u64::from(t.triangle_count) * 3;
    let offset = t.index_offset;
    match (t.index_buffer, t.index_type) {
        (None, vk::IndexType::NONE_KHR) if corners > u64::from(t.vertex_count) => bad(format!(
            "{} triangles need {corners} vertices without an index buffer; vertex_count is {}",
            t.triangle_count, t.vertex_count
        )),
        (None, vk::IndexType::NONE_KHR) => Ok((None, 0)),
        (Some(b), ty @ (vk::IndexType::UINT16 | vk::IndexType::UINT32)) => {
            let each = if ty == vk::IndexType::UINT16 { 2 } else { 4 };
            if !offset.is_multiple_of(each) {
                return bad(format!(
                    "index offset {offset} is not a multiple of the index size {each}"
                ));
            }
            let bytes = corners * each;
            if offset.checked_add(bytes).is_none_or(|end| end > b.size()) {
                return bad(format!(
                    "{corners} indices of {each} bytes from offset {offset} do not fit in \
                     buffer `{}` ({} bytes)",
                    b.label(),
                    b.size()
                ));
            }
            let address = input_address(shared, label, b, "index buffer")? + offset;
            Ok((Some((b.clone(), address)), bytes))
        }
        (b, ty) => bad(format!(
            "index type {ty:?} with {}; give UINT16 or UINT32 with an index buffer, NONE_KHR \
             without",
            if b.is_some() {
                "an index buffer"
            } else {
                "no index buffer"
            }
        )),
    }
}

/// Checks the description's flags and counts against the device limits. Errors:
/// `KILN-E170`, `KILN-E171`.
pub(super) fn check_desc(shared: &Shared, desc: &AccelerationStructureDesc<'_>) -> Result<()> {
    use vk::BuildAccelerationStructureFlagsKHR as B;
    if desc
        .flags
        .contains(B::PREFER_FAST_TRACE | B::PREFER_FAST_BUILD)
    {
        return Err(invalid(
            desc.label,
            "flags have both PREFER_FAST_TRACE and PREFER_FAST_BUILD; pick one".into(),
        ));
    }
    let limits = &shared.features.acceleration_structure_limits;
    match desc.geometry {
        AccelerationStructureGeometry::Triangles(t) => {
            limit(
                shared,
                desc.label,
                t.len() as u64,
                limits.max_geometry_count,
                "geometries",
                "maxGeometryCount",
            )?;
            let triangles = t.iter().map(|g| u64::from(g.triangle_count)).sum();
            limit(
                shared,
                desc.label,
                triangles,
                limits.max_primitive_count,
                "triangles",
                "maxPrimitiveCount",
            )
        }
        AccelerationStructureGeometry::Instances(i) => limit(
            shared,
            desc.label,
            i.len() as u64,
            limits.max_instance_count,
            "instances",
            "maxInstanceCount",
        ),
    }
}

/// The `VkAccelerationStructureInstanceKHR` of instance `i` of `label`. Errors: `KILN-E170`
/// (a top-level structure placed, a field beyond 24 bits), `KILN-E109`.
pub(super) fn instance(
    shared: &std::sync::Arc<Shared>,
    label: &str,
    i: usize,
    inst: &AccelerationStructureInstance<'_>,
) -> Result<vk::AccelerationStructureInstanceKHR> {
    let bottom = inst.bottom_level;
    if !std::sync::Arc::ptr_eq(bottom.storage().shared(), shared) {
        return Err(Error::ForeignObject {
            object: format!(
                "acceleration structure `{}` (instance {i} of `{label}`)",
                bottom.label()
            ),
        });
    }
    if !matches!(bottom.geometry(), Geometry::Triangles(_)) {
        return Err(invalid(
            label,
            format!(
                "instance {i} places `{}`, a top-level structure; instances place bottom-level \
                 ones",
                bottom.label()
            ),
        ));
    }
    const MAX24: u32 = (1 << 24) - 1;
    let (custom, offset) = (inst.custom_index, inst.shader_binding_table_record_offset);
    if custom > MAX24 || offset > MAX24 || inst.flags.as_raw() > 0xff {
        return Err(invalid(
            label,
            format!(
                "instance {i}: custom index {custom} or shader binding table record offset \
                 {offset} exceeds 24 bits ({MAX24}), or flags {:?} exceed 8 bits",
                inst.flags
            ),
        ));
    }
    let m = &inst.transform;
    Ok(vk::AccelerationStructureInstanceKHR {
        transform: vk::TransformMatrixKHR {
            matrix: [
                m[0][0], m[0][1], m[0][2], m[0][3], m[1][0], m[1][1], m[1][2], m[1][3], m[2][0],
                m[2][1], m[2][2], m[2][3],
            ],
        },
        instance_custom_index_and_mask: vk::Packed24_8::new(inst.custom_index, inst.mask),
        instance_shader_binding_table_record_offset_and_flags: vk::Packed24_8::new(
            inst.shader_binding_table_record_offset,
            // The flags are 8 bits (checked above).
            inst.flags.as_raw() as u8,
        ),
        acceleration_structure_reference: vk::AccelerationStructureReferenceKHR {
            device_handle: bottom.device_address(),
        },
    })
}
