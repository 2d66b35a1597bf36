//! Typed bindings generated at build time (kiln-build feature `bindings`, `tests/build.rs`):
//! the generated structs sit at the reflected offsets for std140, std430 and scalar blocks
//! with the vec3 traps, pass `check_block` / `check_push_constants`, and carry real values
//! through a dispatch; pushing one is checked against the bound pipeline's range
//! (`KILN-E266`).

use std::mem::offset_of;

use common::{assert_clean, device};
use kiln::reflect::BlockLayout;
use kiln::{vk, ShaderBlock};

mod shaders {
    kiln::include_bindings!();
}
use shaders::test_typed_blocks_comp as tb;
use shaders::test_typed_scalar_comp as ts;

/// The reflected offsets of `layout`'s members, by name.
fn offsets(layout: &BlockLayout) -> Vec<(String, u32)> {
    layout
        .members
        .iter()
        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
        .collect()
}

fn block(ep: &kiln::reflect::EntryPoint, binding: u32) -> &BlockLayout {
    ep.bindings
        .iter()
        .find(|b| b.binding == binding)
        .and_then(|b| b.block.as_ref())
        .unwrap()
}

#[test]
fn generated_std140_std430_and_push_structs_sit_at_the_reflected_offsets() {
    let m = kiln::include_spirv!("test/typed_blocks.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    // std140: the vec3 after a float at 16, mat3 columns of 16, float[3] with stride 16.
    assert_eq!(
        offsets(block(ep, 0)),
        [
            ("exposure".to_string(), 0),
            ("tint".into(), 16),
            ("gamma".into(), 28),
            ("basis".into(), 32),
            ("weights".into(), 80),
            ("light".into(), 128),
            ("count".into(), 144),
        ]
    );
    let host = [
        offset_of!(tb::Scene, exposure),
        offset_of!(tb::Scene, tint),
        offset_of!(tb::Scene, gamma),
        offset_of!(tb::Scene, basis),
        offset_of!(tb::Scene, weights),
        offset_of!(tb::Scene, light),
        offset_of!(tb::Scene, count),
    ];
    assert_eq!(host, [0, 16, 28, 32, 80, 128, 144]);
    assert_eq!(std::mem::size_of::<tb::Scene>(), 148);
    assert_eq!(std::mem::size_of::<[[f32; 4]; 3]>(), 48);
    let _: [[f32; 4]; 3] = tb::Scene::default().basis;
    assert_eq!(std::mem::size_of::<tb::SceneWeightsElem>(), 16);
    ep.check_block::<tb::Scene>(0, 0).unwrap();

    // std430: the vec3 then a float in its 4th slot, float[2] with stride 4, runtime
    // array of Light (stride 16) left out of the struct.
    assert_eq!(
        offsets(block(ep, 1)),
        [
            ("origin".to_string(), 0),
            ("scale".into(), 12),
            ("extent".into(), 16),
            ("mass".into(), 24),
            ("lights".into(), 32),
        ]
    );
    let host = [
        offset_of!(tb::Particles, origin),
        offset_of!(tb::Particles, scale),
        offset_of!(tb::Particles, extent),
        offset_of!(tb::Particles, mass),
    ];
    assert_eq!(host, [0, 12, 16, 24]);
    assert_eq!(std::mem::size_of::<tb::Particles>(), 32);
    assert_eq!(std::mem::size_of::<tb::ParticlesElement>(), 16);
    ep.check_block::<tb::Particles>(0, 1).unwrap();
    ep.check_array_element::<tb::ParticlesElement>(0, 1)
        .unwrap();

    let pc = ep.push_constants.as_ref().unwrap();
    assert_eq!((pc.offset, pc.size), (0, 20));
    assert_eq!((tb::Push::OFFSET, tb::Push::SIZE), (0, 20));
    assert_eq!(offset_of!(tb::Push, factor), 12);
    assert_eq!(offset_of!(tb::Push, index), 16);
    ep.check_push_constants::<tb::Push>().unwrap();

    assert_eq!((tb::SCENE_SET, tb::SCENE_BINDING), (0, 0));
    assert_eq!((tb::PARTICLES_SET, tb::PARTICLES_BINDING), (0, 1));
}

#[test]
fn generated_scalar_structs_sit_at_the_reflected_offsets() {
    let m = kiln::include_spirv!("test/typed_scalar.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    assert_eq!(
        offsets(block(ep, 0)),
        [
            ("a".to_string(), 0),
            ("v".into(), 4),
            ("b".into(), 16),
            ("w".into(), 20),
            ("d".into(), 48),
        ]
    );
    let host = [
        offset_of!(ts::Packed, a),
        offset_of!(ts::Packed, v),
        offset_of!(ts::Packed, b),
        offset_of!(ts::Packed, w),
        offset_of!(ts::Packed, d),
    ];
    assert_eq!(host, [0, 4, 16, 20, 48]);
    let _: [[f32; 3]; 2] = ts::Packed::default().w;
    assert_eq!(std::mem::size_of::<ts::Packed>(), 56);
    ep.check_block::<ts::Packed>(0, 0).unwrap();
}

#[test]
fn typed_blocks_carry_values_through_a_dispatch_and_a_push_is_range_checked() {
    let device = device();
    let m = kiln::include_spirv!("test/typed_blocks.comp").unwrap();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let mut scene = tb::Scene {
        exposure: 1.5,
        tint: [0.0, 0.0, 2.5],
        gamma: 2.2,
        count: 9,
        ..Default::default()
    };
    scene.basis[2][1] = 7.0;
    scene.weights[2].value = 0.25;
    scene.light = tb::Light {
        dir: [0.0, -1.0, 0.0],
        power: 40.0,
    };
    let ubo = device
        .buffer_from_slice("scene", vk::BufferUsageFlags::UNIFORM_BUFFER, &[scene])
        .unwrap();
    let head = tb::Particles {
        origin: [3.0, 0.0, 0.0],
        scale: 0.5,
        extent: [0.0, 4.0],
        mass: [0.0, 0.125],
    };
    let lights: Vec<tb::ParticlesElement> = (0..4)
        .map(|i| tb::Light {
            dir: [0.0; 3],
            power: 10.0 * i as f32,
        })
        .collect();
    let mut bytes = kiln::bytemuck::bytes_of(&head).to_vec();
    bytes.extend_from_slice(kiln::bytemuck::cast_slice(&lights));
    let ssbo = device
        .buffer_from_slice("particles", vk::BufferUsageFlags::STORAGE_BUFFER, &bytes)
        .unwrap();
    let out = device.storage_buffer::<f32>("out", 12).unwrap();
    let mut set = p.descriptor_set(tb::SCENE_SET).unwrap();
    set.write_buffer(tb::SCENE_BINDING, &ubo).unwrap();
    set.write_buffer(tb::PARTICLES_BINDING, &ssbo).unwrap();
    set.write_buffer(2, &out).unwrap();
    let push = tb::Push {
        offset: [0.0, 0.0, 3.0],
        factor: 2.0,
        index: 3,
    };
    device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push_block(&push)?;
            Ok(r.dispatch(1, 1, 1)?)
        })
        .unwrap();
    assert_eq!(
        out.read::<f32>().unwrap(),
        [1.5, 2.5, 2.2, 7.0, 0.25, -1.0, 40.0, 9.0, 3.5, 4.125, 30.0, 6.0]
    );

    // A block of another shader (saxpy's 8-byte Params is no 20-byte Push) is refused.
    let saxpy = device
        .compute_pipeline(&kiln::include_spirv!("saxpy.comp").unwrap(), "main")
        .unwrap();
    let err = device
        .execute(|r| {
            r.bind_pipeline(&saxpy)?;
            Ok(r.push_block(&push)?)
        })
        .unwrap_err();
    assert_eq!(err.code(), "KILN-E266", "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("bytes [0, 20)") && msg.contains("COMPUTE bytes [0, 8)"),
        "{msg}"
    );
    assert_clean(&device);
}

