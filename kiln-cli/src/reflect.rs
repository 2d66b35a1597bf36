//! `kiln reflect FILE.spv [FILE.spv ...] [--json] [--entry NAME] [--all-bindings]`
//!
//! Prints what kiln's reflection found in each module, per entry point, and the pipeline
//! layout merged across every entry point read (one pipeline made of all of them, the
//! rules of `PipelineLayoutDesc::from_entry_points`).
//!
//! - `--json`: one JSON object on stdout:
//!   `{"schema_version":1,"modules":[…],"pipeline_layout":{…}}`, described field by field
//!   in `kiln-cli/README.md`; fields may be added within a `schema_version`, never removed
//!   or renamed.
//!   Descriptor types and stages are Vulkan enum names without `VK_…_` prefix and `_BIT`.
//! - `--entry NAME`: only entry points called NAME (an error when no module has one, and
//!   `KILN-E061` when it statically uses a resource kiln has no descriptor type for, as
//!   `Reflection::entry_point` refuses it). Without `--entry`, such an entry point is
//!   flagged on stderr with the same `KILN-E061` and left out of the pipeline layout.
//! - `--all-bindings`: also list declared-but-unused bindings (`unused_bindings`); they
//!   stay out of the pipeline layout, which holds what the entry points statically use.
//!
//! Exit status: 0 on success; 1 when a file cannot be read or is malformed (its coded
//! `KILN-Exxx` error is printed on stderr) or the merge fails; 2 for a usage error.

use std::fmt::Write as _;
use std::process::ExitCode;

use kiln::reflect::{
    generator_name, version_string, BlockLayout, DescriptorBinding, EntryPoint, SpecConstant,
};
use kiln::SpecValue;
use kiln::{vk, PipelineLayoutDesc, ShaderModule};
use serde_json::{json, Value};

struct Options {
    files: Vec<String>,
    json: bool,
    entry: Option<String>,
    all_bindings: bool,
}

/// The version of the `--json` shape (`kiln-cli/README.md`): raised when a field is
/// removed, renamed or changes meaning; fields may be added within a version.
pub const SCHEMA_VERSION: u32 = 1;

const USAGE: &str =
    "usage: kiln reflect FILE.spv [FILE.spv ...] [--json] [--entry NAME] [--all-bindings]";

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        files: Vec::new(),
        json: false,
        entry: None,
        all_bindings: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" => o.json = true,
            "--all-bindings" => o.all_bindings = true,
            "--entry" => match it.next() {
                Some(n) => o.entry = Some(n.clone()),
                None => return Err("--entry needs a NAME".into()),
            },
            "-h" | "--help" => return Err(String::new()),
            s if s.starts_with("--entry=") => o.entry = Some(s["--entry=".len()..].to_string()),
            s if s.starts_with('-') => return Err(format!("unknown option `{s}`")),
            _ => o.files.push(a.clone()),
        }
    }
    if o.files.is_empty() {
        return Err("no FILE.spv given".into());
    }
    Ok(o)
}

