//! Descriptor sets: writes checked against the reflected layout (descriptor type, binding,
//! image usage, immutable samplers, buffer-range limits) before anything is written, sets
//! with unwritten bindings refused at bind time, pools that grow and reuse freed sets. A
//! reused set must be written in full again before it binds (KILN-E207), is never handed
//! out while a submission may still use it, and keeps what it refers to alive.

use common::add;
use common::add::{run_and_check, vector_add};
use common::{assert_clean, device};
use kiln::{
    vk, DescriptorSetLayoutDesc, Error, ImageDesc, PipelineLayoutDesc, SamplerDesc,
    SetLayoutBinding,
};
use kiln_examples::scene;

/// Drops `set` (a set 0 of `p` no pending submission uses) and takes `p`'s next set 0,
/// which reuses its slot: the same `VkDescriptorSet` handle (asserted).
fn next_in_freed_slot(p: &kiln::ComputePipeline, set: kiln::DescriptorSet) -> kiln::DescriptorSet {
    let old = set.raw();
    drop(set);
    let next = p.descriptor_set(0).unwrap();
    assert_eq!(next.raw(), old, "the freed set's slot is taken again");
    next
}

fn input(device: &kiln::Device, v: f32, n: usize) -> kiln::Buffer {
    add::storage(device, "in", &vec![v; n])
}

#[test]
fn a_reused_set_must_be_written_in_full_again_before_it_binds() {
    let device = device();
    let p = vector_add(&device);
    let (one, two) = (input(&device, 1.0, 8), input(&device, 2.0, 8));
    let out = device.storage_buffer::<f32>("out", 8).unwrap();
    let mut a = p.descriptor_set(0).unwrap();
    a.write_buffers(&[(0, &one), (1, &one), (2, &out)]).unwrap();
    device.execute(|r| add::dispatch(r, &p, &a, 8)).unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![2.0; 8]);
    // The GPU is done with it: the handle is reused, but nothing written before counts.
    let mut b = next_in_freed_slot(&p, a);
    assert_eq!(b.first_unwritten(), Some(0));
    let bind = |set: &kiln::DescriptorSet| device.execute(|r| add::dispatch(r, &p, set, 8));
    let err = bind(&b).unwrap_err();
    assert_eq!(err.code(), "KILN-E207", "{err}");
    b.write_buffer(0, &two).unwrap();
    b.write_buffer(1, &two).unwrap();
    assert_eq!(b.first_unwritten(), Some(2));
    let err = bind(&b).unwrap_err();
    assert!(err.to_string().contains("binding 2"), "{err}");
    // Rewriting a binding does not count twice.
    b.write_buffer(1, &two).unwrap();
    assert_eq!(b.first_unwritten(), Some(2));
    b.write_buffer(2, &out).unwrap();
    assert_eq!(b.first_unwritten(), None);
    bind(&b).unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![4.0; 8]);
    assert_clean(&device);
}

#[test]
fn a_set_dropped_in_flight_is_not_reused_and_keeps_its_buffers_alive() {
    let device = device();
    let p = vector_add(&device);
    let n = 1 << 16;
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let mut a = p.descriptor_set(0).unwrap();
    {
        // The set holds the only handles of its inputs once this scope ends.
        let (x, y) = (input(&device, 3.0, n), input(&device, 4.0, n));
        a.write_buffers(&[(0, &x), (1, &y), (2, &out)]).unwrap();
    }
    let old = a.raw();
    let sub = device
        .submit(|r| add::dispatch(r, &p, &a, n as u32))
        .unwrap();
    drop(a);
    let mut b = p.descriptor_set(0).unwrap();
    if !sub.is_done() {
        assert_ne!(b.raw(), old, "a set still in use was handed out again");
    }
    let other = device.storage_buffer::<f32>("other", n).unwrap();
    let z = input(&device, 0.5, n);
    // Writing the new set must not disturb the pending submission.
    b.write_buffers(&[(0, &z), (1, &z), (2, &other)]).unwrap();
    sub.wait().unwrap();
    device
        .execute(|r| add::dispatch(r, &p, &b, n as u32))
        .unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![7.0; n]);
    assert_eq!(other.read::<f32>().unwrap(), vec![1.0; n]);
    assert_clean(&device);
}