/// A hand-written push-constant struct of `address_scale.comp` (`u64` addresses, the
/// explicit padding `Pod` demands).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Hand {
    src: u64,
    dst: u64,
    n: u32,
    _pad: u32,
}
kiln::host_layout!(Hand { src, dst, n });

/// A `buffer_reference` member is a `u64` device address, in the generated struct (not a
/// zero-sized field whose 8 bytes `..Default::default()` would leave null) and through
/// `host_layout!` (a `u64` passes, an `f64` is `KILN-E063`).
#[test]
fn buffer_reference_members_are_u64_device_addresses() {
    use kiln::reflect::MemberType;
    use shaders::test_address_scale_comp::P;
    let fields: fn(&P) -> (u64, u64, u32) = |p| (p.src, p.dst, p.n);
    let _ = fields;
    assert_eq!(std::mem::size_of::<P>(), 24);
    assert_eq!(
        (offset_of!(P, src), offset_of!(P, dst), offset_of!(P, n)),
        (0, 8, 16)
    );
    assert_eq!((P::OFFSET, P::SIZE), (0, 20));
    let m = kiln::include_spirv!("test/address_scale.comp").unwrap();
    let ep = m.reflection().entry_point("main").unwrap();
    let block = ep.push_constants.as_ref().unwrap().block.as_ref().unwrap();
    let types: Vec<&MemberType> = block.members.iter().map(|m| &m.ty).collect();
    assert!(
        matches!(
            types[..],
            [
                MemberType::DeviceAddress,
                MemberType::DeviceAddress,
                MemberType::Scalar(_)
            ]
        ),
        "{types:?}"
    );
    assert_eq!(block.members[0].size, 8);
    ep.check_push_constants::<P>().unwrap();
    ep.check_push_constants::<Hand>().unwrap();
    #[repr(C)]
    #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
    struct Wrong {
        src: f64,
        dst: u64,
        n: u32,
        _pad: u32,
    }
    kiln::host_layout!(Wrong { src, dst, n });
    let e = ep.check_push_constants::<Wrong>().unwrap_err();
    assert_eq!(e.code(), "KILN-E063", "{e}");
    assert!(e.to_string().contains("buffer_reference"), "{e}");
}

