//! Real modules: SaschaWillems' Vulkan examples (`saschawillems/` in the corpus), 147
//! modules compiled by glslang (GLSL) and DXC (HLSL), sources beside them.
//!
//! 1. Every module reflects without error.
//! 2. For the examples compiled from both languages, per-binding descriptor types agree,
//!    except where the sources differ by design. Allowed differences (checked, counted):
//!
//!    | kind | GLSL | HLSL | why |
//!    | --- | --- | --- | --- |
//!    | combined vs separate | COMBINED_IMAGE_SAMPLER at (s, b) | SAMPLED_IMAGE at (s, b), SAMPLER at (s, b') | the GLSL sources use `sampler2D`, the HLSL ones `Texture2D` + `SamplerState` (corpus README) |
//!    | DXC UAV counter | absent | STORAGE_BUFFER `counter.var.X` | DXC gives each RWStructuredBuffer an atomic counter buffer at its own binding (3 modules) |
//!    | listed in `EXCEPTIONS` | | | the sources declare different resources; each case with its reason there |
//!
//! 3. For every example's stage sets (vertex+fragment by file stem, plus the example's
//!    tessellation/geometry stages; each compute module alone; all ray-tracing stages of an
//!    example together) kiln derives the pipeline layout and creates it on the device, and
//!    for compute modules the compute pipeline too, with zero validation messages. Stage
//!    sets needing what lavapipe lacks are skipped with the missing feature named.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kiln::{vk, PipelineLayoutDesc, ShaderModule};

use common::corpus;

