//! The raw-`ash` baseline: the same work written directly against Vulkan, with no checks,
//! no interning and no wrappers. It uses kiln's `VkDevice` and queue (device creation is
//! not measured) but creates every object it records with plain `ash` calls.

use std::ffi::c_void;

use ash::vk;

use super::BenchResult;

/// Handles the raw baseline needs; cloned out of a kiln device.
pub struct Raw {
    pub d: ash::Device,
    inst: ash::Instance,
    pub queue: vk::Queue,
    pub family: u32,
    mem: vk::PhysicalDeviceMemoryProperties,
}

/// One command pool, command buffer and fence (the raw equivalent of kiln's context).
pub struct Ctx {
    pub pool: vk::CommandPool,
    pub cb: vk::CommandBuffer,
    pub fence: vk::Fence,
}

/// A buffer in host-visible memory, persistently mapped.
pub struct HostBuf {
    pub buf: vk::Buffer,
    pub mem: vk::DeviceMemory,
    pub ptr: *mut u8,
}

impl Raw {
    pub fn new(device: &kiln::Device) -> Raw {
        // SAFETY: the bench destroys every object it creates through these handles before
        // the kiln device drops, and uses the queue only from this thread while no kiln
        // call is in flight.
        let (d, inst) = unsafe { (device.raw().clone(), device.raw_instance().clone()) };
        // SAFETY: a plain query on kiln's live instance and physical device.
        let families = unsafe {
            inst.get_physical_device_queue_family_properties(device.raw_physical_device())
        };
        // The same choice kiln makes: compute + graphics first, else compute alone.
        let family = families
            .iter()
            .position(|f| {
                f.queue_flags
                    .contains(vk::QueueFlags::COMPUTE | vk::QueueFlags::GRAPHICS)
            })
            .or_else(|| {
                families
                    .iter()
                    .position(|f| f.queue_flags.contains(vk::QueueFlags::COMPUTE))
            })
            .unwrap_or(0) as u32;
        // kiln created queue 0 of this family on its device.
        Self::for_device(device, d, family)
    }

    /// Handles for a `VkDevice` the bench created itself on kiln's physical device (the
    /// host-memory sweep's `families` group), `family` its queue 0's family.
    pub fn for_device(device: &kiln::Device, d: ash::Device, family: u32) -> Raw {
        // SAFETY: the caller destroys `d` only after every object made through it; the
        // instance outlives it (kiln's device is alive for the whole bench).
        let inst = unsafe { device.raw_instance().clone() };
        // SAFETY: a plain query on kiln's live instance and physical device.
        let mem =
            unsafe { inst.get_physical_device_memory_properties(device.raw_physical_device()) };
        // SAFETY: the caller created queue 0 of `family` on `d`.
        let queue = unsafe { d.get_device_queue(family, 0) };
        Raw {
            d,
            inst,
            queue,
            family,
            mem,
        }
    }

    /// `VK_KHR_push_descriptor`'s functions (the caller checked it is enabled).
    pub fn push_descriptor(&self) -> ash::khr::push_descriptor::Device {
        ash::khr::push_descriptor::Device::new(&self.inst, &self.d)
    }

    /// `VK_EXT_external_memory_host`'s functions (the caller checked it is enabled).
    pub fn external_memory_host(&self) -> ash::ext::external_memory_host::Device {
        ash::ext::external_memory_host::Device::new(&self.inst, &self.d)
    }

    pub fn set_layout(&self, types: &[vk::DescriptorType]) -> BenchResult<vk::DescriptorSetLayout> {
        self.set_layout_with(types, vk::DescriptorSetLayoutCreateFlags::empty())
    }

    /// [`set_layout`](Self::set_layout) with create flags (`PUSH_DESCRIPTOR_KHR`).
    pub fn set_layout_with(
        &self,
        types: &[vk::DescriptorType],
        flags: vk::DescriptorSetLayoutCreateFlags,
    ) -> BenchResult<vk::DescriptorSetLayout> {
        let bindings: Vec<_> = types
            .iter()
            .enumerate()
            .map(|(i, t)| {
                vk::DescriptorSetLayoutBinding::default()
                    .binding(i as u32)
                    .descriptor_type(*t)
                    .descriptor_count(1)
                    .stage_flags(vk::ShaderStageFlags::COMPUTE)
            })
            .collect();
        let info = vk::DescriptorSetLayoutCreateInfo::default()
            .bindings(&bindings)
            .flags(flags);
        // SAFETY: `info` points at locals alive for the call; PUSH_DESCRIPTOR_KHR is passed
        // only where kiln enabled VK_KHR_push_descriptor on this device.
        Ok(unsafe { self.d.create_descriptor_set_layout(&info, None) }?)
    }

