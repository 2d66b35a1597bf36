//! Compute pipelines built from a reflected module: the pipeline layout comes from
//! reflection alone.

use std::borrow::Cow;
use std::sync::Arc;

use ash::vk;

use super::access::{uses_addresses, PipelineAccess};
use super::cache::PipelineCache;
use super::checks::{check_capabilities, check_specialization};
use super::layout::{PipelineLayout, PipelineLayoutDesc};
use super::statistics::{self, PipelineExecutable};
use crate::descriptors::DescriptorSet;
use crate::device::{FaultSite, Shared};
use crate::error::{vk_device_err, DescriptorError, PipelineError, Result, ShaderError};
use crate::shaders::{EntryPoint, ShaderModule, SpecValue};

/// Options for [`Device::compute_pipeline_with`](crate::Device::compute_pipeline_with).
///
/// Start from [`new`](Self::new) (the reflected layout, no specialization) and change
/// what differs with the builder methods: `ComputePipelineDesc::new(&module, "main").spec(&spec)`.
/// (It has no `Default`: there is no default module.)
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ComputePipelineDesc<'a> {
    /// The module holding the entry point.
    pub module: &'a ShaderModule,
    /// Entry point name (usually `"main"`).
    pub entry: &'a str,
    /// Specialization constants as (SpecId, value).
    pub spec: &'a [(u32, SpecValue)],
    /// Use this layout instead of the reflected one (it must be a superset).
    pub layout: Option<&'a PipelineLayoutDesc>,
    /// Run with exactly this subgroup size (`VkPipelineShaderStageRequiredSubgroupSizeCreateInfo`,
    /// Vulkan 1.3 subgroup size control): a power of two in the device's
    /// `min_subgroup_size..=max_subgroup_size`
    /// ([`Device::compute_properties`](crate::Device::compute_properties)), with the
    /// workgroup at most `size × maxComputeWorkgroupSubgroups` invocations. `None`: the
    /// driver's choice (which may vary between dispatches for SPIR-V 1.6 modules).
    pub required_subgroup_size: Option<u32>,
    /// Every subgroup is full (`REQUIRE_FULL_SUBGROUPS`): the workgroup's x size must be a
    /// multiple of the required subgroup size, or of `max_subgroup_size` without one.
    pub full_subgroups: bool,
    /// Make this set of the layout a push-descriptor set (VK_KHR_push_descriptor, see
    /// [`PipelineLayoutDesc::with_push_descriptor`]): its buffers are given per recording
    /// with [`Recorder::push_descriptor_set`](crate::Recorder::push_descriptor_set).
    pub push_descriptor_set: Option<u32>,
    /// Create the pipeline with `VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR`, so that
    /// [`ComputePipeline::executable_statistics`] reports what the driver compiled
    /// (registers, spills, shared memory, instruction counts, … as the driver names them;
    /// Vulkan spec "Pipeline Executable Properties"). Needs
    /// [`Features::pipeline_executable_info`](crate::Features::pipeline_executable_info)
    /// (`KILN-E267` without it). Default false: drivers may keep more per pipeline and
    /// compile more slowly when capturing.
    pub capture_statistics: bool,
}

// Builder methods (`setters!`, lib.rs): the struct is `#[non_exhaustive]`, so outside kiln it
// is built from `default()`/`new` and these.
setters! { ComputePipelineDesc<'a> {
    module: &'a ShaderModule,
    entry: &'a str,
    spec: &'a [(u32, SpecValue)],
    layout: Option<&'a PipelineLayoutDesc>,
    required_subgroup_size: Option<u32>,
    full_subgroups: bool,
    push_descriptor_set: Option<u32>,
    capture_statistics: bool,
} }

impl<'a> ComputePipelineDesc<'a> {
    /// Entry point `entry` of `module` with the reflected layout, no specialization and
    /// the driver's subgroup size; set the other fields with the builder methods
    /// (`ComputePipelineDesc::new(&m, "main").full_subgroups(true)`).
    pub fn new(module: &'a ShaderModule, entry: &'a str) -> Self {
        ComputePipelineDesc {
            module,
            entry,
            spec: &[],
            layout: None,
            required_subgroup_size: None,
            full_subgroups: false,
            push_descriptor_set: None,
            capture_statistics: false,
        }
    }
}

