//! A newcomer's first hour (issue 16): the messages and API corners a new user hits first.
//! Binding names (instance and block names, `KILN-E201` listing them), host structs
//! checked by member name and type (`KILN-E062`, `KILN-E063`), push constants pushed in
//! part (`KILN-E265`) or not at all (`KILN-E255`, ranges printed readably), the
//! stage-only `KILN-E204` naming the call that fixes it (and that call working),
//! `storage_buffer_with`, and the `Default`/`new` starting points of the descriptions.

use common::{add, assert_clean, code, device};
use kiln::reflect::{MemberType, ScalarType};
use kiln::{vk, BufferDesc, ComputePipelineDesc, ImageDesc, PipelineLayoutDesc, Visibility};

const F32: ScalarType = ScalarType::Float { width: 32 };
const U32: ScalarType = ScalarType::Int {
    width: 32,
    signed: false,
};

/// `uniform Scene { mat4 view_proj; vec4 light; } scene;`: 80 bytes, light.w at byte 76.
fn scene_bytes(light_w: f32) -> Vec<f32> {
    let mut v = vec![0.0f32; 20];
    v[19] = light_w;
    v
}

#[test]
fn write_named_takes_instance_and_block_names_and_e201_lists_them() {
    let device = device();
    let m = kiln::include_spirv!("test/scene_cull.comp").unwrap();
    let b = &m.reflection().entry_point("main").unwrap().bindings[0];
    assert_eq!(b.name.as_deref(), Some("scene"));
    assert_eq!(b.block_name.as_deref(), Some("Scene"));
    let p = device.compute_pipeline(&m, "main").unwrap();
    let ubo = device
        .storage_buffer_with::<f32>("scene", 20, vk::BufferUsageFlags::UNIFORM_BUFFER)
        .unwrap();
    ubo.upload(&scene_bytes(7.0)).unwrap();
    let visible = device.storage_buffer::<u32>("visible", 64).unwrap();

    let mut scene = p.descriptor_set(0).unwrap();
    let err = scene.write_named("Scne", &ubo).unwrap_err();
    assert_eq!(err.code(), "KILN-E201");
    let msg = err.to_string();
    assert!(
        msg.contains("`Scene` (binding 0)") && msg.contains("`scene` (binding 0)"),
        "{msg}"
    );
    // The block name, as the user wrote it in the issue, and the instance name both work.
    scene.write_named("Scene", &ubo).unwrap();
    assert_eq!(scene.binding_of("scene").unwrap(), 0);
    let mut out = p.descriptor_set(1).unwrap();
    // An unnamed instance: the block name is the name.
    out.write_named("Visible", &visible).unwrap();
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &scene)?;
            r.bind_set(1, &out)?;
            Ok(r.dispatch_threads(64)?)
        })
        .unwrap();
    assert_eq!(visible.read::<u32>().unwrap(), vec![7u32; 64]);
    assert_clean(&device);
}

#[repr(C)]
#[derive(Clone, Copy, kiln::bytemuck::Pod, kiln::bytemuck::Zeroable)]
struct SaxpyParams {
    a: f32,
    n: u32,
}
kiln::host_layout!(SaxpyParams { a, n });

/// The case: two same-sized members in the wrong order.
#[repr(C)]
#[derive(Clone, Copy)]
struct Swapped {
    n: u32,
    a: f32,
}
kiln::host_layout!(Swapped { n, a });

/// Right names, wrong type: `a` is a float in the shader.
#[repr(C)]
#[derive(Clone, Copy)]
struct WrongType {
    a: u32,
    n: u32,
}
kiln::host_layout!(WrongType { a, n });