#[test]
fn batched_writes_beyond_the_stack_batch_are_checked_and_written() {
    let device = device();
    let bindings: Vec<SetLayoutBinding> = (0..20u32)
        .map(|i| {
            let ty = if i.is_multiple_of(3) {
                vk::DescriptorType::UNIFORM_BUFFER
            } else {
                vk::DescriptorType::STORAGE_BUFFER
            };
            SetLayoutBinding::new(i, ty, 1, vk::ShaderStageFlags::COMPUTE)
        })
        .collect();
    let desc = DescriptorSetLayoutDesc::new(bindings, vk::DescriptorSetLayoutCreateFlags::empty());
    let layout = device.set_layout(&desc).unwrap();
    let ubo = device
        .buffer_from_slice("ubo", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0u32; 4])
        .unwrap();
    let ssbo = device.storage_buffer::<u32>("ssbo", 4).unwrap();
    let pick = |i: u32| if i.is_multiple_of(3) { &ubo } else { &ssbo };
    for round in 0..3 {
        let mut set = device.descriptor_set(&layout, 0).unwrap();
        // One wrong type at the end: nothing of the 20 is written.
        let mut writes: Vec<(u32, &kiln::Buffer)> = (0..20).map(|i| (i, pick(i))).collect();
        writes[19].1 = &ubo;
        let err = set.write_buffers(&writes).unwrap_err();
        assert_eq!(err.code(), "KILN-E202", "round {round}: {err}");
        assert_eq!(set.first_unwritten(), Some(0));
        writes[19].1 = pick(19);
        set.write_buffers(&writes[..17]).unwrap();
        assert_eq!(set.first_unwritten(), Some(17));
        set.write_buffers(&writes).unwrap();
        assert_eq!(set.first_unwritten(), None, "round {round}");
    }
    assert_clean(&device);
}

#[test]
fn uniform_buffer_into_storage_binding_is_an_error() {
    let device = device();
    let p = vector_add(&device);
    let ubo = device
        .buffer_from_slice("ubo", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0u32; 4])
        .unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    let err = set.write_buffer(0, &ubo).unwrap_err();
    assert_eq!(err.code(), "KILN-E202", "{err}");
    match Error::from(err) {
        Error::DescriptorTypeMismatch {
            set: 0,
            binding: 0,
            expected,
            found,
            ..
        } => {
            assert_eq!(expected, vk::DescriptorType::STORAGE_BUFFER);
            assert_eq!(found, vk::DescriptorType::UNIFORM_BUFFER);
        }
        other => panic!("unexpected {other:?}"),
    }
    // Asking for the wrong type explicitly is caught the same way.
    let err = set.write_uniform_buffer(1, &ubo).unwrap_err();
    assert_eq!(err.code(), "KILN-E202");
    // A binding the layout lacks.
    assert_eq!(set.write_buffer(7, &ubo).unwrap_err().code(), "KILN-E200");
    assert_clean(&device);
}

#[test]
fn binding_a_set_with_unwritten_bindings_is_an_error() {
    let device = device();
    let p = vector_add(&device);
    let buf = device.storage_buffer::<f32>("a", 16).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &buf).unwrap();
    let err = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            Ok(r.bind_set(0, &set)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E207", "{err}");
    // The device keeps working after a failed recording.
    run_and_check(&device, 10);
    assert_clean(&device);
}

#[test]
fn batched_writes_are_checked_before_anything_is_written() {
    let device = device();
    let p = vector_add(&device);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let a = device
        .buffer_from_slice("a", usage, &[1.0f32, 2.0])
        .unwrap();
    let b = device
        .buffer_from_slice("b", usage, &[10.0f32, 20.0])
        .unwrap();
    let c = device.storage_buffer::<f32>("c", 2).unwrap();
    let ubo = device
        .buffer_from_slice("ubo", vk::BufferUsageFlags::UNIFORM_BUFFER, &[0u32; 4])
        .unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    // The third write is wrong: nothing of the batch is written.
    let err = set
        .write_buffers(&[(0, &a), (1, &b), (2, &ubo)])
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E202");
    assert_eq!(set.first_unwritten(), Some(0));
    set.write_buffers(&[(0, &a), (1, &b), (2, &c)]).unwrap();
    assert_eq!(set.first_unwritten(), None);
    device.execute(|r| add::dispatch(r, &p, &set, 2)).unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![11.0, 22.0]);
    assert_clean(&device);
}

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
    let mut set = device.descriptor_set(&layout.set_layouts()[1], 1).unwrap();
    let sampler = device.sampler(&SamplerDesc::nearest_clamp()).unwrap();
    let err = set.write_sampler(1, &sampler).unwrap_err();
    assert_eq!(err.code(), "KILN-E202", "{err}");
    assert!(err.to_string().contains("immutable"), "{err}");
    // Bindings 0 (texture) and 2 (uniform) are still unwritten; 1 is not listed.
    assert_eq!(set.first_unwritten(), Some(0));
    drop(set);
    assert_clean(&device);
}