/// Checks the subgroup-size options of `desc` for a workgroup of `wg` against the device
/// (VUID-VkPipelineShaderStageRequiredSubgroupSizeCreateInfo-requiredSubgroupSize-02760,
/// -02761, -02762, VUID-VkPipelineShaderStageCreateInfo-pNext-02755, -02756, -flags-02758,
/// -02759, -02784).
///
/// Errors: `KILN-E256` naming the value, the device's range or feature and what to do.
fn check_subgroup_size(
    shared: &Shared,
    label: &str,
    desc: &ComputePipelineDesc<'_>,
    (wg, from): ([u32; 3], &str),
) -> Result<(), PipelineError> {
    let p = &shared.compute;
    let fail = |detail: String| {
        Err(PipelineError::SubgroupSize {
            pipeline: label.to_string(),
            detail,
        })
    };
    let device = &shared.info.name;
    if let Some(size) = desc.required_subgroup_size {
        if !p.subgroup_size_control
            || !p
                .required_subgroup_size_stages
                .contains(vk::ShaderStageFlags::COMPUTE)
        {
            return fail(format!(
                "required subgroup size {size} but `{device}` has no subgroup size control for \
                 compute (subgroupSizeControl {}, requiredSubgroupSizeStages {:?}); leave \
                 required_subgroup_size None",
                p.subgroup_size_control, p.required_subgroup_size_stages
            ));
        }
        if !size.is_power_of_two() || size < p.min_subgroup_size || size > p.max_subgroup_size {
            return fail(format!(
                "required subgroup size {size} is not a power of two in `{device}`'s range \
                 {}..={} (minSubgroupSize..=maxSubgroupSize); pick one in that range",
                p.min_subgroup_size, p.max_subgroup_size
            ));
        }
        let invocations = wg.iter().map(|&x| x as u64).product::<u64>();
        let max = size as u64 * p.max_compute_workgroup_subgroups as u64;
        if invocations > max {
            return fail(format!(
                "workgroup {wg:?}{from} has {invocations} invocations, more than subgroup size \
                 {size} × maxComputeWorkgroupSubgroups {} = {max}; use a smaller workgroup or \
                 a larger subgroup size",
                p.max_compute_workgroup_subgroups
            ));
        }
    }
    if desc.full_subgroups {
        if !p.compute_full_subgroups {
            return fail(format!(
                "full subgroups were asked for but `{device}` lacks computeFullSubgroups; \
                 set full_subgroups false"
            ));
        }
        let (multiple, what) = match desc.required_subgroup_size {
            Some(size) => (size, "the required subgroup size"),
            None => (p.max_subgroup_size, "maxSubgroupSize"),
        };
        if multiple == 0 || !wg[0].is_multiple_of(multiple) {
            return fail(format!(
                "full subgroups need a workgroup x size that is a multiple of {what} \
                 {multiple}, but it is {}; change local_size_x (or its spec constant)",
                wg[0]
            ));
        }
    }
    Ok(())
}

/// A compute `VkPipeline` with its interned layout.
pub struct ComputePipeline {
    shared: Arc<Shared>,
    raw: vk::Pipeline,
    layout: Arc<PipelineLayout>,
    entry: EntryPoint,
    access: PipelineAccess,
    workgroup_size: [u32; 3],
    /// Per set number, the index of its binding names in its set layout.
    names: Vec<u32>,
    label: String,
    /// The module declares `PhysicalStorageBufferAddresses` (see `Pipeline`).
    pub(crate) device_addresses: bool,
    /// Created with CAPTURE_STATISTICS (`ComputePipelineDesc::capture_statistics`).
    captures_statistics: bool,
}

impl std::fmt::Debug for ComputePipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ComputePipeline")
            .field("label", &self.label)
            .field("layout", &self.layout)
            .field("workgroup_size", &self.workgroup_size)
            .finish()
    }
}