    pub fn pipeline_layout(
        &self,
        set: vk::DescriptorSetLayout,
        push_bytes: u32,
    ) -> BenchResult<vk::PipelineLayout> {
        let sets = [set];
        let ranges = [vk::PushConstantRange {
            stage_flags: vk::ShaderStageFlags::COMPUTE,
            offset: 0,
            size: push_bytes,
        }];
        let mut info = vk::PipelineLayoutCreateInfo::default().set_layouts(&sets);
        if push_bytes > 0 {
            info = info.push_constant_ranges(&ranges);
        }
        // SAFETY: `info` points at locals alive for the call.
        Ok(unsafe { self.d.create_pipeline_layout(&info, None) }?)
    }

    /// A compute pipeline from SPIR-V words with u32 specialization constants.
    pub fn pipeline(
        &self,
        cache: vk::PipelineCache,
        layout: vk::PipelineLayout,
        words: &[u32],
        spec: &[(u32, u32)],
    ) -> BenchResult<vk::Pipeline> {
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: the words are a module kiln's build compiled and checked.
        let module = unsafe { self.d.create_shader_module(&info, None) }?;
        let entries: Vec<_> = spec
            .iter()
            .enumerate()
            .map(|(i, (id, _))| vk::SpecializationMapEntry {
                constant_id: *id,
                offset: 4 * i as u32,
                size: 4,
            })
            .collect();
        let data: Vec<u8> = spec.iter().flat_map(|(_, v)| v.to_ne_bytes()).collect();
        let spec_info = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let mut stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(vk::ShaderStageFlags::COMPUTE)
            .module(module)
            .name(c"main");
        if !spec.is_empty() {
            stage = stage.specialization_info(&spec_info);
        }
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(layout);
        // SAFETY: module, layout and cache are alive; pointers are locals.
        let made = unsafe { self.d.create_compute_pipelines(cache, &[info], None) };
        // SAFETY: the module is not needed after creation.
        unsafe { self.d.destroy_shader_module(module, None) };
        Ok(made.map_err(|(_, e)| e)?[0])
    }

    pub fn pool(
        &self,
        sizes: &[vk::DescriptorPoolSize],
        max_sets: u32,
    ) -> BenchResult<vk::DescriptorPool> {
        let info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(max_sets)
            .pool_sizes(sizes);
        // SAFETY: `info` points at locals alive for the call.
        Ok(unsafe { self.d.create_descriptor_pool(&info, None) }?)
    }

    pub fn alloc_set(
        &self,
        pool: vk::DescriptorPool,
        layout: vk::DescriptorSetLayout,
    ) -> BenchResult<vk::DescriptorSet> {
        let layouts = [layout];
        let info = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        // SAFETY: pool and layout are alive; the pool is used from this thread only.
        Ok(unsafe { self.d.allocate_descriptor_sets(&info) }?[0])
    }

    /// Writes `buffers[i]` (whole size) to binding i, in one vkUpdateDescriptorSets call.
    pub fn write_set<const N: usize>(
        &self,
        set: vk::DescriptorSet,
        types: &[vk::DescriptorType; N],
        buffers: &[vk::Buffer; N],
    ) {
        let infos: [[vk::DescriptorBufferInfo; 1]; N] = std::array::from_fn(|i| {
            [vk::DescriptorBufferInfo {
                buffer: buffers[i],
                offset: 0,
                range: vk::WHOLE_SIZE,
            }]
        });
        let writes: [vk::WriteDescriptorSet; N] = std::array::from_fn(|i| {
            vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(i as u32)
                .descriptor_type(types[i])
                .buffer_info(&infos[i])
        });
        // SAFETY: the set is not in use by a pending command buffer; the buffers are alive
        // and have the usage of their descriptor type.
        unsafe { self.d.update_descriptor_sets(&writes, &[]) };
    }

    pub fn ctx(&self) -> BenchResult<Ctx> {
        self.ctx_for(self.family)
    }