#[test]
fn image_descriptor_writes_are_type_checked() {
    let device = device();
    let s = scene::Scene::new(&device, scene::COLOR_FORMAT).unwrap();
    let mut set = s.chair.descriptor_set(1).unwrap();
    let albedo = set.binding_of("albedo").unwrap();
    let samp = set.binding_of("albedo_sampler").unwrap();
    let gloss = set.binding_of("material").unwrap();
    // A sampler into the texture binding, an image into the sampler binding, a buffer
    // into the image binding, an image into the uniform binding: all KILN-E202.
    let e = set.write_sampler(albedo, &s.sampler).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set.write_image(samp, &s.texture).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set.write_buffer(albedo, &s.gloss).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set.write_image(gloss, &s.texture).unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    let e = set
        .write_combined(albedo, &s.texture, &s.sampler)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E202", "{e}");
    // An image without SAMPLED usage.
    let depth = device
        .image(&ImageDesc::depth_target("depth", 4, 4, scene::DEPTH_FORMAT))
        .unwrap();
    let e = set.write_image(albedo, &depth).unwrap_err();
    assert_eq!(e.code(), "KILN-E182", "{e}");
    assert_eq!(set.first_unwritten(), Some(albedo));
    set.write_image(albedo, &s.texture).unwrap();
    set.write_sampler(samp, &s.sampler).unwrap();
    assert_eq!(set.first_unwritten(), Some(gloss));
    assert_clean(&device);
}

#[test]
fn ten_thousand_sets_free_half_allocate_again() {
    let device = device();
    let p = vector_add(&device);
    let mut sets: Vec<_> = (0..10_000).map(|_| p.descriptor_set(0).unwrap()).collect();
    let distinct: std::collections::HashSet<_> = sets.iter().map(|s| s.raw()).collect();
    assert_eq!(distinct.len(), 10_000);
    // Free every other set, then allocate 5 000 more: freed slots are reused.
    let mut i = 0;
    sets.retain(|_| {
        i += 1;
        i % 2 == 0
    });
    assert_eq!(sets.len(), 5_000);
    for _ in 0..5_000 {
        sets.push(p.descriptor_set(0).unwrap());
    }
    // The last set works for a real dispatch.
    let buf = device.storage_buffer::<f32>("x", 8).unwrap();
    let set = sets.last_mut().unwrap();
    for b in 0..3 {
        set.write_buffer(b, &buf).unwrap();
    }
    let set = &*set;
    device.execute(|r| add::dispatch(r, &p, set, 8)).unwrap();
    assert_clean(&device);
}

#[test]
fn buffer_range_beyond_device_limit_is_an_error() {
    // NVIDIA's maxStorageBufferRange (4 GiB - 1) is above its maxMemoryAllocationSize
    // (0xffe00000): the buffer needs the documented opt-in (else KILN-E162).
    let device =
        common::device_with_desc(kiln::DeviceDesc::default().allocations_beyond_limit(true));
    let p = vector_add(&device);
    let limit = device.limits().max_storage_buffer_range as u64;
    // lavapipe: 128 MiB; NVIDIA: 4 GiB - 1 (a 4 GiB buffer bound whole is the classic case).
    let big = device
        .buffer(
            &kiln::BufferDesc::default()
                .label("too big")
                .size(limit + 4)
                .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
                .location(kiln::MemoryLocation::GpuOnly),
        )
        .unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    let err = set.write_buffer(0, &big).unwrap_err();
    assert_eq!(err.code(), "KILN-E206", "{err}");
    assert!(err.to_string().contains("maxStorageBufferRange"));
    assert!(err.to_string().contains("device address"), "{err}");
    // A sub-range within the limit is fine.
    set.write_buffer_range(0, 0, None, &big, 0, limit).unwrap();
    // A misaligned offset is refused.
    let align = device.limits().min_storage_buffer_offset_alignment;
    if align > 1 {
        let err = set.write_buffer_range(0, 0, None, &big, 1, 64).unwrap_err();
        assert_eq!(err.code(), "KILN-E208");
    }
    assert_clean(&device);
}