/// Packs specialization constants into map entries + data (Vulkan spec §10.9).
pub(crate) fn spec_data(spec: &[(u32, SpecValue)]) -> (Vec<vk::SpecializationMapEntry>, Vec<u8>) {
    let mut entries = Vec::with_capacity(spec.len());
    let mut data = Vec::new();
    for (id, v) in spec {
        let bytes: Vec<u8> = match v {
            SpecValue::Bool(b) => (*b as u32).to_ne_bytes().to_vec(),
            SpecValue::U32(x) => x.to_ne_bytes().to_vec(),
            SpecValue::I32(x) => x.to_ne_bytes().to_vec(),
            SpecValue::F32(x) => x.to_ne_bytes().to_vec(),
            SpecValue::U64(x) => x.to_ne_bytes().to_vec(),
            SpecValue::I64(x) => x.to_ne_bytes().to_vec(),
            SpecValue::F64(x) => x.to_ne_bytes().to_vec(),
            SpecValue::Other(x) => (*x as u32).to_ne_bytes().to_vec(),
        };
        entries.push(vk::SpecializationMapEntry {
            constant_id: *id,
            offset: data.len() as u32,
            size: bytes.len(),
        });
        data.extend_from_slice(&bytes);
    }
    (entries, data)
}

/// Checks that a user-given layout covers every binding and push constant the entry point
/// statically uses, with the same descriptor type, at least its descriptor count and stage
/// flags that include the entry point's stage (VUID-VkComputePipelineCreateInfo-layout-07988,
/// -07990, -07991, -00703 for push constants).
pub(crate) fn check_layout_covers(
    label: &str,
    ep: &EntryPoint,
    layout: &PipelineLayoutDesc,
) -> Result<(), PipelineError> {
    let fail = |detail: String| {
        Err(ShaderError::LayoutNotSuperset {
            entry: label.to_string(),
            detail,
        }
        .into())
    };
    for b in &ep.bindings {
        let (set, n) = (b.set, b.binding);
        let Some(lb) = layout.sets.get(set as usize).and_then(|s| s.binding(n)) else {
            return fail(format!(
                "set {set} binding {n} ({:?}) is not in the layout",
                b.descriptor_type
            ));
        };
        // A uniform block may be an inline uniform block (its count is bytes).
        let inline = lb.descriptor_type == vk::DescriptorType::INLINE_UNIFORM_BLOCK
            && b.descriptor_type == vk::DescriptorType::UNIFORM_BUFFER;
        if lb.descriptor_type != b.descriptor_type && !inline {
            return fail(format!(
                "set {set} binding {n} is {:?} in the shader but {:?} in the layout",
                b.descriptor_type, lb.descriptor_type
            ));
        }
        if inline {
            let size = b.block.as_ref().map_or(0, |block| block.size);
            if b.count != 1 || lb.count < size {
                return fail(format!(
                    "set {set} binding {n}: the inline uniform block of {} bytes cannot hold \
                     the shader's {} block(s) of {size} bytes; build it with \
                     PipelineLayoutDesc::with_inline_uniform_block",
                    lb.count, b.count
                ));
            }
        } else if !b.runtime_array && lb.count < b.count {
            return fail(format!(
                "set {set} binding {n} has {} descriptors in the shader but {} in the layout",
                b.count, lb.count
            ));
        }
        if !lb.stages.contains(ep.stage) {
            return fail(format!(
                "set {set} binding {n} is not visible to the {:?} stage (layout stages {:?})",
                ep.stage, lb.stages
            ));
        }
    }
    if let Some(pc) = ep.push_constants.as_ref().filter(|pc| pc.size > 0) {
        let end = pc.offset.saturating_add(pc.size);
        let covered = layout.push_constant_ranges.iter().any(|r| {
            r.stages.contains(ep.stage)
                && r.offset <= pc.offset
                && end <= r.offset.saturating_add(r.size)
        });
        if !covered {
            return fail(format!(
                "push constants [{}, {end}) are not in a range of the {:?} stage",
                pc.offset, ep.stage
            ));
        }
    }
    Ok(())
}