fn load_all(root: &Path) -> Vec<(PathBuf, ShaderModule)> {
    let files = corpus::files(root, ".spv");
    assert_eq!(files.len(), 147, "expected the 147 SaschaWillems modules");
    let mut errors = Vec::new();
    let mut out = Vec::new();
    for f in files {
        match ShaderModule::from_file(&f) {
            Ok(m) => out.push((f, m)),
            Err(e) => errors.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(
        errors.is_empty(),
        "modules that failed to reflect:\n{}",
        errors.join("\n")
    );
    out
}

/// (set, binding) -> descriptor type over all entry points, used or not.
fn types_of(m: &ShaderModule) -> BTreeMap<(u32, u32), vk::DescriptorType> {
    names_and_types(m)
        .into_iter()
        .map(|(k, (t, _))| (k, t))
        .collect()
}

fn names_and_types(m: &ShaderModule) -> BTreeMap<(u32, u32), (vk::DescriptorType, String)> {
    let mut out = BTreeMap::new();
    for ep in &m.reflection().entry_points {
        for b in ep.bindings.iter().chain(&ep.unused_bindings) {
            let name = b.name.clone().unwrap_or_default();
            out.insert((b.set, b.binding), (b.descriptor_type, name));
        }
    }
    out
}

/// Where the GLSL and HLSL sources of one example declare different resources:
/// (module relative to `glsl/` and `hlsl/`, set, binding, why).
const EXCEPTIONS: &[(&str, u32, u32, &str)] = &[
    (
        "computeshader/edgedetect.comp.spv",
        0,
        0,
        "GLSL `readonly image2D` (STORAGE_IMAGE), HLSL `Texture2D` (SAMPLED_IMAGE)",
    ),
    (
        "computeshader/emboss.comp.spv",
        0,
        0,
        "GLSL `readonly image2D` (STORAGE_IMAGE), HLSL `Texture2D` (SAMPLED_IMAGE)",
    ),
    (
        "computeshader/sharpen.comp.spv",
        0,
        0,
        "GLSL `readonly image2D` (STORAGE_IMAGE), HLSL `Texture2D` (SAMPLED_IMAGE)",
    ),
    (
        "raytracingreflections/closesthit.rchit.spv",
        0,
        0,
        "`topLevelAS` is declared but never used; glslang keeps the variable, DXC drops it",
    ),
];

#[test]
fn saschawillems_modules_reflect_and_glsl_hlsl_pairs_agree() {
    let Some(corpus) = corpus::root() else {
        return;
    };
    let root = corpus.join("saschawillems/shaders");
    let modules = load_all(&root);
    let by_path: BTreeMap<String, &ShaderModule> = modules
        .iter()
        .map(|(p, m)| (p.strip_prefix(&root).unwrap().display().to_string(), m))
        .collect();
    let (mut pairs, mut agreeing, mut combined_vs_separate) = (0, 0, 0);
    let (mut counters, mut listed) = (0, 0);
    let mut failures = Vec::new();
    for (path, glsl) in &by_path {
        let Some(rel) = path.strip_prefix("glsl/") else {
            continue;
        };
        let Some(hlsl) = by_path.get(&format!("hlsl/{rel}")) else {
            continue;
        };
        pairs += 1;
        let (g, h) = (types_of(glsl), types_of(hlsl));
        let h_names = names_and_types(hlsl);
        let listed_here = |k: &(u32, u32)| {
            EXCEPTIONS
                .iter()
                .any(|e| (e.0, e.1, e.2) == (rel, k.0, k.1))
        };
        let mut same = true;
        for (k, gt) in &g {
            match h.get(k) {
                Some(ht) if ht == gt => {}
                Some(&ht)
                    if *gt == vk::DescriptorType::COMBINED_IMAGE_SAMPLER
                        && (ht == vk::DescriptorType::SAMPLED_IMAGE
                            || ht == vk::DescriptorType::SAMPLER) =>
                {
                    combined_vs_separate += 1;
                    same = false;
                }
                other => {
                    same = false;
                    if listed_here(k) {
                        listed += 1;
                    } else {
                        failures.push(format!(
                            "{rel} set {} binding {}: glsl {gt:?}, hlsl {other:?}",
                            k.0, k.1
                        ));
                    }
                }
            }
        }
        for (k, ht) in &h {
            if g.contains_key(k) {
                continue;
            }
            same = false;
            let separate_sampler = *ht == vk::DescriptorType::SAMPLER
                && g.values()
                    .any(|t| *t == vk::DescriptorType::COMBINED_IMAGE_SAMPLER);
            let counter = h_names[k].1.starts_with("counter.var.");
            if separate_sampler {
                combined_vs_separate += 1;
            } else if counter {
                counters += 1;
            } else if listed_here(k) {
                listed += 1;
            } else {
                failures.push(format!(
                    "{rel} set {} binding {}: glsl none, hlsl {ht:?}",
                    k.0, k.1
                ));
            }
        }
        if same {
            agreeing += 1;
        }
    }
    println!(
        "saschawillems: {} modules reflected; {pairs} GLSL/HLSL pairs, {agreeing} identical, \
         {combined_vs_separate} combined-vs-separate sampler differences, {counters} DXC counter \
         buffers, {listed} listed exceptions",
        modules.len()
    );
    assert!(
        failures.is_empty(),
        "{} unexpected differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(
        listed,
        EXCEPTIONS.len(),
        "every listed exception still differs"
    );
}

/// Why lavapipe (or the device at hand) cannot take this stage set, if it cannot.
fn missing_feature(device: &kiln::Device, modules: &[&ShaderModule]) -> Option<String> {
    let f = device.features();
    use vk::ShaderStageFlags as S;
    let rt = S::RAYGEN_KHR
        | S::MISS_KHR
        | S::CLOSEST_HIT_KHR
        | S::ANY_HIT_KHR
        | S::INTERSECTION_KHR
        | S::CALLABLE_KHR;
    for m in modules {
        let r = m.reflection();
        for ep in &r.entry_points {
            if ep.stage.intersects(rt) {
                return Some("ray tracing pipelines (VK_KHR_ray_tracing_pipeline: absent on lavapipe, not enabled by kiln)".into());
            }
            if ep.stage.intersects(S::MESH_EXT | S::TASK_EXT) {
                return Some(
                    "mesh shaders (VK_EXT_mesh_shader: absent on lavapipe, not enabled by kiln)"
                        .into(),
                );
            }
            if ep.stage.intersects(S::GEOMETRY) && !f.geometry_shader {
                return Some("geometryShader".into());
            }
            if ep
                .stage
                .intersects(S::TESSELLATION_CONTROL | S::TESSELLATION_EVALUATION)
                && !f.tessellation_shader
            {
                return Some("tessellationShader".into());
            }
            for b in ep.bindings.iter() {
                if b.descriptor_type == vk::DescriptorType::ACCELERATION_STRUCTURE_KHR
                    && !f.acceleration_structure
                {
                    return Some("acceleration structures (VK_KHR_acceleration_structure: absent on lavapipe 22.3)".into());
                }
                if b.runtime_array && !f.runtime_descriptor_array {
                    return Some("runtimeDescriptorArray".into());
                }
            }
        }
        if r.capabilities.iter().any(|c| c == "RayQueryKHR") && !f.ray_query {
            return Some("ray queries (VK_KHR_ray_query: absent on lavapipe 22.3)".into());
        }
    }
    None
}

/// The stage sets of one example folder: (label, modules).
fn stage_sets<'a>(files: &[(&'a str, &'a ShaderModule)]) -> Vec<(String, Vec<&'a ShaderModule>)> {
    use vk::ShaderStageFlags as S;
    let stage = |m: &ShaderModule| {
        m.reflection()
            .entry_points
            .iter()
            .fold(S::empty(), |acc, e| acc | e.stage)
    };
    let stem = |p: &str| {
        p.rsplit('/')
            .next()
            .unwrap()
            .split('.')
            .next()
            .unwrap()
            .to_string()
    };
    let rt =
        S::RAYGEN_KHR | S::MISS_KHR | S::CLOSEST_HIT_KHR | S::ANY_HIT_KHR | S::INTERSECTION_KHR;
    let extra = S::TESSELLATION_CONTROL | S::TESSELLATION_EVALUATION | S::GEOMETRY;
    let mut sets: Vec<(String, Vec<&ShaderModule>)> = Vec::new();
    let mut by_stem: BTreeMap<String, Vec<&ShaderModule>> = BTreeMap::new();
    let mut rt_set = Vec::new();
    let mut extras = Vec::new();
    for (p, m) in files {
        let s = stage(m);
        if s == S::COMPUTE {
            sets.push((p.to_string(), vec![*m]));
        } else if s.intersects(rt) {
            rt_set.push(*m);
        } else if s.intersects(extra)
            && !files
                .iter()
                .any(|(q, n)| stem(q) == stem(p) && stage(n) == S::VERTEX)
        {
            extras.push(*m);
        } else {
            by_stem.entry(stem(p)).or_default().push(*m);
        }
    }
    for (st, mut ms) in by_stem {
        if ms.iter().any(|m| stage(m) == S::VERTEX) {
            ms.extend(extras.iter().copied());
        }
        sets.push((format!("{st}.*"), ms));
    }
    if !rt_set.is_empty() {
        sets.push(("ray tracing stages".into(), rt_set));
    }
    sets
}

#[test]
fn saschawillems_pipeline_layouts_and_compute_pipelines_are_created() {
    let Some(corpus) = corpus::root() else {
        return;
    };
    let root = corpus.join("saschawillems/shaders");
    let modules = load_all(&root);
    let device = common::device();
    let mut by_example: BTreeMap<String, Vec<(&str, &ShaderModule)>> = BTreeMap::new();
    let rels: Vec<(String, &ShaderModule)> = modules
        .iter()
        .map(|(p, m)| (p.strip_prefix(&root).unwrap().display().to_string(), m))
        .collect();
    for (rel, m) in &rels {
        let dir = rel.rsplit_once('/').unwrap().0.to_string();
        by_example.entry(dir).or_default().push((rel.as_str(), *m));
    }
    let (mut layouts, mut pipelines, mut skipped) = (0, 0, Vec::new());
    for (example, files) in &by_example {
        for (label, set) in stage_sets(files) {
            let what = format!("{example}/{label}");
            if let Some(feature) = missing_feature(&device, &set) {
                skipped.push(format!("{what}: needs {feature}"));
                continue;
            }
            let stages: Vec<(&ShaderModule, &str)> = set
                .iter()
                .flat_map(|m| {
                    m.reflection()
                        .entry_points
                        .iter()
                        .map(move |e| (*m, e.name.as_str()))
                })
                .collect();
            let desc =
                PipelineLayoutDesc::from_stages(&stages).unwrap_or_else(|e| panic!("{what}: {e}"));
            device
                .pipeline_layout(&desc)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            layouts += 1;
            if set.len() == 1
                && set[0].reflection().entry_points[0].stage == vk::ShaderStageFlags::COMPUTE
            {
                let ep = &set[0].reflection().entry_points[0].name;
                device
                    .compute_pipeline(set[0], ep)
                    .unwrap_or_else(|e| panic!("{what}: compute pipeline: {e}"));
                pipelines += 1;
            }
            common::assert_clean(&device);
        }
    }
    println!(
        "saschawillems on {}: {layouts} pipeline layouts created ({pipelines} compute pipelines), {} stage sets skipped:\n  {}",
        device.info().name,
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(layouts > 0 && pipelines > 0);
    common::assert_clean(&device);
}
