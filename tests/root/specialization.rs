//! Issue 30 on a device: real compute shaders whose trouble only pipeline creation can
//! judge. A module declaring a capability newer than kiln's SPIR-V grammar loads and is
//! refused with a coded error naming it; limits that only the specialization constants
//! reveal (array lengths, workgroup size, shared memory, the subgroup size against the
//! workgroup) are coded errors before `vkCreateComputePipelines`, naming the constants and
//! their values, and the validation layer stays silent. The modules are
//! `tests/fixtures/repros/{unknown_capability,spec_array_zero}.comp` (from the issue's
//! reproductions) and `tests/shaders/spec_limits.comp`. On lavapipe and on the H200 the
//! error paths are the same (no device has the invented limits); the H200 also runs the
//! valid specializations on real hardware.

use common::{assert_clean, device, fixtures};
use kiln::{vk, ComputePipelineDesc, SpecValue};

#[test]
fn a_capability_newer_than_the_grammar_loads_and_is_refused_by_number_and_extension() {
    let m = fixtures::module("repros/unknown_capability.comp.spv");
    let r = m.reflection();
    assert_eq!(
        r.capabilities,
        ["Shader", "Float16", "StorageBuffer16BitAccess", "6912"]
    );
    assert_eq!(r.extensions, ["SPV_VALVE_mixed_float_dot_product"]);
    let ep = r.entry_point("main").unwrap();
    let rows: Vec<_> = ep
        .bindings
        .iter()
        .map(|b| {
            let access = b.access();
            (
                b.set,
                b.binding,
                b.descriptor_type,
                access.read,
                access.write,
            )
        })
        .collect();
    let ssbo = vk::DescriptorType::STORAGE_BUFFER;
    assert_eq!(rows, [(0, 0, ssbo, true, false), (0, 1, ssbo, false, true)]);
    assert_eq!(ep.workgroup_size.unwrap().size, [64, 1, 1]);

    let device = device();
    let e = device.compute_pipeline(&m, "main").unwrap_err();
    assert_eq!(e.code(), "KILN-E107", "{e}");
    let msg = e.to_string();
    for part in [
        "6912",
        "SPV_VALVE_mixed_float_dot_product",
        "repros/unknown_capability.comp.spv",
    ] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    println!("unknown capability: {msg}");
    assert_clean(&device);
}

#[test]
fn an_array_length_zero_from_the_default_specialization_is_e064() {
    let device = device();
    let m = fixtures::module("repros/spec_array_zero.comp.spv");
    let e = device.compute_pipeline(&m, "main").unwrap_err();
    assert_eq!(e.code(), "KILN-E064", "{e}");
    let msg = e.to_string();
    println!("default specialization: {msg}");
    for part in [
        "length 0",
        "HSV (constant_id 0) = 32",
        "D_split (constant_id 1) = 16",
    ] {
        assert!(msg.contains(part), "{part}: {msg}");
    }
    // Values that make the array 4 long (64 / 4 / 4): the pipeline runs, and each
    // invocation writes the sum 0 + 1 + 2 + 3 of its array.
    let spec = [(0, SpecValue::U32(64)), (1, SpecValue::U32(4))];
    let p = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").spec(&spec))
        .unwrap();
    let out = device.storage_buffer::<[f32; 4]>("o", 128).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(2, 1, 1)?)
        })
        .unwrap();
    let got: Vec<[f32; 4]> = out.read().unwrap();
    assert!(got.iter().all(|v| *v == [6.0; 4]), "{:?}", &got[..4]);
    // A value that makes it 0 again (HSV 8 / D_split 4 = 2, / 4 = 0): refused.
    let spec = [(0, SpecValue::U32(8)), (1, SpecValue::U32(4))];
    let e = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").spec(&spec))
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E064", "{e}");
    assert!(e.to_string().contains("HSV (constant_id 0) = 8"), "{e}");
    assert_clean(&device);
}