/// Byte size a specialization value is passed with (`None`: not known for 8/16-bit types).
fn spec_size(v: &SpecValue) -> Option<usize> {
    match v {
        SpecValue::Bool(_) | SpecValue::U32(_) | SpecValue::I32(_) | SpecValue::F32(_) => Some(4),
        SpecValue::U64(_) | SpecValue::I64(_) | SpecValue::F64(_) => Some(8),
        SpecValue::Other(_) => None,
    }
}

/// Checks specialization values against the module: no id twice
/// (VUID-VkSpecializationInfo-constantID-04911) and the size of each declared constant
/// (VUID-VkSpecializationMapEntry-constantID-00776).
pub(crate) fn check_spec(
    label: &str,
    module: &ShaderModule,
    spec: &[(u32, SpecValue)],
) -> Result<(), PipelineError> {
    for (i, (id, v)) in spec.iter().enumerate() {
        let fail = |detail: String| {
            Err(ShaderError::SpecConstantMismatch {
                entry: label.to_string(),
                id: *id,
                detail,
            }
            .into())
        };
        if spec[..i].iter().any(|(other, _)| other == id) {
            return fail("given more than once".into());
        }
        let declared = module
            .reflection()
            .spec_constants
            .iter()
            .find(|c| c.id == *id);
        if let Some(c) = declared {
            let (want, got) = (spec_size(&c.default), spec_size(v));
            if want != got || want.is_none() {
                return fail(format!(
                    "the shader declares a {} but a {} was given",
                    c.default.type_name(),
                    v.type_name()
                ));
            }
        }
    }
    Ok(())
}

/// Creates a `VkShaderModule` for the duration of pipeline creation.
pub(crate) fn shader_module(
    shared: &Shared,
    module: &ShaderModule,
) -> Result<vk::ShaderModule, PipelineError> {
    let info = vk::ShaderModuleCreateInfo::default().code(module.words());
    // SAFETY: the words passed kiln's structural checks (header, word counts) and rspirv's
    // parse; `info` borrows them for the call.
    unsafe { shared.raw.create_shader_module(&info, None) }
        .map_err(|e| vk_device_err("vkCreateShaderModule")(e).into())
}

