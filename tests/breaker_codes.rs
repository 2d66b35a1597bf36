//! Breaker: error paths no other test reaches return their documented code, and the
//! device keeps working afterwards.

use common::{assert_clean, device};
use kiln::{vk, ShaderModule};

fn code<T>(r: kiln::Result<T>) -> &'static str {
    match r {
        Ok(_) => "ok",
        Err(e) => e.code(),
    }
}

fn vector_add_words() -> Vec<u32> {
    kiln::include_spirv!("vector_add.comp")
        .unwrap()
        .words()
        .to_vec()
}

#[test]
fn spirv_id_bound_and_set_number_errors() {
    // Bound 2: every id the module uses is out of bound.
    let mut w = vector_add_words();
    w[3] = 2;
    assert_eq!(code(ShaderModule::from_spirv(&w)), "KILN-E009");
    // DescriptorSet 64 on every decorated variable: the module reflects, the layout is refused.
    let mut w = vector_add_words();
    let mut i = 5;
    let mut patched = 0;
    while i < w.len() {
        let (count, op) = ((w[i] >> 16) as usize, w[i] & 0xffff);
        // OpDecorate %id DescriptorSet n
        if op == 71 && count == 4 && w[i + 2] == 34 {
            w[i + 3] = 64;
            patched += 1;
        }
        i += count.max(1);
    }
    assert_eq!(patched, 3);
    let m = ShaderModule::from_spirv(&w).unwrap();
    let e = kiln::PipelineLayoutDesc::from_stages(&[(&m, "main")]).unwrap_err();
    assert_eq!(e.code(), "KILN-E052");
    assert_eq!(
        code(ShaderModule::from_file("/nonexistent/kiln/x.spv")),
        "KILN-E010"
    );
}

#[test]
fn recording_and_set_errors() {
    let device = device();
    let m = kiln::include_spirv!("vector_add.comp").unwrap();
    let p = device.compute_pipeline(&m, "main").unwrap();
    let vert = kiln::include_spirv!("test/scene.vert").unwrap();
    assert_eq!(code(device.compute_pipeline(&vert, "main")), "KILN-E251");
    assert_eq!(code(device.compute_pipeline(&m, "nope")), "KILN-E050");
    assert_eq!(code(p.new_set(1)), "KILN-E205");

    let a = device
        .buffer_from_slice("a", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 3])
        .unwrap();
    assert_eq!(code(a.read::<u64>(&device)), "KILN-E153");
    let mut set = p.new_set(0).unwrap();
    assert_eq!(code(set.write_named("no_such_name", &a)), "KILN-E201");
    assert_eq!(code(set.write_buffer(7, &a)), "KILN-E200");
    assert_eq!(code(set.write_buffer_at(0, 1, &a)), "KILN-E203");
    assert_eq!(
        code(set.write_buffer_range(0, 0, None, &a, 0, 0)),
        "KILN-E151"
    );
    assert_eq!(
        code(set.write_buffer_range(0, 0, None, &a, 8, 8)),
        "KILN-E151"
    );

    assert_eq!(code(device.execute(|r| r.dispatch(1, 1, 1))), "KILN-E252");
    assert_eq!(code(device.execute(|r| r.bind_set(0, &set))), "KILN-E252");
    assert_eq!(code(device.execute(|r| r.push(0, &1u32))), "KILN-E252");
    let r = device.execute(|r| {
        r.bind_pipeline(&p);
        r.bind_set(0, &set)
    });
    assert_eq!(code(r), "KILN-E207");
    for b in 0..3 {
        set.write_buffer(b, &a).unwrap();
    }
    let r = device.execute(|r| {
        r.bind_pipeline(&p);
        r.bind_set(3, &set)
    });
    assert_eq!(code(r), "KILN-E205");
    let r = device.execute(|r| {
        r.bind_pipeline(&p);
        r.bind_set(0, &set)?;
        r.dispatch(u32::MAX, 1, 1)
    });
    assert_eq!(code(r), "KILN-E253");
    // The device still works after every refused recording.
    device
        .execute(|r| {
            r.bind_pipeline(&p);
            r.bind_set(0, &set)?;
            r.dispatch_threads(3)
        })
        .unwrap();
    assert_eq!(a.read::<f32>(&device).unwrap(), vec![2.0; 3]);
    assert_clean(&device);
}