/// The 20-byte block of two addresses and a count, in its 24-byte struct, goes through
/// `push_block` and `push` (the 4 bytes of alignment rounding left out) and the shader
/// reads and writes through both addresses; all 24 bytes pushed by hand are `KILN-E250`
/// with the hint.
#[test]
fn a_buffer_reference_block_pushes_through_push_block_and_push() {
    use shaders::test_address_scale_comp::P;
    let device = device();
    let m = kiln::include_spirv!("test/address_scale.comp").unwrap();
    let pipeline = device.compute_pipeline(&m, "main").unwrap();
    let n = 100u32;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let data: Vec<u32> = (0..n).map(|i| i * 5 + 1).collect();
    let src = device.buffer_from_slice("src", usage, &data).unwrap();
    let a = src.device_address().unwrap();
    for way in ["push_block", "push"] {
        let dst = device
            .buffer_from_slice("dst", usage, &vec![0u32; n as usize])
            .unwrap();
        let b = dst.device_address().unwrap();
        device
            .execute(|r| {
                r.bind_pipeline(&pipeline)?;
                if way == "push_block" {
                    r.push_block(&P {
                        src: a,
                        dst: b,
                        n,
                        ..Default::default()
                    })?;
                } else {
                    let hand = Hand {
                        src: a,
                        dst: b,
                        n,
                        _pad: 0,
                    };
                    r.push(0, &hand)?;
                }
                Ok(r.dispatch_threads(n)?)
            })
            .unwrap();
        let out: Vec<u32> = dst.read().unwrap();
        let want: Vec<u32> = data.iter().map(|v| v * 2 + 1).collect();
        assert_eq!(out, want, "through {way}");
    }
    let hand = Hand {
        src: a,
        dst: a,
        n: 0,
        _pad: 0,
    };
    let e = device
        .execute(|r| {
            r.bind_pipeline(&pipeline)?;
            Ok(r.push_constants(0, kiln::bytemuck::bytes_of(&hand))?)
        })
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E250", "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("[20, 24) are past the block's end")
            && msg.contains("rounded up to its alignment")
            && msg.contains("bytes_of(&value)[..20]"),
        "{msg}"
    );
    assert_clean(&device);
}