/// Entry point of `kiln reflect`.
pub fn main(args: &[String]) -> ExitCode {
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("kiln reflect: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut modules = Vec::new();
    let mut failed = false;
    for path in &opts.files {
        match ShaderModule::from_file(path) {
            Ok(m) => modules.push((path.clone(), m)),
            Err(e) => {
                eprintln!("{path}: {e}");
                failed = true;
            }
        }
    }
    if failed {
        return ExitCode::FAILURE;
    }
    // The entry points selected, with labels naming their file. An entry point that statically uses a resource kiln has no descriptor type for is
    // refused, as `Reflection::entry_point` refuses it (KILN-E061): named with --entry, the
    // command fails; otherwise it is flagged on stderr and left out of the pipeline layout
    // (its reflection is still printed).
    let mut selected: Vec<(String, &EntryPoint)> = Vec::new();
    let mut refused = false;
    for (path, m) in &modules {
        for ep in &m.reflection().entry_points {
            if opts.entry.as_ref().is_none_or(|n| *n == ep.name) {
                if let Err(e) = m.reflection().entry_point(&ep.name) {
                    if opts.entry.is_some() {
                        eprintln!("kiln reflect: {path}: {e}");
                        refused = true;
                    } else {
                        eprintln!("kiln reflect: {path}: {e} (left out of the pipeline layout)");
                    }
                    continue;
                }
                selected.push((format!("{} in {path}", ep.name), ep));
            }
        }
    }
    if refused {
        return ExitCode::FAILURE;
    }
    if let (Some(name), true) = (&opts.entry, selected.is_empty()) {
        let available: Vec<String> = modules
            .iter()
            .flat_map(|(p, m)| {
                m.reflection()
                    .entry_points
                    .iter()
                    .map(move |e| format!("{} in {p}", e.name))
            })
            .collect();
        eprintln!(
            "kiln reflect: KILN-E050: entry point `{name}` not found; the modules have: {}",
            available.join(", ")
        );
        return ExitCode::FAILURE;
    }
    let layout = if selected.is_empty() {
        None
    } else {
        let refs: Vec<(&str, &EntryPoint)> =
            selected.iter().map(|(l, e)| (l.as_str(), *e)).collect();
        match PipelineLayoutDesc::from_entry_points(&refs) {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("kiln reflect: pipeline layout: {e}");
                return ExitCode::FAILURE;
            }
        }
    };
    if opts.json {
        let v = to_json(&modules, &opts, layout.as_ref());
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!(
            "{}",
            to_text(&modules, &opts, layout.as_ref(), selected.len())
        );
    }
    ExitCode::SUCCESS
}

/// `VERTEX`, `FRAGMENT`, … for each stage bit set, in bit order.
fn stage_names(stages: vk::ShaderStageFlags) -> Vec<String> {
    (0..32)
        .map(|i| 1u32 << i)
        .filter(|bit| stages.as_raw() & bit != 0)
        .map(|bit| format!("{:?}", vk::ShaderStageFlags::from_raw(bit)))
        .collect()
}

fn type_name(t: vk::DescriptorType) -> String {
    format!("{t:?}")
}

fn block_json(b: &Option<BlockLayout>) -> Value {
    match b {
        None => Value::Null,
        Some(b) => json!({
            "size": b.size,
            "runtime_stride": b.runtime_stride,
            "members": b.members.iter().map(|m| json!({
                "name": m.name,
                "offset": m.offset,
                "size": m.size,
                "array_stride": m.array_stride,
                "matrix_stride": m.matrix_stride,
            })).collect::<Vec<_>>(),
        }),
    }
}

fn binding_json(b: &DescriptorBinding) -> Value {
    let mut v = json!({
        "set": b.set,
        "binding": b.binding,
        "descriptor_type": type_name(b.descriptor_type),
        "count": b.count,
        "runtime_array": b.runtime_array,
        "count_spec_id": b.count_spec_id,
        "name": b.name,
        "block": block_json(&b.block),
        "non_writable": b.non_writable,
        "non_readable": b.non_readable,
    });
    if let Some(i) = &b.image {
        v["image"] = json!({
            "dim": format!("{:?}", i.dim),
            "arrayed": i.arrayed,
            "multisampled": i.multisampled,
            "sampled": i.sampled,
            "format": format!("{:?}", i.format),
        });
    }
    if let Some(i) = b.input_attachment_index {
        v["input_attachment_index"] = json!(i);
    }
    v
}

fn spec_value_json(v: &SpecValue) -> Value {
    match *v {
        SpecValue::Bool(b) => json!(b),
        SpecValue::U32(x) => json!(x),
        SpecValue::I32(x) => json!(x),
        SpecValue::F32(x) => json!(x),
        SpecValue::U64(x) => json!(x),
        SpecValue::I64(x) => json!(x),
        SpecValue::F64(x) => json!(x),
        SpecValue::Other(x) => json!(x),
        // A value kind of a later kiln (`SpecValue` is `#[non_exhaustive]`).
        _ => json!(format!("{v:?}")),
    }
}

fn spec_json(s: &SpecConstant) -> Value {
    json!({
        "id": s.id,
        "name": s.name,
        "type": s.default.type_name(),
        "default": spec_value_json(&s.default),
    })
}