fn spec_limits(
    device: &kiln::Device,
    spec: &[(u32, SpecValue)],
) -> kiln::Result<kiln::ComputePipeline> {
    let m = kiln::include_spirv!("test/spec_limits.comp").unwrap();
    Ok(device.compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").spec(spec))?)
}

#[test]
fn workgroup_size_and_shared_memory_are_checked_as_specialized() {
    let device = device();
    let limits = device.limits();
    let too_wide = limits.max_compute_work_group_size[0] + 1;
    let e = spec_limits(&device, &[(0, SpecValue::U32(too_wide))]).unwrap_err();
    assert_eq!(e.code(), "KILN-E054", "{e}");
    let msg = e.to_string();
    println!("workgroup: {msg}");
    assert!(
        msg.contains(&format!("(constant_id 0) = {too_wide}")),
        "{msg}"
    );

    // Shared memory: one float more than the device has.
    let floats = limits.max_compute_shared_memory_size / 4 + 1;
    let e = spec_limits(&device, &[(1, SpecValue::U32(floats))]).unwrap_err();
    assert_eq!(e.code(), "KILN-E065", "{e}");
    let msg = e.to_string();
    println!("shared memory: {msg}");
    for part in [
        format!("{} bytes", floats * 4),
        format!("FLOATS (constant_id 1) = {floats}"),
        "tile".to_string(),
        format!("has {}", limits.max_compute_shared_memory_size),
    ] {
        assert!(msg.contains(&part), "{part}: {msg}");
    }
    // FLOATS below 256 makes the private array 0 long.
    let e = spec_limits(&device, &[(1, SpecValue::U32(255))]).unwrap_err();
    assert_eq!(e.code(), "KILN-E064", "{e}");
    assert!(
        e.to_string().contains("FLOATS (constant_id 1) = 255"),
        "{e}"
    );

    // Within the limits: exactly the shared memory the device has, and a workgroup of 64
    // whose invocations read their neighbour's element.
    let floats = limits.max_compute_shared_memory_size / 4;
    let spec = [(0, SpecValue::U32(64)), (1, SpecValue::U32(floats))];
    let p = spec_limits(&device, &spec).unwrap();
    assert_eq!(p.workgroup_size(), [64, 1, 1]);
    let out = device.storage_buffer::<f32>("o", 128).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &out).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(2, 1, 1)?)
        })
        .unwrap();
    let got: Vec<f32> = out.read().unwrap();
    let want: Vec<f32> = (0..128).map(|i| ((i % 64 + 1) % 64) as f32).collect();
    assert_eq!(got, want);
    assert_clean(&device);
}

/// The required subgroup size is judged against the workgroup the specialization gives:
/// `KILN-E256` either way on a device without subgroup size control, and on one with it
/// when the specialized workgroup needs more subgroups than the device allows.
#[test]
fn the_required_subgroup_size_is_checked_against_the_specialized_workgroup() {
    let device = device();
    let p = device.compute_properties();
    let size = p.min_subgroup_size.max(1);
    let wide = device.limits().max_compute_work_group_size[0];
    let spec = [(0, SpecValue::U32(wide))];
    let m = kiln::include_spirv!("test/spec_limits.comp").unwrap();
    let desc = ComputePipelineDesc::new(&m, "main")
        .spec(&spec)
        .required_subgroup_size(Some(size));
    let fits = u64::from(wide) <= u64::from(size) * u64::from(p.max_compute_workgroup_subgroups);
    let result = device.compute_pipeline_with(&desc);
    let control = p.subgroup_size_control
        && p.required_subgroup_size_stages
            .contains(vk::ShaderStageFlags::COMPUTE);
    match (control, fits) {
        (true, true) => {
            println!("subgroup size {size} fits a workgroup of {wide}: real path");
            assert!(result.is_ok(), "{result:?}");
        }
        _ => {
            let e = result.unwrap_err();
            println!("subgroup size {size}, workgroup {wide}: {e}");
            assert_eq!(e.code(), "KILN-E256", "{e}");
            if control {
                assert!(e.to_string().contains(&format!("[{wide}, 1, 1]")), "{e}");
            }
        }
    }
    assert_clean(&device);
}

fn draw_pipeline<'a>(
    vs: &'a kiln::ShaderModule,
    fs: &'a kiln::ShaderModule,
    img: &'a kiln::Image,
    spec: &'a [(u32, SpecValue)],
) -> kiln::GraphicsPipelineDesc<'a> {
    let layout = kiln::VertexBufferLayout::packed(&[(0, vk::Format::R32G32_SFLOAT)]);
    kiln::GraphicsPipelineDesc::new(vs, fs)
        .vertex_buffer(layout)
        .targets(&[img], None)
        .spec(spec)
}

/// The same array check for graphics: the specialization is given to every stage, and a
/// fragment stage whose array length it makes 0 or negative is `KILN-E064` naming the
/// constant; with 4 taps the draw fills the target with red 1.0.
#[test]
fn a_graphics_stage_with_an_array_length_below_one_is_e064() {
    use common::draw::{pixel, target};
    use kiln::{ColorAttachment, RenderingDesc};
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/spec_taps.frag").unwrap();
    let img = target(&device, 4, 4);
    for (taps, length) in [(0, "length 0"), (-3, "length -3")] {
        let spec = [(0, SpecValue::I32(taps))];
        let e = device
            .graphics_pipeline(&draw_pipeline(&vs, &fs, &img, &spec))
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E064", "{e}");
        let msg = e.to_string();
        assert!(msg.contains(length), "{msg}");
        assert!(
            msg.contains(&format!("TAPS (constant_id 0) = {taps}")),
            "{msg}"
        );
    }
    let spec = [(0, SpecValue::I32(4))];
    let pipeline = device
        .graphics_pipeline(&draw_pipeline(&vs, &fs, &img, &spec))
        .unwrap();
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("big triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&pipeline)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    for (x, y) in [(0, 0), (3, 3), (1, 2)] {
        assert_eq!(pixel(&data, 4, x, y), [255, 0, 0, 255], "pixel ({x}, {y})");
    }
    assert_clean(&device);
}

