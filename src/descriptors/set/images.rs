//! Image, sampler and texel-buffer descriptors: checked writes of sampled and storage
//! images (whole or a view of some mips and layers), samplers, combined image samplers,
//! input attachments and texel-buffer views (the checks in `descriptors/write.rs`).

use ash::vk;

use super::{DescriptorSet, Held};
use crate::descriptors::write::{check_image_write_in, check_texel_write_in, ImageWrite};
use crate::device::{BufferView, Image, ImageView, Sampler};
use crate::error::{DescriptorError, Result};

impl DescriptorSet {
    /// Writes `image` (its view of all mips) to `binding`: a SAMPLED_IMAGE is read in
    /// SHADER_READ_ONLY_OPTIMAL, a STORAGE_IMAGE in GENERAL. Type checked against the layout.
    pub fn write_image(&mut self, binding: u32, image: &Image) -> Result<(), DescriptorError> {
        self.write_image_element(binding, 0, Some(image), None)
    }

    /// Writes `sampler` to a SAMPLER binding.
    pub fn write_sampler(
        &mut self,
        binding: u32,
        sampler: &Sampler,
    ) -> Result<(), DescriptorError> {
        self.write_image_element(binding, 0, None, Some(sampler))
    }

    /// Writes `image` + `sampler` to a COMBINED_IMAGE_SAMPLER binding.
    pub fn write_combined(
        &mut self,
        binding: u32,
        image: &Image,
        sampler: &Sampler,
    ) -> Result<(), DescriptorError> {
        self.write_image_element(binding, 0, Some(image), Some(sampler))
    }

    /// Writes `image` to an INPUT_ATTACHMENT `binding` (`subpassInput`): read in
    /// `RENDERING_LOCAL_READ_KHR` by a draw of a rendering scope where `image` is a
    /// local-read colour attachment ([`ColorAttachment::local_read`](crate::ColorAttachment::local_read)).
    ///
    /// Errors: `KILN-E200` no such binding, `KILN-E202` not an input attachment binding,
    /// `KILN-E182` an image without INPUT_ATTACHMENT usage, `KILN-E107` a device without
    /// `dynamicRenderingLocalRead`, `KILN-E109` an image of another device.
    pub fn write_input_attachment(
        &mut self,
        binding: u32,
        image: &Image,
    ) -> Result<(), DescriptorError> {
        let expected = self
            .layout
            .desc()
            .binding(binding)
            .map(|b| b.descriptor_type);
        if let Some(ty) = expected.filter(|t| *t != vk::DescriptorType::INPUT_ATTACHMENT) {
            return Err(DescriptorError::DescriptorTypeMismatch {
                set: self.set,
                binding,
                expected: ty,
                found: vk::DescriptorType::INPUT_ATTACHMENT,
                hint: "write_input_attachment writes INPUT_ATTACHMENT bindings (subpassInput)",
            });
        }
        self.write_image_inner(binding, 0, Some(image), None, None)
    }

    /// Writes array element `element` of an image, sampler or combined image-sampler
    /// binding. Which of `image`/`sampler` is given says which descriptor type the caller
    /// means (image only: SAMPLED_IMAGE or STORAGE_IMAGE; sampler only: SAMPLER; both:
    /// COMBINED_IMAGE_SAMPLER); it must equal the layout's
    /// (VUID-VkWriteDescriptorSet-descriptorType-00325 ff.), and the image needs the
    /// matching usage (VUID-VkWriteDescriptorSet-descriptorType-00337, -00339).
    ///
    /// Errors: `KILN-E200` no such binding, `KILN-E202` wrong descriptor type, `KILN-E203`
    /// element out of range, `KILN-E182` image without SAMPLED/STORAGE usage, `KILN-E109`
    /// an image or sampler of another device.
    pub fn write_image_element(
        &mut self,
        binding: u32,
        element: u32,
        image: Option<&Image>,
        sampler: Option<&Sampler>,
    ) -> Result<(), DescriptorError> {
        self.write_image_inner(binding, element, image, None, sampler)
    }

