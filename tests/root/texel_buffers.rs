//! Texel buffers on a real device under validation: buffer views (an offset view included)
//! written to uniform and storage texel buffer bindings, two dispatches chained through a
//! view written by the first and read by the second with no barrier of the test's (the
//! automatic barriers track a view's byte range of its buffer), and the coded errors of
//! views and texel writes Vulkan would reject.

use common::{assert_clean, device};
use kiln::{vk, BufferDesc, MemoryLocation};

const N: usize = 64;
const R32F: vk::Format = vk::Format::R32_SFLOAT;

fn texel_buffer(device: &kiln::Device, label: &str, bytes: u64) -> kiln::Buffer {
    device
        .buffer(
            &BufferDesc::default()
                .label(label)
                .size(bytes)
                .usage(
                    vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER
                        | vk::BufferUsageFlags::STORAGE_TEXEL_BUFFER,
                )
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap()
}

#[test]
fn two_dispatches_chain_through_texel_buffer_views() {
    let device = device();
    let p = device
        .compute_pipeline(
            &kiln::include_spirv!("test/texel_scale.comp").unwrap(),
            "main",
        )
        .unwrap();
    let align = device.limits().min_texel_buffer_offset_alignment.max(4);
    let bytes = (N * 4) as u64;
    // The input starts `align` bytes into its buffer: a view at an offset.
    let a = texel_buffer(&device, "a", align + bytes);
    let mut host = vec![-1.0f32; (align / 4) as usize];
    host.extend((0..N).map(|i| i as f32));
    a.upload(&host).unwrap();
    let (b, c) = (
        texel_buffer(&device, "b", bytes),
        texel_buffer(&device, "c", bytes),
    );
    let view = |buf: &kiln::Buffer, offset| buf.view(R32F, offset, bytes).unwrap();
    let (va, vb, vc) = (view(&a, align), view(&b, 0), view(&c, 0));
    assert_eq!((va.offset(), va.range(), va.format()), (align, bytes, R32F));
    let mut first = p.descriptor_set(0).unwrap();
    first.write_texel_buffer(0, &va).unwrap();
    first.write_texel_buffer(1, &vb).unwrap();
    let mut second = p.descriptor_set(0).unwrap();
    second.write_texel_buffer(0, &vb).unwrap();
    second.write_texel_buffer(1, &vc).unwrap();
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &first)?;
            r.dispatch(1, 1, 1)?;
            r.bind_set(0, &second)?;
            r.dispatch(1, 1, 1)?;
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(
        barriers, 1,
        "the second dispatch reads what the first wrote"
    );
    let got: Vec<f32> = c.read().unwrap();
    let want: Vec<f32> = (0..N).map(|i| 4.0 * i as f32 + 3.0).collect();
    assert_eq!(got, want);
    assert_clean(&device);
}

#[test]
fn buffer_view_and_texel_write_errors_are_coded() {
    let device = device();
    let buf = texel_buffer(&device, "texels", 1024);
    let align = device.limits().min_texel_buffer_offset_alignment;
    let storage_only = device.storage_buffer::<f32>("storage only", 64).unwrap();
    for (what, result, code, text) in [
        (
            "no texel usage",
            storage_only.view(R32F, 0, 64),
            "KILN-E157",
            "UNIFORM_TEXEL_BUFFER",
        ),
        (
            "a depth format",
            buf.view(vk::Format::D32_SFLOAT, 0, 64),
            "KILN-E183",
            "UNIFORM_TEXEL_BUFFER",
        ),
        (
            "past the end",
            buf.view(R32F, 0, 2048),
            "KILN-E167",
            "inside its 1024 bytes",
        ),
        (
            "part of a texel",
            buf.view(R32F, 0, 6),
            "KILN-E167",
            "whole number",
        ),
        ("empty", buf.view(R32F, 0, 0), "KILN-E167", "non-empty"),
    ] {
        let err = result.unwrap_err();
        assert_eq!(err.code(), code, "{what}: {err}");
        assert!(err.to_string().contains(text), "{what}: {err}");
    }
    if align > 1 {
        let err = buf.view(R32F, align / 2, 64).unwrap_err();
        assert_eq!(err.code(), "KILN-E167", "{err}");
        assert!(
            err.to_string().contains("minTexelBufferOffsetAlignment"),
            "{err}"
        );
    }
    let p = device
        .compute_pipeline(
            &kiln::include_spirv!("test/texel_scale.comp").unwrap(),
            "main",
        )
        .unwrap();
    let uniform_only = device
        .buffer(
            &BufferDesc::default()
                .label("uniform texels")
                .size(256)
                .usage(vk::BufferUsageFlags::UNIFORM_TEXEL_BUFFER)
                .location(MemoryLocation::GpuOnly),
        )
        .unwrap();
    let v = uniform_only.view(R32F, 0, 256).unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    set.write_texel_buffer(0, &v).unwrap();
    let err = set.write_texel_buffer(1, &v).unwrap_err();
    assert_eq!(
        err.code(),
        "KILN-E157",
        "a uniform-only view as storage: {err}"
    );
    let err = set.write_texel_buffer(2, &v).unwrap_err();
    assert_eq!(err.code(), "KILN-E200", "no binding 2: {err}");
    let add = common::add::vector_add(&device);
    let mut other = add.descriptor_set(0).unwrap();
    let err = other.write_texel_buffer(0, &v).unwrap_err();
    assert_eq!(err.code(), "KILN-E202", "a storage-buffer binding: {err}");
    // A set with binding 1 unwritten cannot be dispatched.
    let err = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E207", "{err}");
    assert_clean(&device);
}