/// Was: SIGSEGV in the driver from safe code (bind a pipeline, dispatch without binding
/// its set). Now `KILN-E254`; also after a pipeline with an incompatible layout disturbed
/// the set, and `KILN-E255` for push constants never pushed.
#[test]
fn dispatch_checks_sets_and_push_constants_are_bound() {
    let device = device();
    let va = device
        .compute_pipeline(&kiln::include_spirv!("vector_add.comp").unwrap(), "main")
        .unwrap();
    let saxpy = device
        .compute_pipeline(&kiln::include_spirv!("saxpy.comp").unwrap(), "main")
        .unwrap();
    let r = device.execute(|r| {
        r.bind_pipeline(&va);
        r.dispatch(1, 1, 1)
    });
    assert_eq!(code(r), "KILN-E254");

    let x = device
        .buffer_from_slice("x", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 4])
        .unwrap();
    let y = device
        .buffer_from_slice("y", vk::BufferUsageFlags::STORAGE_BUFFER, &[1.0f32; 4])
        .unwrap();
    let mut va_set = va.new_set(0).unwrap();
    for b in 0..3 {
        va_set.write_buffer(b, &x).unwrap();
    }
    let mut sx_set = saxpy.new_set(0).unwrap();
    sx_set.write_buffer(0, &x).unwrap();
    sx_set.write_buffer(1, &y).unwrap();
    // saxpy's set bound, then vector_add (different set 0 layout and no push constants)
    // disturbs it: binding saxpy again needs its set again.
    let r = device.execute(|r| {
        r.bind_pipeline(&saxpy);
        r.bind_set(0, &sx_set)?;
        r.push(0, &[2.0f32.to_bits(), 4])?;
        r.bind_pipeline(&va);
        r.bind_set(0, &va_set)?;
        r.bind_pipeline(&saxpy);
        r.dispatch(1, 1, 1)
    });
    assert_eq!(code(r), "KILN-E254");
    let r = device.execute(|r| {
        r.bind_pipeline(&saxpy);
        r.bind_set(0, &sx_set)?;
        r.dispatch(1, 1, 1)
    });
    assert_eq!(code(r), "KILN-E255");
    // The complete sequence works: y = 2 * 1 + 1.
    device
        .execute(|r| {
            r.bind_pipeline(&va);
            r.bind_set(0, &va_set)?;
            r.bind_pipeline(&saxpy);
            r.bind_set(0, &sx_set)?;
            r.push(0, &[2.0f32.to_bits(), 4])?;
            r.dispatch(1, 1, 1)
        })
        .unwrap();
    assert_eq!(y.read::<f32>(&device).unwrap(), vec![3.0; 4]);
    assert_clean(&device);
}

/// Was: a capability of an extension kiln does not enable (AtomicFloat32AddEXT) passed the
/// capability check, and the pipeline was created with VUID-VkShaderModuleCreateInfo-pCode-01091
/// / -04147. Now `KILN-E107` naming the capability, before the driver sees the shader.
#[test]
fn extension_capabilities_kiln_does_not_enable_are_e107() {
    let device = device();
    let m = kiln::include_spirv!("test/atomic_float.comp").unwrap();
    assert!(m
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "AtomicFloat32AddEXT"));
    let e = device.compute_pipeline(&m, "main").unwrap_err();
    assert_eq!(e.code(), "KILN-E107");
    assert!(e.to_string().contains("AtomicFloat32AddEXT"), "{e}");
    assert_clean(&device);
}