    /// Writes `view` (part of an image: one mip or layer, [`Image::view_of`]) to array
    /// element `element` of a SAMPLED_IMAGE or STORAGE_IMAGE binding, or with `sampler` of a
    /// COMBINED_IMAGE_SAMPLER binding; checked as
    /// [`write_image_element`](Self::write_image_element). The automatic barriers and
    /// layouts move and order the view's mip levels and layers only.
    pub fn write_image_view(
        &mut self,
        binding: u32,
        element: u32,
        view: &ImageView,
        sampler: Option<&Sampler>,
    ) -> Result<(), DescriptorError> {
        self.write_image_inner(binding, element, Some(view.image()), Some(view), sampler)
    }

    fn write_image_inner(
        &mut self,
        binding: u32,
        element: u32,
        image: Option<&Image>,
        view: Option<&ImageView>,
        sampler: Option<&Sampler>,
    ) -> Result<(), DescriptorError> {
        let write = ImageWrite {
            binding,
            element,
            image,
            view,
            sampler,
        };
        let (idx, expected, info) = check_image_write_in(
            &self.layout,
            self.set,
            |i| self.slots(i).len() as u32,
            &write,
        )?;
        self.wait_unused()?;
        let info = [info];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.raw())
            .dst_binding(binding)
            .dst_array_element(element)
            .descriptor_type(expected)
            .image_info(&info);
        // SAFETY: type, element, device and usage were checked against the layout above;
        // the set is not in use by a pending command buffer and `&mut self` synchronizes
        // the update.
        unsafe { self.layout.shared.raw.update_descriptor_sets(&[write], &[]) };
        let held = match (view, image, sampler) {
            (Some(v), _, s) => Held::View(v.clone(), s.cloned()),
            (None, Some(i), Some(s)) => Held::ImageSampler(i.clone(), s.clone()),
            (None, Some(i), None) => Held::Image(i.clone()),
            (None, None, Some(s)) => Held::Sampler(s.clone()),
            (None, None, None) => return Ok(()),
        };
        self.store(idx, element, held);
        Ok(())
    }

    /// Writes `view` to a UNIFORM_TEXEL_BUFFER or STORAGE_TEXEL_BUFFER `binding`
    /// (`samplerBuffer`/`textureBuffer` or `imageBuffer` in GLSL).
    pub fn write_texel_buffer(
        &mut self,
        binding: u32,
        view: &BufferView,
    ) -> Result<(), DescriptorError> {
        self.write_texel_buffer_at(binding, 0, view)
    }

    /// Writes `view` to array element `element` of a texel-buffer `binding`: the layout's
    /// type must be a texel buffer (VUID-VkWriteDescriptorSet-descriptorType-00325 ff.) and
    /// the view's buffer have that texel usage (VUID-VkWriteDescriptorSet-descriptorType-08765,
    /// -08766). The automatic barriers track the view's byte range of its buffer.
    ///
    /// Errors: `KILN-E200` no such binding, `KILN-E202` not a texel-buffer binding,
    /// `KILN-E203` element out of range, `KILN-E157` the buffer lacks the binding's texel
    /// usage, `KILN-E109` a view of another device.
    pub fn write_texel_buffer_at(
        &mut self,
        binding: u32,
        element: u32,
        view: &BufferView,
    ) -> Result<(), DescriptorError> {
        let (idx, expected) = check_texel_write_in(
            &self.layout,
            self.set,
            |i| self.slots(i).len() as u32,
            binding,
            element,
            view,
        )?;
        self.wait_unused()?;
        let views = [view.raw()];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(self.raw())
            .dst_binding(binding)
            .dst_array_element(element)
            .descriptor_type(expected)
            .texel_buffer_view(&views);
        // SAFETY: type, element, device and usage were checked against the layout above;
        // the set is not in use by a pending command buffer and `&mut self` synchronizes
        // the update; the view is kept alive by the set (`store`).
        unsafe { self.layout.shared.raw.update_descriptor_sets(&[write], &[]) };
        self.store(idx, element, Held::TexelBuffer(view.clone()));
        Ok(())
    }
}
