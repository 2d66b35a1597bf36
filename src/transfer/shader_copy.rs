//! Readbacks and uploads done by a shader: a dispatch of kiln's copy shader
//! (`shaders/copy.comp`, prebuilt `copy.spv`) that reads the device buffer and writes the
//! host buffer over the bus, or the other way round, instead of a `vkCmdCopyBuffer` on a copy
//! engine (`ReadbackQueue::ComputeShader`, `UploadQueue::ComputeShader`).
//!
//! Why: a queue's copies run on the device's copy engines; where one engine serves every
//! queue (or both directions of the bus are driven by one engine at a time), an upload and a
//! readback never overlap, however many queues carry them, and a stream of upload / compute /
//! readback is bound by the sum of its copies. The shader cores are another path to host
//! memory: a readback written by a dispatch runs beside the engine's upload.
//!
//! The pipeline takes one push-descriptor set (source, destination: storage buffers at the
//! copy's offsets) and the count of 16-byte words as a push constant; it is created on first
//! use and lives in a layer slot ([`ShaderCopies`]). A copy takes this path only where
//! everything it needs holds ([`ShaderCopies::eligible`]): `VK_KHR_push_descriptor`, a queue
//! with compute, a device buffer with storage usage (host buffers always have it), size and offsets multiples of 16 and of
//! `minStorageBufferOffsetAlignment`, size within `maxStorageBufferRange`; otherwise it is an
//! ordinary copy.

use std::sync::{Arc, Mutex};

use ash::vk;

use crate::device::{LayerSlot, ResourceStamps, Shared};
use crate::error::{vk_err, Error, Result};
use crate::queue::record_and_submit;
use crate::queue::submit::{Batch, RecordOptions};

/// The copy shader's SPIR-V (`shaders/copy.comp`, compiled with glslc; kiln has no build
/// script).
const COPY_SPV: &[u8] = include_bytes!("shaders/copy.spv");

/// Threads per workgroup of the copy shader (`local_size_x`).
const GROUP: u32 = 256;
/// The most workgroups one copy dispatches (the shader strides over the rest).
const MAX_GROUPS: u32 = 4096;

/// The copy pipeline's objects.
struct Objects {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
}

/// The layer slot holding the copy pipeline (created on first use).
#[derive(Default)]
pub(crate) struct ShaderCopies {
    objects: Mutex<Option<Objects>>,
    /// Shader copies submitted so far (tests: `Device::debug_shader_copies`).
    pub(crate) submitted: std::sync::atomic::AtomicU64,
}

impl LayerSlot for ShaderCopies {
    fn teardown(&mut self, device: &Shared) {
        let objects = self
            .objects
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(o) = objects {
            // SAFETY: the device is idle (teardown); the objects are used by nothing else.
            unsafe {
                device.raw.destroy_pipeline(o.pipeline, None);
                device.raw.destroy_pipeline_layout(o.layout, None);
                device.raw.destroy_descriptor_set_layout(o.set_layout, None);
            }
        }
    }
}

impl ShaderCopies {
    /// Whether a copy of `size` bytes between a device buffer of usage `src_usage` at
    /// `src_offset` and host memory at `dst_offset` (either direction) on `queue` can be a
    /// shader copy (see the module docs).
    pub(crate) fn eligible(
        shared: &Shared,
        queue: usize,
        src_usage: vk::BufferUsageFlags,
        (src_offset, dst_offset, size): (u64, u64, u64),
    ) -> bool {
        let limits = &shared.properties.limits;
        let align = limits.min_storage_buffer_offset_alignment.max(16);
        let compute = shared
            .queues
            .get(queue)
            .is_some_and(|q| q.flags().contains(vk::QueueFlags::COMPUTE));
        shared.features.push_descriptor
            && compute
            && src_usage.contains(vk::BufferUsageFlags::STORAGE_BUFFER)
            && size.is_multiple_of(16)
            && src_offset.is_multiple_of(align)
            && dst_offset.is_multiple_of(align)
            && size <= u64::from(limits.max_storage_buffer_range)
            && size / 16 <= u64::from(u32::MAX)
    }

    /// The pipeline objects, created on first use.
    fn objects(&self, shared: &Shared) -> Result<(vk::PipelineLayout, vk::Pipeline)> {
        let mut o = self.objects.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(o) = &*o {
            return Ok((o.layout, o.pipeline));
        }
        let made = create(shared)?;
        let out = (made.layout, made.pipeline);
        *o = Some(made);
        Ok(out)
    }
}