#[test]
fn push_constant_structs_are_checked_by_member_name_and_type() {
    let m = kiln::include_spirv!("saxpy.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let block = ep.push_constants.as_ref().unwrap().block.as_ref().unwrap();
    let types: Vec<&MemberType> = block.members.iter().map(|m| &m.ty).collect();
    assert_eq!(types, [&MemberType::Scalar(F32), &MemberType::Scalar(U32)]);

    ep.check_push_constants::<SaxpyParams>().unwrap();
    let err = ep.check_push_constants::<Swapped>().unwrap_err();
    assert_eq!(err.code(), "KILN-E062", "{err}");
    match &kiln::Error::from(err) {
        kiln::Error::HostMemberName {
            index,
            host,
            shader,
            ..
        } => assert_eq!((*index, host.as_str(), shader.as_str()), (0, "n", "a")),
        e => panic!("unexpected {e:?}"),
    }
    let err = ep.check_push_constants::<WrongType>().unwrap_err();
    assert_eq!(err.code(), "KILN-E063", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("`a` is uint on the host but float"), "{msg}");
}

#[test]
fn reflected_member_types_carry_vec3_and_matrix_strides() {
    let m = kiln::include_spirv!("test/padding.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let padded = ep.bindings[0].block.as_ref().unwrap();
    let got: Vec<(u32, String)> = padded
        .members
        .iter()
        .map(|m| (m.offset, m.ty.glsl_name()))
        .collect();
    assert_eq!(
        got,
        [
            (0, "float".to_string()),
            (16, "vec3".into()),
            (28, "float".into())
        ]
    );
    let m = kiln::include_spirv!("test/scene_cull.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let scene = ep.bindings[0].block.as_ref().unwrap();
    assert_eq!(
        scene.members[0].ty,
        MemberType::Matrix {
            component: F32,
            columns: 4,
            rows: 4,
            stride: 16,
            row_major: false,
        }
    );
    assert_eq!(scene.members[0].ty.scalars(), Some((F32, 16)));
    let visible = ep.bindings[1].block.as_ref().unwrap();
    assert_eq!(
        visible.members[0].ty,
        MemberType::RuntimeArray {
            element: Box::new(MemberType::Scalar(U32)),
            stride: 4,
        }
    );
}

#[test]
fn a_partial_push_is_e265_and_nothing_pushed_is_a_readable_e255() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("saxpy.comp").unwrap(), "main")
        .unwrap();
    let n = 100usize;
    let x = add::storage(&device, "x", &vec![2.0f32; n]);
    let y = add::storage(&device, "y", &vec![1.0f32; n]);
    let mut set = p.descriptor_set(0).unwrap();
    set.write_buffer(0, &x).unwrap();
    set.write_buffer(1, &y).unwrap();

    // 4 of the 8 bytes: `n` would be garbage.
    let err = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &3.0f32)?;
            Ok(r.dispatch_threads(n as u32)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E265", "{err}");
    let msg = err.to_string();
    assert!(msg.contains("bytes [4, 8)"), "{msg}");
    assert!(msg.contains("COMPUTE bytes [0, 8)"), "{msg}");

    let err = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            Ok(r.dispatch_threads(n as u32)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E255");
    let msg = err.to_string();
    assert!(msg.contains("ranges COMPUTE bytes [0, 8)"), "{msg}");
    assert!(!msg.contains("PushConstantRange"), "{msg}");

    // The two halves in two pushes cover the range: y = 3 * 2 + 1 for the first 60.
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &3.0f32)?;
            r.push(4, &60u32)?;
            Ok(r.dispatch_threads(n as u32)?)
        })
        .unwrap();
    let got: Vec<f32> = y.read().unwrap();
    assert!(got[..60].iter().all(|v| *v == 7.0), "{got:?}");
    assert!(got[60..].iter().all(|v| *v == 1.0), "{got:?}");
    // The whole struct in one push.
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(
                0,
                &SaxpyParams {
                    a: 1.0,
                    n: n as u32,
                },
            )?;
            Ok(r.dispatch_threads(n as u32)?)
        })
        .unwrap();
    let got: Vec<f32> = y.read().unwrap();
    assert_eq!(got[0], 9.0);
    assert_eq!(got[99], 3.0);
    assert_clean(&device);
}