/// A freed set's slot (handle, descriptor list) goes back to its layout's pools reset to a
/// new set's entries, and the next set of the layout takes it: that set refers to nothing
/// of the old one (E207 until every binding is written again), the layout's immutable
/// samplers still fill their binding, and the binding names are the new set's own (a set
/// made from the layout alone has none, KILN-E201; one made from the pipeline has its
/// pipeline's).
#[test]
fn a_reused_slot_starts_as_a_new_set_with_its_own_names() {
    let device = device();
    let s = scene::Scene::new(&device, scene::COLOR_FORMAT).unwrap();
    // Immutable samplers: the recycled list keeps binding 1 filled.
    let fs = kiln::include_spirv!("scene/chair.frag").unwrap();
    let desc = PipelineLayoutDesc::from_stages(&[(&fs, "main")])
        .unwrap()
        .with_immutable_sampler(1, 1, SamplerDesc::default())
        .unwrap();
    let layout = device.pipeline_layout(&desc).unwrap();
    let fixed = &layout.set_layouts()[1];
    let mut a = device.descriptor_set(fixed, 1).unwrap();
    a.write_image(0, &s.texture).unwrap();
    a.write_buffer(2, &s.gloss).unwrap();
    assert_eq!(a.first_unwritten(), None);
    let old = a.raw();
    drop(a);
    let mut b = device.descriptor_set(fixed, 1).unwrap();
    assert_eq!(b.raw(), old, "the freed set's slot is taken again");
    assert!(b.image_at(0, 0).is_none() && b.buffer_at(2, 0).is_none());
    assert_eq!(b.first_unwritten(), Some(0));
    b.write_image(0, &s.texture).unwrap();
    assert_eq!(
        b.first_unwritten(),
        Some(2),
        "binding 1 is filled by the layout"
    );
    b.write_buffer(2, &s.gloss).unwrap();
    assert_eq!(b.first_unwritten(), None);
    assert_eq!(
        b.buffer_at(2, 0).map(|(_, o, n)| (o, n)),
        Some((0, s.gloss.size()))
    );
    drop(b);

    // Names: per set, not per slot.
    let named = s.chair.descriptor_set(1).unwrap();
    let albedo = named.binding_of("albedo").unwrap();
    let old = named.raw();
    drop(named);
    let plain = device
        .descriptor_set(&s.chair.layout().set_layouts()[1], 1)
        .unwrap();
    assert_eq!(plain.raw(), old);
    let e = plain.binding_of("albedo").unwrap_err();
    assert_eq!(e.code(), "KILN-E201", "{e}");
    drop(plain);
    let again = s.chair.descriptor_set(1).unwrap();
    assert_eq!(again.raw(), old);
    assert_eq!(again.binding_of("albedo").unwrap(), albedo);
    drop(again);
    assert_clean(&device);
}