fn entry_json(ep: &EntryPoint, spec: &[SpecConstant], all_bindings: bool) -> Value {
    let io = |vars: &[kiln::reflect::InterfaceVariable]| {
        vars.iter()
            .map(|v| {
                json!({
                    "location": v.location,
                    "component": v.component,
                    "format": format!("{:?}", v.format),
                    "name": v.name,
                })
            })
            .collect::<Vec<_>>()
    };
    let mut v = json!({
        "name": ep.name,
        "stage": stage_names(ep.stage).join("|"),
        "execution_model": format!("{:?}", ep.execution_model),
        "workgroup_size": ep.workgroup_size.map(|w| w.size),
        "workgroup_size_spec_ids": ep.workgroup_size.map(|w| w.spec_ids),
        "bindings": ep.bindings.iter().map(binding_json).collect::<Vec<_>>(),
        "push_constants": ep.push_constants.iter().map(|p| json!({
            "offset": p.offset,
            "size": p.size,
            "name": p.name,
            "block": block_json(&p.block),
        })).collect::<Vec<_>>(),
        "spec_constants": spec.iter().map(spec_json).collect::<Vec<_>>(),
        "execution_modes": ep.execution_modes,
        "inputs": io(&ep.inputs),
        "outputs": io(&ep.outputs),
    });
    if all_bindings {
        v["unused_bindings"] = ep.unused_bindings.iter().map(binding_json).collect();
    }
    v
}

