//! SPIR-V capabilities against the device (`device/capabilities.rs`): a module needing
//! what the device lacks is a coded error naming capability, feature and device, before
//! any Vulkan call (so the validation layer stays silent); unknown and OpenCL-only
//! capabilities are errors too.

use common::{assert_clean, device};
use kiln::vk;

#[test]
fn clustered_subgroup_operations_the_device_lacks_are_e107() {
    let device = device();
    let m = kiln::include_spirv!("test/subgroup_clustered.comp").unwrap();
    assert!(m
        .reflection()
        .capabilities
        .iter()
        .any(|c| c == "GroupNonUniformClustered"));
    let ops = device.compute_properties().subgroup_operations;
    // Mesa 22.3's lavapipe (Debian 12) lacks CLUSTERED, Mesa 25's (Debian 13) and the
    // H200 have it: the real path on those, the error path on the former.
    if ops.contains(vk::SubgroupFeatureFlags::CLUSTERED) {
        let p = device.compute_pipeline(&m, "main").unwrap();
        let values: Vec<u32> = (0..64).collect();
        let data = device
            .buffer_from_slice("values", vk::BufferUsageFlags::STORAGE_BUFFER, &values)
            .unwrap();
        let mut set = p.descriptor_set(0).unwrap();
        set.write_buffer(0, &data).unwrap();
        device
            .execute(|r| {
                r.bind_pipeline(&p)?;
                r.bind_set(0, &set)?;
                Ok(r.dispatch(1, 1, 1)?)
            })
            .unwrap();
        // Clusters of 4 consecutive invocations (a subgroup holds whole clusters): each
        // gets its cluster's sum, 4i + 6 for the cluster starting at i.
        let want: Vec<u32> = (0..64u32).map(|i| 4 * (i & !3) + 6).collect();
        assert_eq!(data.read::<u32>().unwrap(), want);
    } else {
        let e = device.compute_pipeline(&m, "main").unwrap_err();
        assert_eq!(e.code(), "KILN-E107", "{e}");
        let msg = e.to_string();
        assert!(msg.contains("GroupNonUniformClustered"), "{msg}");
        assert!(msg.contains("CLUSTERED"), "{msg}");
        assert!(msg.contains("subgroupSupportedOperations"), "{msg}");
        assert!(msg.contains(&device.info().name), "{msg}");
    }
    // Nothing reached the driver: not one validation message.
    assert_clean(&device);
}

#[test]
fn check_capability_answers_from_the_table() {
    let device = device();
    let compute = vk::ShaderStageFlags::COMPUTE;
    device.check_capability("Shader", compute).unwrap();
    device.check_capability("GroupNonUniform", compute).unwrap();
    device
        .check_capability("GroupNonUniformArithmetic", compute)
        .unwrap();
    assert_eq!(
        device
            .check_capability("Kernel", compute)
            .unwrap_err()
            .code(),
        "KILN-E111"
    );
    let e = device
        .check_capability("NotACapability", compute)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E110", "{e}");
    assert!(e.to_string().contains("NotACapability"), "{e}");
    // Extension capabilities kiln does not enable name their extension.
    let e = device
        .check_capability("ShaderClockKHR", compute)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E107", "{e}");
    assert!(e.to_string().contains("VK_KHR_shader_clock"), "{e}");
    // Cooperative matrices: usable exactly when the feature was enabled.
    let coop = device.check_capability("CooperativeMatrixKHR", compute);
    assert_eq!(
        coop.is_ok(),
        device.features().cooperative_matrix,
        "{coop:?}"
    );
    if let Err(e) = coop {
        assert!(e.to_string().contains("VK_KHR_cooperative_matrix"), "{e}");
    }
    let bf16 = device.check_capability("BFloat16TypeKHR", compute);
    assert_eq!(bf16.is_ok(), device.features().shader_bfloat16, "{bf16:?}");
    // A feature bit: Int64 follows shaderInt64.
    let int64 = device.check_capability("Int64", compute);
    assert_eq!(int64.is_ok(), device.features().shader_int64);
    // Every capability kiln lists has an answer that is not "unknown".
    for cap in kiln::known_capabilities() {
        if let Err(e) = device.check_capability(cap, compute) {
            assert_ne!(e.code(), "KILN-E110", "{cap}: {e}");
        }
    }
    assert_clean(&device);
}

/// Where Debian's `spirv-headers` installs the grammar (on both stacks; the Debian 13
/// chroot has its own copy). `KILN_SPIRV_GRAMMAR` names another file.
const SPIRV_GRAMMAR: &str = "/usr/include/spirv/unified1/spirv.core.grammar.json";

/// Issue 30: kiln's capability table keeps up with SPIR-V's grammar. Every capability of
/// the installed SPIRV-Headers grammar (by its number, aliases included) must have a line
/// in kiln's table, under the name kiln gives that number (`kiln::capability_name`). Without
/// the file the test prints a skip line, and fails under CI (`CI=true`): `cargo xtask test`
/// installs `spirv-headers`.
#[test]
fn capability_table_covers_the_installed_spirv_grammar() {
    let path = std::env::var("KILN_SPIRV_GRAMMAR").unwrap_or_else(|_| SPIRV_GRAMMAR.into());
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
            assert!(
                !ci,
                "CI: the SPIR-V grammar {path} is missing ({e}); install Debian package \
                 spirv-headers (cargo xtask test does)"
            );
            eprintln!(
                "SKIP capability_table_covers_the_installed_spirv_grammar: {path}: {e} \
                 (install Debian package spirv-headers; under CI=true this fails)"
            );
            return;
        }
    };
    let grammar: serde_json::Value = serde_json::from_str(&text).unwrap();
    let enumerants = grammar["operand_kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "Capability")
        .unwrap()["enumerants"]
        .as_array()
        .unwrap();
    let known: std::collections::BTreeSet<&str> = kiln::known_capabilities().collect();
    let mut missing = Vec::new();
    for e in enumerants {
        let value = u32::try_from(e["value"].as_u64().unwrap()).unwrap();
        let kiln_name = kiln::capability_name(value);
        if !known.contains(kiln_name.as_str()) {
            missing.push(format!("{} ({value}, kiln: {kiln_name})", e["enumerant"]));
        }
    }
    assert!(
        missing.is_empty(),
        "capabilities of {path} not in kiln's table (src/device/capabilities.rs): {missing:?}"
    );
    // A grammar of a few capabilities would prove nothing: Debian 12's lists 231.
    assert!(enumerants.len() > 200, "{}", enumerants.len());
    eprintln!(
        "capability table: all {} capabilities of {path} (SPIR-V {}.{} revision {}) known",
        enumerants.len(),
        grammar["major_version"],
        grammar["minor_version"],
        grammar["revision"]
    );
}