#[test]
fn a_stage_only_e204_names_the_call_and_that_call_shares_the_set() {
    let device = device();
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let exact = add::vector_add(&device);
    let both = vk::ShaderStageFlags::COMPUTE | vk::ShaderStageFlags::VERTEX;
    let wide = PipelineLayoutDesc::from_stages(&[(&m, "main")])
        .unwrap()
        .with_visibility(0, Visibility::Stages(both));
    let wide_pipeline = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").layout(Some(&wide)))
        .unwrap();
    let data = [1.0f32, 2.0, 3.0];
    let (a, b) = (
        add::storage(&device, "a", &data),
        add::storage(&device, "b", &data),
    );
    let c = device.storage_buffer::<f32>("c", 3).unwrap();
    let exact_set = add::set(&exact, &a, &b, &c);
    let err = device
        .execute(|r| add::dispatch(r, &wide_pipeline, &exact_set, 3))
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E204");
    let msg = err.to_string();
    assert!(msg.contains("only stage flags differ"), "{msg}");
    assert!(
        msg.contains(
            "with_visibility(0, Visibility::Stages(vk::ShaderStageFlags::VERTEX | \
             vk::ShaderStageFlags::COMPUTE))"
        ),
        "{msg}"
    );
    assert!(msg.contains("compute_pipeline_with"), "{msg}");
    // Following the hint: the other pipeline gets the same widened layout, and the set
    // made for the wide pipeline binds to it.
    let second = device
        .compute_pipeline_with(&ComputePipelineDesc::new(&m, "main").layout(Some(&wide)))
        .unwrap();
    let wide_set = add::set(&wide_pipeline, &a, &b, &c);
    device
        .execute(|r| add::dispatch(r, &second, &wide_set, 3))
        .unwrap();
    assert_eq!(c.read::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    assert_clean(&device);
}

#[test]
fn storage_buffer_with_adds_usage_and_descriptions_have_starting_points() {
    let device = device();
    let plain = device.storage_buffer::<f32>("plain", 20).unwrap();
    let both = device
        .storage_buffer_with::<f32>("both", 20, vk::BufferUsageFlags::UNIFORM_BUFFER)
        .unwrap();
    assert!(both
        .usage()
        .contains(vk::BufferUsageFlags::STORAGE_BUFFER | vk::BufferUsageFlags::UNIFORM_BUFFER));
    assert!(!plain.usage().contains(vk::BufferUsageFlags::UNIFORM_BUFFER));
    assert_eq!(both.read::<f32>().unwrap(), vec![0.0; 20]);
    let p = device
        .compute_pipeline(
            &kiln::include_spirv!("test/scene_cull.comp").unwrap(),
            "main",
        )
        .unwrap();
    let mut set = p.descriptor_set(0).unwrap();
    assert_ne!(code(set.write_buffer(0, &plain)), "ok");
    set.write_buffer(0, &both).unwrap();

    let buf = device
        .buffer(&BufferDesc::default().label("from-default").size(256))
        .unwrap();
    assert_eq!(buf.size(), 256);
    assert!(buf.usage().contains(vk::BufferUsageFlags::STORAGE_BUFFER));
    let img = device
        .image(
            &ImageDesc::default()
                .label("from-default")
                .width(8)
                .height(4),
        )
        .unwrap();
    assert_eq!(
        (img.width(), img.height(), img.format(), img.mip_levels()),
        (8, 4, vk::Format::R8G8B8A8_UNORM, 1)
    );
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let desc = ComputePipelineDesc::new(&m, "main");
    assert_eq!(
        (desc.entry, desc.spec.len(), desc.layout.is_none()),
        ("main", 0, true)
    );
    assert_clean(&device);
}
#[repr(C)]
#[derive(Clone, Copy)]
struct Inner {
    x: f32,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct WithNested {
    inner: Inner,
    v: [f32; 3],
}
kiln::host_layout!(WithNested { inner, v });

/// A field type without `HostType` (a nested struct) is compared by offset and size only;
/// the others carry their scalars.
#[test]
fn host_layout_knows_the_scalars_of_primitive_fields_only() {
    use kiln::HostLayout;
    let m = WithNested::host_members();
    assert_eq!(m[0].scalars, None);
    assert_eq!(m[1].scalars, Some((F32, 3)));
    assert_eq!(m[1].offset, 4);
    let m = WrongType::host_members();
    assert_eq!(m[0].scalars, Some((U32, 1)));
}