impl ComputePipeline {
    /// Creates the pipeline on the device `shared` (see
    /// [`Device::compute_pipeline_with`](crate::Device::compute_pipeline_with)).
    pub(crate) fn new(
        shared: &Arc<Shared>,
        desc: &ComputePipelineDesc<'_>,
    ) -> Result<Self, PipelineError> {
        let ep = desc.module.reflection().entry_point(desc.entry)?;
        if ep.stage != vk::ShaderStageFlags::COMPUTE {
            return Err(PipelineError::WrongStage {
                entry: ep.name.clone(),
                stage: ep.stage,
                what: "a compute pipeline needs a GLCompute entry point",
            });
        }
        check_capabilities(shared, desc.module, ep.stage)?;
        let label = format!("{} in {}", ep.name, desc.module.label());
        check_spec(&label, desc.module, desc.spec)?;
        let specialized = check_specialization(
            shared,
            &label,
            desc.module,
            (desc.entry, ep.stage),
            desc.spec,
        )?;
        // The entry point as specialized: descriptor counts from specialization constants
        // take the given values (the same reflection when none is given).
        let ep = &specialized.entry;
        let wg = specialized.workgroup_size.unwrap_or([1, 1, 1]);
        let from = match specialized.workgroup_constants.as_slice() {
            [] => String::new(),
            c => format!(" (from {})", c.join(", ")),
        };
        check_workgroup(shared, &ep.name, wg, &from)?;
        let flags = statistics::create_flags(shared, &label, desc.capture_statistics)?;
        check_subgroup_size(shared, &label, desc, (wg, &from))?;
        let layout_desc = &*layout_desc_of(shared, &label, desc, ep)?;
        let layout = PipelineLayout::get_or_create(shared, layout_desc)?;
        // Before any Vulkan object is made: nothing to destroy if it fails.
        let addresses = if uses_addresses(&desc.module.reflection().capabilities) {
            vk::ShaderStageFlags::COMPUTE
        } else {
            vk::ShaderStageFlags::empty()
        };
        let access = PipelineAccess::new(shared, &layout, [ep], addresses)?;
        let cache = shared.slot::<PipelineCache>()?.raw();
        let module = shader_module(shared, desc.module)?;
        let name =
            std::ffi::CString::new(desc.entry).map_err(|_| ShaderError::EntryPointNotFound {
                name: desc.entry.to_string(),
                available: String::new(),
            })?;
        let (entries, data) = spec_data(desc.spec);
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let mut required = vk::PipelineShaderStageRequiredSubgroupSizeCreateInfo::default()
            .required_subgroup_size(desc.required_subgroup_size.unwrap_or(0));
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(&name);
        if !entries.is_empty() {
            stage = stage.specialization_info(&spec_info);
        }
        if desc.full_subgroups {
            stage = stage.flags(vk::PipelineShaderStageCreateFlags::REQUIRE_FULL_SUBGROUPS);
        }
        if desc.required_subgroup_size.is_some() {
            stage = stage.push_next(&mut required);
        }
        let info = vk::ComputePipelineCreateInfo::default()
            .flags(flags)
            .stage(stage)
            .layout(layout.raw());
        let created = match shared.inject(FaultSite::CreatePipeline) {
            // SAFETY: module and layout are alive; all pointers are locals alive for the
            // call; the pipeline cache is internally synchronized (not created
            // EXTERNALLY_SYNCHRONIZED).
            Ok(()) => unsafe { shared.raw.create_compute_pipelines(cache, &[info], None) },
            Err(e) => Err((Vec::new(), e)),
        };
        // SAFETY: the module is no longer needed once the pipeline exists (or failed).
        unsafe { shared.raw.destroy_shader_module(module, None) };
        let raw = created.map_err(|(_, e)| vk_device_err("vkCreateComputePipelines")(e))?[0];
        let label = format!("{}:{}", desc.module.label(), desc.entry);
        shared.set_name(raw, &label);
        let names = super::set_name_ids(&layout, &layout_desc.names);
        Ok(ComputePipeline {
            shared: shared.clone(),
            raw,
            layout,
            entry: ep.clone(),
            access,
            workgroup_size: wg,
            names,
            label,
            device_addresses: super::uses_device_addresses(desc.module),
            captures_statistics: desc.capture_statistics,
        })
    }

    /// What the driver compiled this pipeline into: per executable, its name, description,
    /// stages, subgroup size and every statistic the driver reports (names, meaning and
    /// units are the driver's: e.g. registers, spills, shared memory, instruction counts;
    /// vkGetPipelineExecutablePropertiesKHR and vkGetPipelineExecutableStatisticsKHR,
    /// Vulkan spec "Pipeline Executable Properties"). The pipeline must have been created
    /// with [`ComputePipelineDesc::capture_statistics`]
    /// (VUID-vkGetPipelineExecutableStatisticsKHR-pipeline-03274).
    ///
    /// Errors: `KILN-E267` the device lacks `pipelineExecutableInfo`
    /// (VUID-vkGetPipelineExecutableStatisticsKHR-pipelineExecutableInfo-03272), `KILN-E268`
    /// the pipeline was not created to capture statistics, `KILN-E104`/`KILN-E111` a failed
    /// query.
    pub fn executable_statistics(&self) -> Result<Vec<PipelineExecutable>, PipelineError> {
        let captured = self.captures_statistics;
        statistics::executables(&self.shared, self.raw, &self.label, captured)
    }

    #[inline]
    /// The raw handle (owned by this object; destroyed with it).
    pub fn raw(&self) -> vk::Pipeline {
        self.raw
    }

    /// `module label:entry`, as shown in errors and validation messages.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The interned pipeline layout.
    #[inline]
    pub fn layout(&self) -> &Arc<PipelineLayout> {
        &self.layout
    }

    /// The reflected entry point.
    pub fn entry_point(&self) -> &EntryPoint {
        &self.entry
    }

    /// The reflected access of each binding of the layout (read / written, by which stage):
    /// what the recorder's automatic barriers order.
    pub fn access(&self) -> &PipelineAccess {
        &self.access
    }

    /// Workgroup size after specialization.
    #[inline]
    pub fn workgroup_size(&self) -> [u32; 3] {
        self.workgroup_size
    }

