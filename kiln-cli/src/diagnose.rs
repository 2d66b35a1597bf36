//! `kiln diagnose [--json] [--profile NAME | --device] PIPELINE [PIPELINE ...]`
//!
//! Coded warnings over shaders, before they become a pipeline that fails or a host struct
//! that reads garbage. Each argument is one pipeline: a `.spv` file, or several joined by
//! `+` (`scene.vert.spv+scene.frag.spv`) for the stages of one graphics pipeline; every
//! entry point of its modules takes part.
//!
//! | code | finding |
//! | --- | --- |
//! | `D001` | a binding declared in the pipeline's modules that no entry point uses |
//! | `D002` | a `vec3` padding trap in a uniform, storage or push-constant block: padding before or after a `vec3` member that a Rust `[f32; 3]` would not have |
//! | `D003` | an array or matrix whose stride pads each element (std140 `float[N]`, `vec2[N]`, `mat3`): a tightly packed Rust array would not match |
//! | `D004` | two pipelines whose set N differs only in stage flags, so they cannot share one set; the message names the `with_visibility` call that fixes it |
//! | `D005` | a count or size beyond the limits of the profile or device: sets, descriptors per stage by type, push-constant bytes, workgroup size and invocations |
//! | `D006` | a SPIR-V capability whose feature the profile does not guarantee (or the device lacks) |
//!
//! Limits and features come from `--profile vulkan-min` (the default: the minimums every
//! Vulkan 1.3 device has, Vulkan spec table "Required Limits", and only core
//! capabilities) or `--device` (the device kiln picks, `KILN_DEVICE` to choose).
//!
//! Output: a table (code, pipeline, where, message), or with `--json` one object
//! `{"schema_version":1,"profile":…,"pipelines":[{"name":…,"modules":[…]}],"findings":
//! [{"code","pipeline","where","message","fix"}]}` (`kiln-cli/README.md`). Exit status: 0 nothing found, 1 findings, 2 a usage error
//! or a file that cannot be read or reflected (its `KILN-Exxx` error on stderr).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;

use kiln::reflect::{BlockLayout, DescriptorBinding, MemberType};
use kiln::{vk, DescriptorSetLayoutDesc, PipelineLayoutDesc, ShaderModule};
use serde_json::{json, Value};

/// The version of the `--json` shape (`kiln-cli/README.md`): raised when a field is
/// removed, renamed or changes meaning; fields may be added within a version.
pub const SCHEMA_VERSION: u32 = 1;

const USAGE: &str =
    "usage: kiln diagnose [--json] [--profile vulkan-min | --device] FILE.spv[+FILE.spv...] ...";

/// One finding.
struct Finding {
    code: &'static str,
    pipeline: String,
    place: String,
    message: String,
    fix: Option<String>,
}

/// Where the limits and features come from.
enum Target {
    Profile(&'static str, Box<vk::PhysicalDeviceLimits>),
    Device(kiln::Device),
}

impl Target {
    fn name(&self) -> String {
        match self {
            Target::Profile(n, _) => (*n).to_string(),
            Target::Device(d) => format!("device {}", d.info().name),
        }
    }