/// Review of the recycled slot and the dispatch hint table: a set that takes a freed set's
/// slot (same handle) in a later recording is tracked by its own buffers. In that
/// recording a set writes `mid`, the recycled one reads `mid` (a hazard: the automatic
/// barrier must be recorded, sync validation says so) and writes `out`, twice each (the
/// second dispatch of each pair takes the hint table); the values are exact.
#[test]
fn a_recycled_set_in_a_later_recording_gets_the_barriers_of_its_own_buffers() {
    let device = device();
    let p = vector_add(&device);
    let n = 64;
    let (one, two) = (input(&device, 1.0, n), input(&device, 2.0, n));
    let (mid, out) = (
        device.storage_buffer::<f32>("mid", n).unwrap(),
        device.storage_buffer::<f32>("out", n).unwrap(),
    );
    let junk = device.storage_buffer::<f32>("junk", n).unwrap();
    let mut a = p.descriptor_set(0).unwrap();
    a.write_buffers(&[(0, &two), (1, &two), (2, &junk)])
        .unwrap();
    device
        .execute(|r| {
            add::dispatch(r, &p, &a, n as u32)?;
            add::dispatch(r, &p, &a, n as u32)
        })
        .unwrap();
    let mut recycled = next_in_freed_slot(&p, a);
    recycled
        .write_buffers(&[(0, &mid), (1, &mid), (2, &out)])
        .unwrap();
    let mut writer = p.descriptor_set(0).unwrap();
    writer
        .write_buffers(&[(0, &one), (1, &two), (2, &mid)])
        .unwrap();
    device
        .execute(|r| {
            for _ in 0..2 {
                add::dispatch(r, &p, &writer, n as u32)?;
                add::dispatch(r, &p, &recycled, n as u32)?;
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(mid.read::<f32>().unwrap(), vec![3.0; n]);
    assert_eq!(out.read::<f32>().unwrap(), vec![6.0; n]);
    assert_eq!(junk.read::<f32>().unwrap(), vec![4.0; n]);
    assert_clean(&device);
}

/// Review of `write_buffers`' planned path on recycled slots: the template path (every
/// binding, in order) and the write path with one binding twice each count a binding once;
/// a call whose second write has no plan (no such binding) writes nothing, not even its
/// first write, and the set stays unwritten.
#[test]
fn planned_buffer_writes_on_recycled_slots_count_each_binding_once() {
    let device = device();
    let p = vector_add(&device);
    let n = 8;
    let (one, two) = (input(&device, 1.0, n), input(&device, 2.0, n));
    let out = device.storage_buffer::<f32>("out", n).unwrap();
    let mut a = p.descriptor_set(0).unwrap();
    a.write_buffers(&[(0, &one), (1, &one), (2, &out)]).unwrap();
    assert_eq!(a.first_unwritten(), None);
    let mut b = next_in_freed_slot(&p, a);
    let err = b.write_buffers(&[(0, &one), (9, &two)]).unwrap_err();
    assert_eq!(err.code(), "KILN-E200", "{err}");
    assert_eq!(
        b.first_unwritten(),
        Some(0),
        "nothing of a failed call is written"
    );
    assert!(b.buffer_at(0, 0).is_none());
    b.write_buffers(&[(0, &one), (0, &two), (1, &two)]).unwrap();
    assert_eq!(
        b.first_unwritten(),
        Some(2),
        "binding 0 written twice counts once"
    );
    assert_eq!(
        b.buffer_at(0, 0).map(|(buf, ..)| buf.raw()),
        Some(two.raw())
    );
    b.write_buffers(&[(2, &out), (2, &out)]).unwrap();
    assert_eq!(b.first_unwritten(), None);
    device
        .execute(|r| add::dispatch(r, &p, &b, n as u32))
        .unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![4.0; n]);
    let mut c = next_in_freed_slot(&p, b);
    assert_eq!(c.first_unwritten(), Some(0));
    // In layout order, every binding: the update template.
    c.write_buffers(&[(0, &two), (1, &two), (2, &out)]).unwrap();
    assert_eq!(c.first_unwritten(), None);
    c.write_buffers(&[(0, &one), (1, &one), (2, &out)]).unwrap();
    assert_eq!(c.first_unwritten(), None);
    device
        .execute(|r| add::dispatch(r, &p, &c, n as u32))
        .unwrap();
    assert_eq!(out.read::<f32>().unwrap(), vec![2.0; n]);
    assert_clean(&device);
}

/// Review of the dispatch hint table with pipelines re-bound: one set dispatched
/// alternately by two pipelines that share its layout (other reflected access objects:
/// two (set, access) pairs) and a second set, each dispatch reading and writing `data`
/// through the automatic barriers alone (sync validation flags a missing one); after the
/// first round every dispatch takes its compiled pair through the hints. Values exact.
#[test]
fn one_set_dispatched_by_two_pipelines_in_turn_gets_every_barrier() {
    let device = device();
    let comp = |m: &kiln::ShaderModule| device.compute_pipeline(m, "main").unwrap();
    let pa = comp(&kiln::include_spirv!("test/scale_order_a.comp").unwrap());
    let pb = comp(&kiln::include_spirv!("test/scale_order_b.comp").unwrap());
    let n = 100;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (buf, other) = (
        add::storage(&device, "data", &data),
        add::storage(&device, "other", &data),
    );
    let uniform = |v: f32| {
        device
            .buffer_from_slice("u", vk::BufferUsageFlags::UNIFORM_BUFFER, &[v])
            .unwrap()
    };
    let (two, one) = (uniform(2.0), uniform(1.0));
    let mut set = pa.descriptor_set(0).unwrap();
    set.write_buffers(&[(0, &two), (1, &buf)]).unwrap();
    let mut second = pb.descriptor_set(0).unwrap();
    second.write_buffers(&[(0, &one), (1, &other)]).unwrap();
    device
        .execute(|r| {
            for _ in 0..3 {
                for p in [&pa, &pb] {
                    r.bind_pipeline(p)?;
                    r.bind_set(0, &set)?;
                    r.dispatch_threads(n as u32)?;
                    r.bind_set(0, &second)?;
                    r.dispatch_threads(n as u32)?;
                }
            }
            Ok(())
        })
        .unwrap();
    // Per round: a scales by the uniform, b adds it.
    let run = |mut v: f32, u: f32| {
        for _ in 0..3 {
            v = v * u + u;
        }
        v
    };
    let (got, got_other) = (buf.read::<f32>().unwrap(), other.read::<f32>().unwrap());
    for i in 0..n {
        assert_eq!(got[i], run(i as f32, 2.0), "data[{i}]");
        assert_eq!(got_other[i], run(i as f32, 1.0), "other[{i}]");
    }
    assert_clean(&device);
}