    /// A context whose pool belongs to queue family `family`.
    pub fn ctx_for(&self, family: u32) -> BenchResult<Ctx> {
        let info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        // SAFETY: plain creates on a live device; the objects are destroyed in `drop_ctx`.
        unsafe {
            let pool = self.d.create_command_pool(&info, None)?;
            let alloc = vk::CommandBufferAllocateInfo::default()
                .command_pool(pool)
                .level(vk::CommandBufferLevel::PRIMARY)
                .command_buffer_count(1);
            let cb = self.d.allocate_command_buffers(&alloc)?[0];
            let fence = self.d.create_fence(&vk::FenceCreateInfo::default(), None)?;
            Ok(Ctx { pool, cb, fence })
        }
    }

    pub fn drop_ctx(&self, c: Ctx) {
        // SAFETY: the context's fence was waited on; nothing of it is pending.
        unsafe {
            self.d.destroy_fence(c.fence, None);
            self.d.destroy_command_pool(c.pool, None);
        }
    }

    /// Begins the command buffer (one-time submit). The pool was reset after the last
    /// submission's wait, as kiln's `execute` does, so both see the same allocator state.
    pub fn begin(&self, c: &Ctx) -> BenchResult<()> {
        let begin = vk::CommandBufferBeginInfo::default()
            .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
        // SAFETY: `cb` is in the initial state (fresh, or its pool was reset).
        unsafe { self.d.begin_command_buffer(c.cb, &begin)? };
        Ok(())
    }

    /// Resets the context's pool (its command buffer returns to the initial state).
    pub fn reset(&self, c: &Ctx) -> BenchResult<()> {
        // SAFETY: the last submission of `cb` was waited on.
        unsafe {
            self.d
                .reset_command_pool(c.pool, vk::CommandPoolResetFlags::empty())?
        };
        Ok(())
    }

