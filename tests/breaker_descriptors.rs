//! Breaker probes of descriptor-set writes.

use common::{assert_clean, device};
use kiln::{PipelineLayoutDesc, SamplerDesc};

/// A SAMPLER binding whose sampler is immutable (set in the layout) may not be written
/// (VUID-VkWriteDescriptorSet-descriptorType-02752): the write is refused with KILN-E202
/// before Vulkan sees it, and the set still binds (the binding counts as written).
#[test]
fn writing_an_immutable_sampler_binding_is_e202() {
    let device = device();
    let fs = kiln::include_spirv!("scene/chair.frag").unwrap();
    let desc = PipelineLayoutDesc::from_stages(&[(&fs, "main")])
        .unwrap()
        .with_immutable_sampler(1, 1, SamplerDesc::default())
        .unwrap();
    let layout = device.pipeline_layout(&desc).unwrap();
    let mut set = device
        .allocate_set(&layout.set_layouts()[1], 1, Default::default())
        .unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let err = set.write_sampler(1, &sampler).unwrap_err();
    assert_eq!(err.code(), "KILN-E202", "{err}");
    assert!(err.to_string().contains("immutable"), "{err}");
    // Bindings 0 (texture) and 2 (uniform) are still unwritten; 1 is not listed.
    assert_eq!(set.first_unwritten(), Some(0));
    drop(set);
    assert_clean(&device);
}