/// A descriptor array whose length is a specialization constant: the compute pipeline's
/// reflected layout has the specialized count (the shader indexes the last element), and
/// the dispatch writes the last buffer.
#[test]
fn a_descriptor_count_from_a_specialization_constant_sizes_the_layout() {
    let device = device();
    let m = kiln::include_spirv!("test/spec_buffers.comp").unwrap();
    let reflected = &m.reflection().entry_point("main").unwrap().bindings[0];
    assert_eq!((reflected.count, reflected.count_spec_id), (2, Some(0)));
    for count in [2u32, 3, 5] {
        let spec = [(0, SpecValue::U32(count))];
        let p = device
            .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").spec(&spec))
            .unwrap();
        let binding = p.layout().set_layouts()[0].desc().bindings()[0].clone();
        assert_eq!(binding.count, count);
        let buffers: Vec<kiln::Buffer> = (0..count)
            .map(|i| device.storage_buffer::<u32>(&format!("b{i}"), 16).unwrap())
            .collect();
        let mut set = p.descriptor_set(0).unwrap();
        for (i, b) in buffers.iter().enumerate() {
            set.write_buffer_at(0, i as u32, b).unwrap();
        }
        device
            .execute(|r| {
                r.bind_pipeline(&p)?;
                r.bind_set(0, &set)?;
                Ok(r.dispatch(2, 1, 1)?)
            })
            .unwrap();
        let last: Vec<u32> = buffers[count as usize - 1].read().unwrap();
        let want: Vec<u32> = (0..16).map(|i| i + count).collect();
        assert_eq!(last, want, "{count} buffers");
    }
    assert_clean(&device);
}

/// The same for a graphics pipeline: a fragment stage's descriptor array sized by a
/// specialization constant gets the given count in the reflected layout, and the draw
/// takes its colour from the last buffer (green).
#[test]
fn a_graphics_descriptor_count_from_a_specialization_constant_sizes_the_layout() {
    use common::draw::{pixel, target};
    use kiln::{ColorAttachment, RenderingDesc};
    let device = device();
    let vs = kiln::include_spirv!("test/flat.vert").unwrap();
    let fs = kiln::include_spirv!("test/spec_colors.frag").unwrap();
    let img = target(&device, 4, 4);
    let spec = [(0, SpecValue::U32(3))];
    let pipeline = device
        .graphics_pipeline(&draw_pipeline(&vs, &fs, &img, &spec))
        .unwrap();
    let binding = pipeline.layout().set_layouts()[0].desc().bindings()[0].clone();
    assert_eq!(binding.count, 3);
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let colors = [
        [1.0f32, 0.0, 0.0, 1.0],
        [0.0, 0.0, 1.0, 1.0],
        [0.0, 1.0, 0.0, 1.0],
    ];
    let buffers: Vec<kiln::Buffer> = colors
        .iter()
        .map(|c| device.buffer_from_slice("color", usage, c).unwrap())
        .collect();
    let mut set = pipeline.descriptor_set(0).unwrap();
    for (i, b) in buffers.iter().enumerate() {
        set.write_buffer_at(0, i as u32, b).unwrap();
    }
    let verts: [[f32; 2]; 3] = [[-1.0, -1.0], [3.0, -1.0], [-1.0, 3.0]];
    let vb = device
        .buffer_from_slice("big triangle", vk::BufferUsageFlags::VERTEX_BUFFER, &verts)
        .unwrap();
    device
        .execute(|r| {
            r.begin_rendering(&RenderingDesc::new(&[ColorAttachment::clear(
                &img, [0.0; 4],
            )]))?;
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &set)?;
            r.bind_vertex_buffer(0, &vb, 0)?;
            r.draw(3, 1, 0, 0)?;
            Ok(r.end_rendering()?)
        })
        .unwrap();
    let data = img.read().unwrap();
    for (x, y) in [(0, 0), (3, 3), (2, 1)] {
        assert_eq!(pixel(&data, 4, x, y), [0, 255, 0, 255], "pixel ({x}, {y})");
    }
    assert_clean(&device);
}