    /// Allocates a descriptor set for set number `set` of this pipeline's layout. The set
    /// binds to every pipeline whose layout has an equal set layout at that number.
    ///
    /// Errors: `KILN-E205` no such set.
    pub fn descriptor_set(&self, set: u32) -> Result<DescriptorSet, DescriptorError> {
        self.descriptor_set_with_count(set, None)
    }

    /// Like [`descriptor_set`](Self::descriptor_set) with the actual descriptor count of a
    /// bindless (variable-count) binding; `None` = its maximum.
    ///
    /// Errors: `KILN-E205` no such set, `KILN-E203` a count above the binding's maximum.
    pub fn descriptor_set_with_count(
        &self,
        set: u32,
        variable_count: Option<u32>,
    ) -> Result<DescriptorSet, DescriptorError> {
        let (names, label) = (&self.names, self.label());
        super::pipeline_set(
            &self.shared,
            &self.layout,
            names,
            label,
            (set, variable_count),
        )
    }
}

impl Drop for ComputePipeline {
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: retire runs this after every submission that may use `raw` finished.
        self.shared
            .retire(move |s| unsafe { s.raw.destroy_pipeline(raw, None) });
    }
}

/// `KILN-E054` (`WorkgroupTooLarge`) for a workgroup size `wg` (taken `from` specialization
/// constants, or "") beyond the device's limits or with a zero dimension.
fn check_workgroup(
    shared: &Shared,
    entry: &str,
    wg: [u32; 3],
    from: &str,
) -> Result<(), PipelineError> {
    let l = shared.limits();
    let invocations = wg.iter().map(|&x| x as u64).product::<u64>();
    if wg
        .iter()
        .zip(l.max_compute_work_group_size)
        .any(|(a, b)| *a > b)
        || invocations > l.max_compute_work_group_invocations as u64
        || wg.contains(&0)
    {
        return Err(ShaderError::WorkgroupTooLarge {
            entry: entry.to_string(),
            size: wg,
            max_size: l.max_compute_work_group_size,
            max_invocations: l.max_compute_work_group_invocations,
            from: from.to_string(),
        }
        .into());
    }
    Ok(())
}

/// The pipeline's layout: `desc.layout` (checked to cover `ep`, `KILN-E058`) or the one
/// reflected from `ep`, with `desc.push_descriptor_set` a push-descriptor set.
fn layout_desc_of<'d>(
    shared: &Shared,
    label: &str,
    desc: &ComputePipelineDesc<'d>,
    ep: &EntryPoint,
) -> Result<Cow<'d, PipelineLayoutDesc>, PipelineError> {
    let layout_desc = match desc.layout {
        Some(d) => {
            check_layout_covers(label, ep, d)?;
            Cow::Borrowed(d)
        }
        None => Cow::Owned(PipelineLayoutDesc::from_entry_points(&[(label, ep)])?),
    };
    match desc.push_descriptor_set {
        None => Ok(layout_desc),
        Some(set) => push_descriptor_layout(shared, label, &layout_desc, set).map(Cow::Owned),
    }
}

/// `layout_desc` with set `set` a push-descriptor set. Errors: `KILN-E210` (the
/// device lacks VK_KHR_push_descriptor, or the layout has no set `set`).
fn push_descriptor_layout(
    shared: &Shared,
    label: &str,
    layout_desc: &PipelineLayoutDesc,
    set: u32,
) -> Result<PipelineLayoutDesc, PipelineError> {
    let fail = |detail: String| {
        Err(DescriptorError::PushDescriptor {
            pipeline: label.to_string(),
            set,
            detail,
        }
        .into())
    };
    if !shared.features.push_descriptor {
        return fail(format!(
            "device `{}` lacks VK_KHR_push_descriptor; allocate a DescriptorSet \
             and bind_set it instead",
            shared.info.name
        ));
    }
    if set as usize >= layout_desc.sets.len() {
        return fail(format!(
            "the layout has {} set(s); name one of them",
            layout_desc.sets.len()
        ));
    }
    Ok(layout_desc.clone().with_push_descriptor(set))
}