fn layout_json(d: &PipelineLayoutDesc) -> Value {
    let sets: Vec<Value> = d
        .sets
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.bindings().is_empty())
        .map(|(i, s)| {
            json!({
                "set": i,
                "bindings": s.bindings().iter().map(|b| json!({
                    "binding": b.binding,
                    "descriptor_type": type_name(b.descriptor_type),
                    "count": b.count,
                    "runtime_array": d.runtime_arrays.contains(&(i as u32, b.binding)),
                    "stages": stage_names(b.stages),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let pool_sizes: Vec<Value> = d
        .pool_sizes()
        .iter()
        .flat_map(|(set, sizes)| {
            sizes.iter().map(move |p| {
                json!({"set": set, "descriptor_type": type_name(p.ty), "count": p.descriptor_count})
            })
        })
        .collect();
    json!({
        "sets": sets,
        "push_constant_ranges": d.push_constant_ranges.iter().map(|r| json!({
            "stages": stage_names(r.stages),
            "offset": r.offset,
            "size": r.size,
        })).collect::<Vec<_>>(),
        "pool_sizes": pool_sizes,
    })
}

fn to_json(
    modules: &[(String, ShaderModule)],
    opts: &Options,
    layout: Option<&PipelineLayoutDesc>,
) -> Value {
    let mods: Vec<Value> = modules
        .iter()
        .map(|(path, m)| {
            let r = m.reflection();
            json!({
                "path": path,
                "spirv_version": version_string(r.version),
                "generator": generator_name(r.generator),
                "generator_word": r.generator,
                "capabilities": r.capabilities,
                "extensions": r.extensions,
                "entry_points": r.entry_points.iter()
                    .filter(|e| opts.entry.as_ref().is_none_or(|n| *n == e.name))
                    .map(|e| entry_json(e, &r.spec_constants, opts.all_bindings))
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut v = json!({ "schema_version": SCHEMA_VERSION, "modules": mods });
    if let Some(d) = layout {
        v["pipeline_layout"] = layout_json(d);
    }
    v
}

fn count_text(b: &DescriptorBinding) -> String {
    if b.runtime_array {
        "runtime".into()
    } else if let Some(id) = b.count_spec_id {
        format!("{} (spec {id})", b.count)
    } else {
        b.count.to_string()
    }
}

fn binding_rows(out: &mut String, list: &[DescriptorBinding], unused: bool) {
    for b in list {
        let block = match &b.block {
            Some(bl) => match bl.runtime_stride {
                Some(s) => format!("{} B + n×{s} B", bl.size),
                None => format!("{} B", bl.size),
            },
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "    {:>3} {:>7}  {:<28} {:<12} {:<20} {}{}",
            b.set,
            b.binding,
            type_name(b.descriptor_type),
            count_text(b),
            b.name.as_deref().unwrap_or("-"),
            block,
            if unused { "  (unused)" } else { "" }
        );
    }
}

fn to_text(
    modules: &[(String, ShaderModule)],
    opts: &Options,
    layout: Option<&PipelineLayoutDesc>,
    selected: usize,
) -> String {
    let mut out = String::new();
    for (path, m) in modules {
        module_text(&mut out, path, m);
        for ep in &m.reflection().entry_points {
            if opts.entry.as_ref().is_none_or(|n| *n == ep.name) {
                entry_text(&mut out, ep, opts);
            }
        }
    }
    if let (Some(d), true) = (layout, selected > 1) {
        layout_text(&mut out, d, selected);
    }
    out
}

/// A module's header lines: version, generator, capabilities, extensions, spec constants.
fn module_text(out: &mut String, path: &str, m: &ShaderModule) {
    let r = m.reflection();
    let _ = writeln!(
        out,
        "{path}: SPIR-V {}, {}\n  capabilities: {}",
        version_string(r.version),
        generator_name(r.generator),
        r.capabilities
            .iter()
            .map(|c| match c.parse::<u32>() {
                // A capability newer than kiln's grammar is kept as its number.
                Ok(_) => format!("{c} (newer than kiln's SPIR-V grammar)"),
                Err(_) => c.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !r.extensions.is_empty() {
        let _ = writeln!(out, "  extensions: {}", r.extensions.join(", "));
    }
    for s in &r.spec_constants {
        let _ = writeln!(
            out,
            "  spec constant {}: {} {} = {:?}",
            s.id,
            s.name.as_deref().unwrap_or("-"),
            s.default.type_name(),
            s.default
        );
    }
}

/// An entry point's lines: stage, workgroup size, execution modes, bindings, push
/// constants, inputs and outputs.
fn entry_text(out: &mut String, ep: &EntryPoint, opts: &Options) {
    let _ = writeln!(
        out,
        "  entry point `{}` ({})",
        ep.name,
        stage_names(ep.stage).join("|")
    );
    if let Some(w) = ep.workgroup_size {
        let _ = writeln!(
            out,
            "    workgroup size {:?} (spec ids {:?})",
            w.size, w.spec_ids
        );
    }
    if !ep.execution_modes.is_empty() {
        let _ = writeln!(
            out,
            "    execution modes: {}",
            ep.execution_modes.join(", ")
        );
    }
    if !ep.bindings.is_empty() || (opts.all_bindings && !ep.unused_bindings.is_empty()) {
        let _ = writeln!(
            out,
            "    set binding  {:<28} {:<12} {:<20} block",
            "descriptor type", "count", "name"
        );
        binding_rows(out, &ep.bindings, false);
        if opts.all_bindings {
            binding_rows(out, &ep.unused_bindings, true);
        }
    }
    if let Some(p) = &ep.push_constants {
        let _ = writeln!(
            out,
            "    push constants: offset {} size {} ({})",
            p.offset,
            p.size,
            p.name.as_deref().unwrap_or("-")
        );
    }
    for (what, vars) in [("input", &ep.inputs), ("output", &ep.outputs)] {
        for v in vars {
            let _ = writeln!(
                out,
                "    {what} location {} component {}: {:?} {}",
                v.location,
                v.component,
                v.format,
                v.name.as_deref().unwrap_or("")
            );
        }
    }
}

/// The pipeline layout of the selected entry points: bindings, push constant ranges, pool
/// sizes.
fn layout_text(out: &mut String, d: &PipelineLayoutDesc, selected: usize) {
    let _ = writeln!(out, "pipeline layout ({selected} entry points):");
    for (i, s) in d.sets.iter().enumerate() {
        for b in s.bindings() {
            let _ = writeln!(
                out,
                "  set {i} binding {}: {} x{} [{}]",
                b.binding,
                type_name(b.descriptor_type),
                b.count,
                stage_names(b.stages).join("|")
            );
        }
    }
    for r in &d.push_constant_ranges {
        let _ = writeln!(
            out,
            "  push constant range [{}, {}) [{}]",
            r.offset,
            r.offset + r.size,
            stage_names(r.stages).join("|")
        );
    }
    for (set, sizes) in d.pool_sizes() {
        for p in sizes {
            let _ = writeln!(
                out,
                "  pool size set {set}: {} x{}",
                type_name(p.ty),
                p.descriptor_count
            );
        }
    }
}
