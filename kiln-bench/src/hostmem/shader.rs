//! The copy shader of the host-memory sweep (`copy.comp`, kiln's own readback shader): the
//! same bytes copied by the shader cores instead of a copy engine.

use ash::vk;

use super::Copy;
use crate::raw::Raw;
use crate::BenchResult;

/// The copy shader (`copy.comp`): layouts, pipeline, a pool of sets.
pub(super) struct ShaderCopy {
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    pipeline: vk::Pipeline,
    pool: vk::DescriptorPool,
}

impl ShaderCopy {
    pub(super) fn new(raw: &Raw) -> BenchResult<ShaderCopy> {
        let set_layout = raw.set_layout(&[vk::DescriptorType::STORAGE_BUFFER; 2])?;
        let layout = raw.pipeline_layout(set_layout, 4)?;
        let module = kiln::include_spirv!("copy.comp")?;
        let pipeline = raw.pipeline(vk::PipelineCache::null(), layout, module.words(), &[])?;
        let sizes = [vk::DescriptorPoolSize {
            ty: vk::DescriptorType::STORAGE_BUFFER,
            descriptor_count: 128,
        }];
        let pool = raw.pool(&sizes, 64)?;
        Ok(ShaderCopy {
            set_layout,
            layout,
            pipeline,
            pool,
        })
    }

    /// A shader copy of `len` bytes (a multiple of 16) from `src` to `dst`.
    pub(super) fn copy(
        &self,
        raw: &Raw,
        src: vk::Buffer,
        dst: vk::Buffer,
        len: u64,
        readback: bool,
    ) -> BenchResult<Copy> {
        let set = raw.alloc_set(self.pool, self.set_layout)?;
        let infos = [src, dst].map(|b| {
            [vk::DescriptorBufferInfo {
                buffer: b,
                offset: 0,
                range: len,
            }]
        });
        let writes: Vec<_> = (0..2)
            .map(|i| {
                vk::WriteDescriptorSet::default()
                    .dst_set(set)
                    .dst_binding(i as u32)
                    .descriptor_type(vk::DescriptorType::STORAGE_BUFFER)
                    .buffer_info(&infos[i])
            })
            .collect();
        // SAFETY: a fresh set; both buffers are alive storage buffers of at least `len` bytes.
        unsafe { raw.d.update_descriptor_sets(&writes, &[]) };
        Ok(Copy {
            src,
            dst,
            regions: Vec::new(),
            readback,
            shader: Some((self.pipeline, self.layout, set, (len / 16) as u32)),
        })
    }

    pub(super) fn destroy(self, raw: &Raw) {
        // SAFETY: no pending work uses them (every run waits for all lanes).
        unsafe {
            raw.d.destroy_pipeline(self.pipeline, None);
            raw.d.destroy_descriptor_pool(self.pool, None);
            raw.d.destroy_pipeline_layout(self.layout, None);
            raw.d.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }
}