    /// A global memory barrier from `src` to `dst` access (all commands → `dst_stage`) in the
    /// recording command buffer `cb`: a synchronization2 barrier (`vkCmdPipelineBarrier2`),
    /// as kiln records.
    pub fn barrier(
        &self,
        cb: vk::CommandBuffer,
        src: vk::AccessFlags2,
        dst: vk::AccessFlags2,
        dst_stage: vk::PipelineStageFlags2,
    ) {
        let b = [vk::MemoryBarrier2::default()
            .src_stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
            .src_access_mask(src)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst)];
        let dep = vk::DependencyInfo::default().memory_barriers(&b);
        // SAFETY: `cb` is recording; the barrier is a local; kiln's device has
        // synchronization2 enabled (it requires it).
        unsafe { self.d.cmd_pipeline_barrier2(cb, &dep) }
    }

    /// One global memory barrier with exactly these masks (a barrier kiln recorded).
    pub fn barrier_masks(
        &self,
        cb: vk::CommandBuffer,
        (src_stage, src_access, dst_stage, dst_access): BarrierMasks,
    ) {
        let b = [vk::MemoryBarrier2::default()
            .src_stage_mask(src_stage)
            .src_access_mask(src_access)
            .dst_stage_mask(dst_stage)
            .dst_access_mask(dst_access)];
        let dep = vk::DependencyInfo::default().memory_barriers(&b);
        // SAFETY: as in `barrier`: the masks are ones kiln recorded on this device.
        unsafe { self.d.cmd_pipeline_barrier2(cb, &dep) }
    }

    /// Ends, submits and blocks in vkWaitForFences, then resets the fence and the pool.
    pub fn submit_wait(&self, c: &Ctx) -> BenchResult<()> {
        self.submit_wait_on(self.queue, c)
    }

    /// [`submit_wait`](Self::submit_wait) on `queue` (of the family `c`'s pool belongs to).
    pub fn submit_wait_on(&self, queue: vk::Queue, c: &Ctx) -> BenchResult<()> {
        let cbs = [c.cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        // SAFETY: `cb` is recording and becomes executable; the queue is used only by this
        // thread; the fence is unsignaled (reset after every wait).
        unsafe {
            self.d.end_command_buffer(c.cb)?;
            self.d.queue_submit(queue, &[submit], c.fence)?;
            self.d.wait_for_fences(&[c.fence], true, u64::MAX)?;
            self.d.reset_fences(&[c.fence])?;
        }
        self.reset(c)
    }

    /// The `VkQueue` of a kiln queue (the raw side submits to the same hardware queue, from
    /// this thread, while no kiln call is in flight).
    pub fn queue_of(&self, info: &kiln::QueueInfo) -> vk::Queue {
        // SAFETY: kiln created this queue of this family (emulated queues report the main
        // queue's family and index).
        unsafe { self.d.get_device_queue(info.family, info.queue_index) }
    }

    /// Submits the already recorded (reusable) command buffer and blocks in
    /// vkWaitForFences, then resets the fence.
    pub fn resubmit_wait(&self, c: &Ctx) -> BenchResult<()> {
        let cbs = [c.cb];
        let submit = vk::SubmitInfo::default().command_buffers(&cbs);
        // SAFETY: `cb` is executable and not pending (waited below every time); the queue is
        // used only by this thread; the fence is unsignaled.
        unsafe {
            self.d.queue_submit(self.queue, &[submit], c.fence)?;
            self.d.wait_for_fences(&[c.fence], true, u64::MAX)?;
            self.d.reset_fences(&[c.fence])?;
        }
        Ok(())
    }

    /// The device's memory types and heaps.
    pub fn memory_properties(&self) -> &vk::PhysicalDeviceMemoryProperties {
        &self.mem
    }

    pub fn memory_type(&self, bits: u32, want: vk::MemoryPropertyFlags) -> Option<u32> {
        (0..self.mem.memory_type_count).find(|&i| {
            bits & (1 << i) != 0
                && self.mem.memory_types[i as usize]
                    .property_flags
                    .contains(want)
        })
    }

    /// A mapped host-visible buffer; `cached` prefers HOST_CACHED memory (for readback).
    pub fn host_buffer(&self, size: u64, cached: bool) -> BenchResult<HostBuf> {
        self.host_buffer_on(size, cached, &[])
    }

    /// [`host_buffer`](Self::host_buffer) shared concurrently by the queue `families` (two
    /// or more distinct ones; exclusive when fewer).
    pub fn host_buffer_on(
        &self,
        size: u64,
        cached: bool,
        families: &[u32],
    ) -> BenchResult<HostBuf> {
        let buf = self.copy_buffer(size, families)?;
        // SAFETY: `buf` is alive.
        let req = unsafe { self.d.get_buffer_memory_requirements(buf) };
        let coherent =
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let ty = cached
            .then(|| {
                self.memory_type(
                    req.memory_type_bits,
                    coherent | vk::MemoryPropertyFlags::HOST_CACHED,
                )
            })
            .flatten()
            .or_else(|| self.memory_type(req.memory_type_bits, coherent))
            .ok_or("no host-visible coherent memory type")?;
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(ty);
        // SAFETY: a valid allocation for `buf`'s requirements, bound and mapped whole.
        unsafe {
            let mem = self.d.allocate_memory(&alloc, None)?;
            self.d.bind_buffer_memory(buf, mem, 0)?;
            let ptr: *mut c_void =
                self.d
                    .map_memory(mem, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())?;
            Ok(HostBuf {
                buf,
                mem,
                ptr: ptr as *mut u8,
            })
        }
    }

    /// A buffer of `size` bytes for copies both ways (`TRANSFER_SRC | TRANSFER_DST`), shared
    /// concurrently by the queue `families` (two or more; exclusive when fewer), no memory
    /// bound yet.
    pub fn copy_buffer(&self, size: u64, families: &[u32]) -> BenchResult<vk::Buffer> {
        let mut info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST);
        if families.len() > 1 {
            info = info
                .sharing_mode(vk::SharingMode::CONCURRENT)
                .queue_family_indices(families);
        }
        // SAFETY: plain create; the caller binds memory before any use.
        Ok(unsafe { self.d.create_buffer(&info, None) }?)
    }

    pub fn drop_host_buffer(&self, b: HostBuf) {
        // SAFETY: no pending GPU work uses the buffer (every submission was waited on).
        unsafe {
            self.d.destroy_buffer(b.buf, None);
            self.d.unmap_memory(b.mem);
            self.d.free_memory(b.mem, None);
        }
    }
}

/// A global barrier's masks: source stages and accesses, destination stages and accesses.
pub type BarrierMasks = (
    vk::PipelineStageFlags2,
    vk::AccessFlags2,
    vk::PipelineStageFlags2,
    vk::AccessFlags2,
);