fn create(shared: &Shared) -> Result<Objects> {
    let d = &shared.raw;
    let words =
        ash::util::read_spv(&mut std::io::Cursor::new(COPY_SPV)).map_err(|_| Error::Internal {
            what: "kiln's copy shader (transfer/shaders/copy.spv) is not SPIR-V words",
        })?;
    let bindings = [0, 1].map(|b| {
        vk::DescriptorSetLayoutBinding::default()
            .binding(b)
            .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
            .descriptor_count(1)
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
    });
    let info = vk::DescriptorSetLayoutCreateInfo::default()
        .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
        .bindings(&bindings);
    // SAFETY: valid create info (two storage bindings; the push-descriptor flag only where
    // VK_KHR_push_descriptor is enabled: `eligible` checked it); locals outlive the call.
    let set_layout = unsafe { d.create_descriptor_set_layout(&info, None) }
        .map_err(vk_err("vkCreateDescriptorSetLayout (kiln copy shader)"))?;
    let sets = [set_layout];
    let ranges = [vk::PushConstantRange {
        stage_flags: vk::ShaderStageFlags::COMPUTE,
        offset: 0,
        size: 4,
    }];
    let info = vk::PipelineLayoutCreateInfo::default()
        .set_layouts(&sets)
        .push_constant_ranges(&ranges);
    let destroy_set_layout = || {
        // SAFETY: created above, used by nothing yet.
        unsafe { d.destroy_descriptor_set_layout(set_layout, None) };
    };
    // SAFETY: valid create info; locals outlive the call.
    let layout = match unsafe { d.create_pipeline_layout(&info, None) } {
        Ok(l) => l,
        Err(e) => {
            destroy_set_layout();
            return Err(vk_err("vkCreatePipelineLayout (kiln copy shader)")(e));
        }
    };
    let module_info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: the words are glslc's output for Vulkan 1.3 (checked with spirv-val when built).
    let module = match unsafe { d.create_shader_module(&module_info, None) } {
        Ok(m) => m,
        Err(e) => {
            // SAFETY: created above, used by nothing yet.
            unsafe { d.destroy_pipeline_layout(layout, None) };
            destroy_set_layout();
            return Err(vk_err("vkCreateShaderModule (kiln copy shader)")(e));
        }
    };
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main");
    let info = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout)];
    // SAFETY: valid create info: the module's interface matches the layout (two storage
    // buffers in set 0, a 4-byte push constant).
    let made = unsafe { d.create_compute_pipelines(vk::PipelineCache::null(), &info, None) };
    // SAFETY: the module is not needed once the pipeline is created (or failed).
    unsafe { d.destroy_shader_module(module, None) };
    match made {
        Ok(p) => Ok(Objects {
            set_layout,
            layout,
            pipeline: p[0],
        }),
        Err((_, e)) => {
            // SAFETY: created above, used by nothing.
            unsafe { d.destroy_pipeline_layout(layout, None) };
            destroy_set_layout();
            Err(vk_err("vkCreateComputePipelines (kiln copy shader)")(e))
        }
    }
}

/// Submits a shader copy of `size` bytes from `src` at `src_offset` to `dst` at
/// `dst_offset` on `queue` (the callers checked [`ShaderCopies::eligible`] and the ranges),
/// stamping `uses`; `siblings` are the parts of the same split copy submitted before
/// (`Batch::siblings`). Returns the timeline value. Errors: as a submission.
#[allow(clippy::too_many_arguments)]
pub(super) fn submit_shader_copy(
    shared: &Arc<Shared>,
    queue: usize,
    label: &str,
    (src, src_offset): (vk::Buffer, u64),
    (dst, dst_offset): (vk::Buffer, u64),
    size: u64,
    uses: &[(&ResourceStamps, bool)],
    siblings: &[(usize, u64)],
) -> Result<u64> {
    let copies = shared.slot::<ShaderCopies>()?;
    let (layout, pipeline) = copies.objects(shared)?;
    let push = crate::device::loader::walking(|| {
        ash::khr::push_descriptor::Device::new(&shared.instance.raw, &shared.raw)
    });
    let raw = &shared.raw;
    let options = RecordOptions {
        timed: false,
        ..RecordOptions::ONE_TIME
    };
    let words = u32::try_from(size / 16).map_err(|_| Error::Vulkan {
        call: "kiln shader copy (more than 2^32 16-byte words)",
        result: vk::Result::ERROR_OUT_OF_DEVICE_MEMORY,
    })?;
    let groups = words.div_ceil(GROUP).clamp(1, MAX_GROUPS);
    let batch = Batch {
        uses,
        siblings,
        ..Batch::commands(label, vk::CommandBuffer::null())
    };
    let ((), value, _work) = record_and_submit(shared, queue, options, batch, None, |r| {
        let cb = r.command_buffer();
        let infos = [(src, src_offset), (dst, dst_offset)].map(|(buffer, offset)| {
            [vk::DescriptorBufferInfo {
                buffer,
                offset,
                range: size,
            }]
        });
        let writes = [0, 1].map(|i| {
            vk::WriteDescriptorSet::default()
                .dst_binding(i as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                .buffer_info(&infos[i])
        });
        // SAFETY: the command buffer is recording on a queue with compute (`eligible`);
        // pipeline and layout are the slot's, alive until teardown; both buffers belong to
        // this device and have storage usage (the host buffer always, the device buffer
        // checked by `eligible`),
        // the ranges lie inside them and their offsets are aligned (checked by the callers).
        // The submission waits for the queue's previous value and for other queues' pending
        // uses of `uses`; its closing barrier (all commands' writes → host) makes the shader's
        // writes visible to the host. The callers hold both buffers until the submission
        // completes (the device buffer by a clone, the host buffer by its stamps).
        unsafe {
            raw.cmd_bind_pipeline(cb, vk::PipelineBindPoint::COMPUTE, pipeline);
            push.cmd_push_descriptor_set(cb, vk::PipelineBindPoint::COMPUTE, layout, 0, &writes);
            raw.cmd_push_constants(
                cb,
                layout,
                vk::ShaderStageFlags::COMPUTE,
                0,
                &words.to_ne_bytes(),
            );
            raw.cmd_dispatch(cb, groups, 1, 1);
        }
        Ok(())
    })?;
    copies
        .submitted
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Ok(value)
}