    fn limits(&self) -> &vk::PhysicalDeviceLimits {
        match self {
            Target::Profile(_, l) => l,
            Target::Device(d) => d.limits(),
        }
    }
}

/// Vulkan 1.3's required minimums (Vulkan spec, "Required Limits").
fn vulkan_min() -> vk::PhysicalDeviceLimits {
    vk::PhysicalDeviceLimits {
        max_bound_descriptor_sets: 4,
        max_per_stage_descriptor_samplers: 16,
        max_per_stage_descriptor_uniform_buffers: 12,
        max_per_stage_descriptor_storage_buffers: 4,
        max_per_stage_descriptor_sampled_images: 16,
        max_per_stage_descriptor_storage_images: 4,
        max_per_stage_descriptor_input_attachments: 4,
        max_per_stage_resources: 128,
        max_push_constants_size: 128,
        max_compute_shared_memory_size: 16384,
        max_compute_work_group_invocations: 128,
        max_compute_work_group_size: [128, 128, 64],
        max_uniform_buffer_range: 16384,
        max_storage_buffer_range: 1 << 27,
        ..Default::default()
    }
}

struct Pipeline {
    name: String,
    files: Vec<String>,
    modules: Vec<ShaderModule>,
}

/// Entry point of `kiln diagnose`.
pub fn main(args: &[String]) -> ExitCode {
    let mut json_out = false;
    let mut profile: Option<String> = None;
    let mut device = false;
    let mut groups = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => json_out = true,
            "--device" => device = true,
            "--profile" => match it.next() {
                Some(p) => profile = Some(p.clone()),
                None => return usage("--profile needs a NAME"),
            },
            s if s.starts_with("--profile=") => profile = Some(s["--profile=".len()..].into()),
            "-h" | "--help" => return usage(""),
            s if s.starts_with('-') => return usage(&format!("unknown option `{s}`")),
            _ => groups.push(a.clone()),
        }
    }
    if groups.is_empty() {
        return usage("no FILE.spv given");
    }
    if device && profile.is_some() {
        return usage("--device and --profile exclude each other");
    }
    let target = if device {
        match kiln::Device::new() {
            Ok(d) => Target::Device(d),
            Err(e) => {
                eprintln!("kiln diagnose: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        match profile.as_deref().unwrap_or("vulkan-min") {
            "vulkan-min" => Target::Profile("vulkan-min", Box::new(vulkan_min())),
            other => return usage(&format!("unknown profile `{other}` (known: vulkan-min)")),
        }
    };
    let mut pipelines = Vec::new();
    for g in &groups {
        let files: Vec<String> = g.split('+').map(str::to_string).collect();
        let mut modules = Vec::new();
        for f in &files {
            match ShaderModule::from_file(f) {
                Ok(m) => modules.push(m),
                Err(e) => {
                    eprintln!("kiln diagnose: {f}: {e}");
                    return ExitCode::from(2);
                }
            }
        }
        pipelines.push(Pipeline {
            name: files.iter().map(|f| short(f)).collect::<Vec<_>>().join("+"),
            files,
            modules,
        });
    }
    let mut findings = Vec::new();
    let mut layouts = Vec::new();
    for p in &pipelines {
        match diagnose_pipeline(p, &target, &mut findings) {
            Ok(l) => layouts.push((p.name.clone(), l)),
            Err(e) => {
                eprintln!("kiln diagnose: {}: {e}", p.name);
                return ExitCode::from(2);
            }
        }
    }
    shared_sets(&layouts, &mut findings);
    if json_out {
        let v = json!({
            "schema_version": SCHEMA_VERSION,
            "profile": target.name(),
            "pipelines": pipelines.iter().map(|p| json!({"name": p.name, "modules": p.files})).collect::<Vec<_>>(),
            "findings": findings.iter().map(|f| json!({
                "code": f.code,
                "pipeline": f.pipeline,
                "where": f.place,
                "message": f.message,
                "fix": f.fix.as_ref().map_or(Value::Null, |s| Value::String(s.clone())),
            })).collect::<Vec<_>>(),
        });
        println!("{v}");
    } else {
        print!("{}", table(&target, &findings));
    }
    if findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn usage(msg: &str) -> ExitCode {
    if !msg.is_empty() {
        eprintln!("kiln diagnose: {msg}");
    }
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

fn short(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or(path.to_string(), |n| n.to_string_lossy().into_owned())
}

fn table(target: &Target, findings: &[Finding]) -> String {
    let mut out = String::new();
    if findings.is_empty() {
        let _ = writeln!(out, "nothing found (against {})", target.name());
        return out;
    }
    let w_pipe = findings
        .iter()
        .map(|f| f.pipeline.len())
        .max()
        .unwrap_or(8)
        .max(8);
    let w_place = findings
        .iter()
        .map(|f| f.place.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let _ = writeln!(
        out,
        "{:<5} {:<w_pipe$} {:<w_place$} MESSAGE",
        "CODE", "PIPELINE", "WHERE"
    );
    for f in findings {
        let _ = writeln!(
            out,
            "{:<5} {:<w_pipe$} {:<w_place$} {}",
            f.code, f.pipeline, f.place, f.message
        );
        if let Some(fix) = &f.fix {
            let _ = writeln!(out, "{:<5} {:<w_pipe$} {:<w_place$} fix: {fix}", "", "", "");
        }
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        *counts.entry(f.code).or_default() += 1;
    }
    let summary: Vec<String> = counts.iter().map(|(c, n)| format!("{c} x{n}")).collect();
    let _ = writeln!(
        out,
        "{} finding(s) against {}: {}",
        findings.len(),
        target.name(),
        summary.join(", ")
    );
    out
}

fn binding_place(b: &DescriptorBinding) -> String {
    match &b.name {
        Some(n) => format!("set {} binding {} `{n}`", b.set, b.binding),
        None => format!("set {} binding {}", b.set, b.binding),
    }
}

/// A finding's code, place, message and fix, as the checks report them.
type Push<'p> = dyn FnMut(&'static str, String, String, Option<String>) + 'p;

/// The entry points of a pipeline, with their modules.
type Stages<'m> = [(&'m ShaderModule, &'m str)];

/// The checks of one pipeline; returns its layout for the cross-pipeline check.
fn diagnose_pipeline(
    p: &Pipeline,
    target: &Target,
    out: &mut Vec<Finding>,
) -> kiln::Result<PipelineLayoutDesc> {
    let mut stages: Vec<(&ShaderModule, &str)> = Vec::new();
    for m in &p.modules {
        for ep in &m.reflection().entry_points {
            stages.push((m, ep.name.as_str()));
        }
    }
    let layout = PipelineLayoutDesc::from_stages(&stages)?;
    let mut push = |code, place: String, message: String, fix: Option<String>| {
        out.push(Finding {
            code,
            pipeline: p.name.clone(),
            place,
            message,
            fix,
        })
    };
    unused_bindings(&stages, &mut push)?;
    block_layouts(&stages, &mut push)?;
    for (what, message) in limits_exceeded(&stages, &layout, target)? {
        push("D005", what, message, None);
    }
    capabilities(p, target, &mut push);
    Ok(layout)
}

/// D001: bindings declared that no entry point of the pipeline uses.
fn unused_bindings(stages: &Stages<'_>, push: &mut Push<'_>) -> kiln::Result<()> {
    let mut used = std::collections::BTreeSet::new();
    let mut unused: BTreeMap<(u32, u32), &DescriptorBinding> = BTreeMap::new();
    for (m, e) in stages {
        let ep = m.reflection().entry_point(e)?;
        used.extend(ep.bindings.iter().map(|b| (b.set, b.binding)));
        for b in &ep.unused_bindings {
            unused.entry((b.set, b.binding)).or_insert(b);
        }
    }
    for (key, b) in &unused {
        if !used.contains(key) {
            push(
                "D001",
                binding_place(b),
                "declared but no entry point of the pipeline uses it".into(),
                Some("remove it, or use it; kiln leaves it out of the derived layout".into()),
            );
        }
    }
    Ok(())
}

/// D002, D003: block layout traps, once per block (bindings and push constants).
fn block_layouts(stages: &Stages<'_>, push: &mut Push<'_>) -> kiln::Result<()> {
    let mut seen = std::collections::BTreeSet::new();
    for (m, e) in stages {
        let ep = m.reflection().entry_point(e)?;
        for b in ep.bindings.iter().chain(&ep.unused_bindings) {
            if let Some(block) = &b.block {
                if seen.insert((b.set, b.binding)) {
                    block_traps(&binding_place(b), block, push);
                }
            }
        }
        if let Some(pc) = &ep.push_constants {
            if let Some(block) = &pc.block {
                if seen.insert((u32::MAX, 0)) {
                    let place = format!(
                        "push constants `{}`",
                        pc.name.as_deref().unwrap_or("<unnamed>")
                    );
                    block_traps(&place, block, push);
                }
            }
        }
    }
    Ok(())
}

/// The per-stage descriptor limits: what they count, the descriptor types counted, the
/// limit and its name.
fn per_stage_limits(
    limits: &vk::PhysicalDeviceLimits,
) -> [(
    &'static str,
    &'static [vk::DescriptorType],
    u32,
    &'static str,
); 6] {
    use vk::DescriptorType as T;
    [
        (
            "samplers",
            &[T::SAMPLER, T::COMBINED_IMAGE_SAMPLER],
            limits.max_per_stage_descriptor_samplers,
            "maxPerStageDescriptorSamplers",
        ),
        (
            "uniform buffers",
            &[T::UNIFORM_BUFFER, T::UNIFORM_BUFFER_DYNAMIC],
            limits.max_per_stage_descriptor_uniform_buffers,
            "maxPerStageDescriptorUniformBuffers",
        ),
        (
            "storage buffers",
            &[T::STORAGE_BUFFER, T::STORAGE_BUFFER_DYNAMIC],
            limits.max_per_stage_descriptor_storage_buffers,
            "maxPerStageDescriptorStorageBuffers",
        ),
        (
            "sampled images",
            &[
                T::SAMPLED_IMAGE,
                T::COMBINED_IMAGE_SAMPLER,
                T::UNIFORM_TEXEL_BUFFER,
            ],
            limits.max_per_stage_descriptor_sampled_images,
            "maxPerStageDescriptorSampledImages",
        ),
        (
            "storage images",
            &[T::STORAGE_IMAGE, T::STORAGE_TEXEL_BUFFER],
            limits.max_per_stage_descriptor_storage_images,
            "maxPerStageDescriptorStorageImages",
        ),
        (
            "input attachments",
            &[T::INPUT_ATTACHMENT],
            limits.max_per_stage_descriptor_input_attachments,
            "maxPerStageDescriptorInputAttachments",
        ),
    ]
}

/// D005: the limits of `target` the pipeline exceeds, as (what, message).
fn limits_exceeded(
    stages: &Stages<'_>,
    layout: &PipelineLayoutDesc,
    target: &Target,
) -> kiln::Result<Vec<(String, String)>> {
    let limits = target.limits();
    let l = |what: String, count: u64, limit: u32, name: &str| {
        (count > u64::from(limit)).then(|| {
            (
                what,
                format!("{count} exceeds {name} {limit} of {}", target.name()),
            )
        })
    };
    let mut over = Vec::new();
    over.extend(l(
        "descriptor sets".into(),
        layout.sets.len() as u64,
        limits.max_bound_descriptor_sets,
        "maxBoundDescriptorSets",
    ));
    let push_end = layout
        .push_constant_ranges
        .iter()
        .map(|r| r.offset + r.size)
        .max()
        .unwrap_or(0);
    over.extend(l(
        "push constants (bytes)".into(),
        u64::from(push_end),
        limits.max_push_constants_size,
        "maxPushConstantsSize",
    ));
    let per_stage = per_stage_limits(limits);
    let mut all_stages = vk::ShaderStageFlags::empty();
    for (m, e) in stages {
        all_stages |= m.reflection().entry_point(e)?.stage;
    }
    for bit in (0..32).map(|i| vk::ShaderStageFlags::from_raw(1 << i)) {
        if !all_stages.contains(bit) {
            continue;
        }
        for (what, types, limit, name) in &per_stage {
            let n: u64 = layout
                .sets
                .iter()
                .flat_map(|s| s.bindings())
                .filter(|b| b.stages.contains(bit) && types.contains(&b.descriptor_type))
                .map(|b| u64::from(b.count))
                .sum();
            over.extend(l(format!("{what} in the {bit:?} stage"), n, *limit, name));
        }
    }
    for (m, e) in stages {
        let ep = m.reflection().entry_point(e)?;
        if let Some(wg) = &ep.workgroup_size {
            let [x, y, z] = wg.size;
            let inv = u64::from(x) * u64::from(y) * u64::from(z);
            over.extend(l(
                format!("workgroup invocations of `{e}` ({x}x{y}x{z})"),
                inv,
                limits.max_compute_work_group_invocations,
                "maxComputeWorkGroupInvocations",
            ));
            for (i, (s, max)) in wg
                .size
                .iter()
                .zip(limits.max_compute_work_group_size)
                .enumerate()
            {
                over.extend(l(
                    format!("workgroup size {} of `{e}`", ["x", "y", "z"][i]),
                    u64::from(*s),
                    max,
                    "maxComputeWorkGroupSize",
                ));
            }
        }
    }
    Ok(over)
}

/// D006: SPIR-V capabilities that `target` does not guarantee (a profile) or lacks (a
/// device).
fn capabilities(p: &Pipeline, target: &Target, push: &mut Push<'_>) {
    for m in &p.modules {
        let r = m.reflection();
        match target {
            Target::Profile(name, _) => {
                for c in &r.capabilities {
                    let need = kiln::capability_requirement(c);
                    let known = kiln::known_capabilities().any(|k| k == c);
                    let message = match (need, known) {
                        (Some(need), _) => format!(
                            "SPIR-V capability {c} needs {need}, which profile {name} does not guarantee"
                        ),
                        (None, false) => format!("SPIR-V capability {c} is unknown to kiln"),
                        (None, true) => continue,
                    };
                    push("D006", short(m.label()), message, None);
                }
            }
            Target::Device(d) => {
                for ep in &r.entry_points {
                    if let Err(e) = d.check_shader_capabilities(m, ep.stage) {
                        let place = format!("{} `{}`", short(m.label()), ep.name);
                        push("D006", place, e.to_string(), None);
                    }
                }
            }
        }
    }
}

/// The natural (tightly packed) size of a member type: a `vec3` is 12 bytes.
fn natural(ty: &MemberType) -> Option<u32> {
    match ty {
        MemberType::Struct { layout, .. } => Some(layout.size),
        other => other.scalars().map(|(s, n)| s.size() * n),
    }
}

fn is_vec3(ty: &MemberType) -> bool {
    matches!(ty, MemberType::Vector { count: 3, .. })
}

/// D002 and D003 for one block (and its nested structs).
fn block_traps(place: &str, block: &BlockLayout, push: &mut Push<'_>) {
    let mut members: Vec<_> = block.members.iter().collect();
    members.sort_by_key(|m| m.offset);
    let name = |m: &kiln::reflect::BlockMember| {
        m.name
            .clone()
            .unwrap_or_else(|| format!("<member at {}>", m.offset))
    };
    for w in members.windows(2) {
        let (a, b) = (w[0], w[1]);
        // A vec3 ends after its 12 bytes; anything else after its decorated size (a
        // mat3's stride padding is D003's, not a gap).
        let size = if is_vec3(&a.ty) { 12 } else { a.size };
        let end = a.offset + size;
        if b.offset > end && (is_vec3(&a.ty) || is_vec3(&b.ty)) {
            push(
                "D002",
                place.to_string(),
                format!(
                    "`{}` ({}) is at offset {}, {} bytes after `{}` ({} at {}) ends: a Rust struct \
                     with [f32; 3] there would put it at {end}",
                    name(b),
                    b.ty.glsl_name(),
                    b.offset,
                    b.offset - end,
                    name(a),
                    a.ty.glsl_name(),
                    a.offset
                ),
                Some(format!(
                    "add explicit padding ({} bytes before `{}`), or use a vec4; kiln-build's \
                     typed bindings generate it",
                    b.offset - end,
                    name(b)
                )),
            );
        }
    }
    for m in &members {
        match &m.ty {
            MemberType::Array {
                element, stride, ..
            } if element.scalars().is_some() => {
                let Some(size) = natural(element) else {
                    continue;
                };
                if *stride > size {
                    push(
                        "D003",
                        place.to_string(),
                        format!(
                            "`{}` ({}) has ArrayStride {stride}: each {}-byte element is padded to \
                             {stride} bytes (std140), unlike a Rust array",
                            name(m),
                            m.ty.glsl_name(),
                            size
                        ),
                        Some("use vec4 elements, or std430 for a storage buffer, or pad each host element".into()),
                    );
                }
            }
            MemberType::Matrix {
                rows,
                stride,
                component,
                row_major: false,
                ..
            } if *stride > rows * component.size() => push(
                "D003",
                place.to_string(),
                format!(
                    "`{}` ({}) has MatrixStride {stride}: each column of {rows} is padded to \
                     {stride} bytes, unlike a Rust [[f32; {rows}]; N]",
                    name(m),
                    m.ty.glsl_name()
                ),
                Some(format!(
                    "hold each column as [f32; {}] on the host, or use a mat4",
                    stride / component.size()
                )),
            ),
            MemberType::Struct { layout, .. } => {
                block_traps(&format!("{place}.{}", name(m)), layout, push);
            }
            _ => {}
        }
    }
}

/// D004: a set number whose layouts differ only in stage flags between two pipelines.
fn shared_sets(layouts: &[(String, PipelineLayoutDesc)], out: &mut Vec<Finding>) {
    for (i, (a_name, a)) in layouts.iter().enumerate() {
        for (b_name, b) in &layouts[i + 1..] {
            for (n, (sa, sb)) in a.sets.iter().zip(&b.sets).enumerate() {
                let sa: &DescriptorSetLayoutDesc = sa;
                if let Some(stages) = sa.only_stages_differ(sb) {
                    let expr = format!("{stages:?}")
                        .split(" | ")
                        .map(|s| format!("vk::ShaderStageFlags::{s}"))
                        .collect::<Vec<_>>()
                        .join(" | ");
                    out.push(Finding {
                        code: "D004",
                        pipeline: format!("{a_name} / {b_name}"),
                        place: format!("set {n}"),
                        message:
                            "the two pipelines declare set {n} alike but for stage flags, so one \
                                  descriptor set cannot serve both"
                                .replace("{n}", &n.to_string()),
                        fix: Some(format!(
                            "PipelineLayoutDesc::from_stages(..)?.with_visibility({n}, \
                             Visibility::Stages({expr})) for both pipelines"
                        )),
                    });
                }
            }
        }
    }
}
