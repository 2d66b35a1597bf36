//! Malformed input: real modules mutated 100,000+ times (truncation, flipped bits, bogus
//! word counts, huge bounds/lengths/offsets, id cycles in the call graph and in types,
//! random opcodes inside OpSpecConstantOp, shuffled and duplicated instructions,
//! enumerant values and opcodes newer than any grammar: issue 30). Every
//! case must end in `Ok` or a coded `KILN-E…` error: no panic (checked with a panic hook
//! that counts every panic on the threads these tests run, including ones caught inside
//! kiln; other tests of this binary panic on purpose, on their own threads), no
//! hang, no abort. The PRNG is a fixed-seed SplitMix64, so runs are reproducible.
//!
//! Found while building this test: rspirv 0.13's parser panics on an OpSpecConstantOp
//! whose operation is OpConstant, OpSpecConstant, OpSpecConstantOp or OpSwitch
//! (`unreachable`/`panic!` in its operand reader for LiteralContextDependentNumber,
//! LiteralSpecConstantOpInteger and PairLiteralIntegerIdRef). kiln's `check_words` now
//! rejects those with KILN-E011 before rspirv sees them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kiln::ShaderModule;

use common::corpus;

static PANICS: AtomicUsize = AtomicUsize::new(0);
static FIRST_PANIC: Mutex<Option<String>> = Mutex::new(None);

thread_local! {
    /// Whether the panic hook counts this thread's panics: set on the threads that reflect
    /// mutated modules (the tests' own and the fuzz workers).
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once for this test binary) a hook that counts every panic of a thread that
/// called this, then defers to the default hook; and marks the calling thread.
fn count_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if COUNTED.with(|c| c.get()) {
                PANICS.fetch_add(1, Ordering::SeqCst);
                let mut first = FIRST_PANIC.lock().unwrap_or_else(|p| p.into_inner());
                if first.is_none() {
                    *first = Some(info.to_string());
                }
            }
            default(info);
        }));
    });
    COUNTED.with(|c| c.set(true));
}

/// SplitMix64.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Start word of every whole instruction after the header, up to the first broken one.
fn instructions(words: &[u32]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let wc = (words[i] >> 16) as usize;
        if wc == 0 || i + wc > words.len() {
            break; // a module mutated before: only whole instructions count
        }
        out.push(i);
        i += wc;
    }
    out
}

fn opcode(w: u32) -> u32 {
    w & 0xffff
}

/// Start words of the instructions with this opcode.
fn find_op(w: &[u32], insts: &[usize], op: u32) -> Vec<usize> {
    insts
        .iter()
        .copied()
        .filter(|&i| opcode(w[i]) == op)
        .collect()
}

const HUGE: [u32; 6] = [
    0xffff_ffff,
    0x7fff_ffff,
    0x8000_0000,
    0x0001_0000,
    1 << 20,
    0,
];

/// One mutation of `words` (host-order, valid module) chosen by `rng`.
fn mutate(words: &[u32], rng: &mut Rng) -> Vec<u32> {
    let mut w = words.to_vec();
    let insts = instructions(&w);
    if insts.is_empty() || w.len() < 5 {
        w.truncate(rng.below(w.len() + 1));
        return w;
    }
    let pick = |rng: &mut Rng| insts[rng.below(insts.len())];
    match rng.below(14) {
        12 => return mutate_enumerant(&w, &insts, rng),
        13 => return with_unknown_instruction(&w, &insts, rng),
        // Truncate anywhere (header included).
        0 => w.truncate(rng.below(w.len() + 1)),
        // Flip 1..4 random bits anywhere.
        1 => {
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(w.len());
                w[i] ^= 1 << rng.below(32);
            }
        }
        // Bogus word count on one instruction.
        2 => {
            let i = pick(rng);
            let wc = match rng.below(3) {
                0 => 0,
                1 => (w[i] >> 16).wrapping_add(1 + rng.below(3) as u32) & 0xffff,
                _ => rng.next() as u32 & 0xffff,
            };
            w[i] = (wc << 16) | (w[i] & 0xffff);
        }
        // Huge bound / constant values / decoration literals.
        3 => {
            let v = HUGE[rng.below(HUGE.len())];
            match rng.below(3) {
                0 => w[3] = v,
                1 => {
                    // OpConstant value: array lengths, spec-op operands.
                    let cs = find_op(&w, &insts, 43);
                    if let Some(&i) = cs.get(rng.below(cs.len())) {
                        let last = i + (w[i] >> 16) as usize - 1;
                        w[last] = v;
                    }
                }
                _ => {
                    // Last literal of an OpDecorate/OpMemberDecorate (Offset, ArrayStride,
                    // Binding, SpecId, Location…).
                    let mut ds = find_op(&w, &insts, 71);
                    ds.extend(find_op(&w, &insts, 72));
                    if let Some(&i) = ds.get(rng.below(ds.len())) {
                        let last = i + (w[i] >> 16) as usize - 1;
                        w[last] = v;
                    }
                }
            }
        }
        // Call-graph cycles: a call's callee becomes its caller or another function.
        4 => {
            let funcs: Vec<u32> = find_op(&w, &insts, 54).iter().map(|&i| w[i + 2]).collect();
            let calls = find_op(&w, &insts, 57);
            if let (Some(&c), false) = (calls.get(rng.below(calls.len())), funcs.is_empty()) {
                w[c + 3] = funcs[rng.below(funcs.len())];
            } else if !funcs.is_empty() {
                // Insert a call to a function into the first block of another: a cycle
                // appears when that function calls back.
                let f = funcs[rng.below(funcs.len())];
                let labels = find_op(&w, &insts, 248);
                if let (Some(&l), Some(ty)) = (labels.first(), find_op(&w, &insts, 19).first()) {
                    let void_ty = w[*ty + 1];
                    let call = [(4 << 16) | 57, void_ty, w[3].max(2) - 1, f];
                    w.splice(l + 2..l + 2, call);
                }
            }
        }
        // Type cycles: a struct member / array element / pointer pointee points at a type
        // declared later or at itself; a forward pointer to itself.
        5 => {
            let mut ts = find_op(&w, &insts, 30); // OpTypeStruct
            ts.extend(find_op(&w, &insts, 28)); // OpTypeArray
            ts.extend(find_op(&w, &insts, 29)); // OpTypeRuntimeArray
            ts.extend(find_op(&w, &insts, 32)); // OpTypePointer
            if let Some(&i) = ts.get(rng.below(ts.len())) {
                let wc = (w[i] >> 16) as usize;
                if wc > 2 {
                    let target = i + 2 + rng.below(wc - 2);
                    let ids: Vec<u32> = ts.iter().map(|&j| w[j + 1]).collect();
                    w[target] = ids[rng.below(ids.len())];
                }
            }
        }
        // OpSpecConstantOp with a random operation (covers the rspirv panics).
        6 => {
            let ops = [43u32, 50, 52, 251, 128, 129, 194, 61, 65, 124, 0, 0xffff];
            let op = if rng.below(2) == 0 {
                ops[rng.below(ops.len())]
            } else {
                rng.below(420) as u32
            };
            let ty = find_op(&w, &insts, 21)
                .first()
                .map(|&i| w[i + 1])
                .unwrap_or(1);
            let n = rng.below(4);
            let mut inst = vec![((4 + n as u32) << 16) | 52, ty, w[3], op];
            for _ in 0..n {
                inst.push(rng.below(w[3] as usize + 2) as u32);
            }
            let at = find_op(&w, &insts, 54).first().copied().unwrap_or(w.len());
            w[3] = w[3].saturating_add(1);
            w.splice(at..at, inst);
        }
        // Replace one operand with a random id or literal.
        7 => {
            let i = pick(rng);
            let wc = (w[i] >> 16) as usize;
            if wc > 1 {
                let j = i + 1 + rng.below(wc - 1);
                w[j] = if rng.below(2) == 0 {
                    rng.below(w[3] as usize + 4) as u32
                } else {
                    rng.next() as u32
                };
            }
        }
        // Move one instruction elsewhere (forward references, functions out of order).
        8 => {
            let i = pick(rng);
            let wc = (w[i] >> 16) as usize;
            let inst: Vec<u32> = w.drain(i..i + wc).collect();
            let rest = instructions(&w);
            let at = rest
                .get(rng.below(rest.len() + 1))
                .copied()
                .unwrap_or(w.len());
            w.splice(at..at, inst);
        }
        // Duplicate one instruction (redefined ids, two OpFunction without end…).
        9 => {
            let i = pick(rng);
            let wc = (w[i] >> 16) as usize;
            let inst: Vec<u32> = w[i..i + wc].to_vec();
            w.splice(i..i, inst);
        }
        // Drop one instruction (OpFunctionEnd, a type, a decoration…).
        10 => {
            let i = pick(rng);
            let wc = (w[i] >> 16) as usize;
            w.drain(i..i + wc);
        }
        // Random word anywhere past the header.
        _ => {
            if w.len() > 5 {
                let i = 5 + rng.below(w.len() - 5);
                w[i] = rng.next() as u32;
            }
        }
    }
    w
}

/// Where each instruction that carries an enumerant has it: (opcode, operand word index).
/// OpCapability, OpExecutionMode's mode, OpEntryPoint's execution model, OpDecorate's and
/// OpMemberDecorate's decoration, OpTypePointer's and OpVariable's storage class,
/// OpTypeImage's dimension and format, OpFunction's control, OpLoad's memory access,
/// OpMemoryModel's addressing and memory models.
const ENUMERANT_AT: [(u32, usize); 12] = [
    (17, 1),
    (16, 2),
    (15, 1),
    (71, 2),
    (72, 3),
    (32, 2),
    (59, 3),
    (25, 3),
    (25, 8),
    (54, 3),
    (61, 4),
    (14, 2),
];

/// Issue 30: one enumerant operand set to a value no grammar has (9000–9999, huge), to
/// another existing value, or to a random word.
fn mutate_enumerant(words: &[u32], insts: &[usize], rng: &mut Rng) -> Vec<u32> {
    let mut w = words.to_vec();
    let (op, at) = ENUMERANT_AT[rng.below(ENUMERANT_AT.len())];
    let found = find_op(&w, insts, op);
    let Some(&i) = found.get(rng.below(found.len())) else {
        return w;
    };
    if at < (w[i] >> 16) as usize {
        w[i + at] = match rng.below(4) {
            0 => 9000 + rng.below(1000) as u32,
            1 => HUGE[rng.below(HUGE.len())],
            2 => rng.below(64) as u32,
            _ => rng.next() as u32,
        };
    }
    w
}

/// Issue 30: an instruction of an opcode no grammar has (0x7F00–0x7FFF), of 1–6 words
/// holding ids and literals, inserted before a random instruction (inside or outside a
/// function).
fn with_unknown_instruction(words: &[u32], insts: &[usize], rng: &mut Rng) -> Vec<u32> {
    let mut w = words.to_vec();
    let count = 1 + rng.below(6);
    let mut inst = vec![((count as u32) << 16) | (0x7f00 + rng.below(0x100) as u32)];
    for _ in 1..count {
        inst.push(rng.below(w[3] as usize + 4) as u32);
    }
    let at = insts
        .get(rng.below(insts.len()))
        .copied()
        .unwrap_or(w.len());
    w.splice(at..at, inst);
    w
}

/// Issue 30, without the corpus: kiln's fixtures and repros with enumerants set to values newer than
/// any grammar and unknown instructions inserted, 20,000 cases. Each ends `Ok` or in a
/// coded error; an unknown capability or an unknown instruction alone always loads.
#[test]
fn unknown_enumerants_and_instructions_never_panic() {
    count_panics();
    let seeds: Vec<Vec<u32>> = common::fixtures::SPV
        .iter()
        .chain(common::fixtures::REPROS)
        .filter_map(|(_, bytes)| Some(ShaderModule::from_bytes(bytes).ok()?.words().to_vec()))
        .collect();
    assert!(seeds.len() > 20, "{} seed modules", seeds.len());
    let mut rng = Rng(0x3330);
    let (mut ok, mut errors) = (0, 0);
    for case in 0..20_000 {
        let words = &seeds[rng.below(seeds.len())];
        let insts = instructions(words);
        let (w, must_load) = match case % 3 {
            0 => (mutate_enumerant(words, &insts, &mut rng), false),
            1 => (with_unknown_instruction(words, &insts, &mut rng), true),
            _ => {
                // A capability no grammar has: must load and be kept as its number.
                let mut w = words.clone();
                let cap = 9000 + rng.below(1000) as u32;
                let at = insts.first().copied().unwrap_or(5);
                w.splice(at..at, [(2 << 16) | 17, cap]);
                let m = ShaderModule::from_spirv(&w).unwrap();
                assert!(m.reflection().capabilities.contains(&cap.to_string()));
                (w, true)
            }
        };
        match ShaderModule::from_spirv(&w) {
            Ok(_) => ok += 1,
            Err(e) => {
                assert!(!must_load, "case {case}: {e}");
                assert!(e.code().starts_with("KILN-E"), "{e}");
                errors += 1;
            }
        }
    }
    println!("unknown enumerants: {ok} reflected, {errors} coded errors");
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

/// The seed modules: the corpus's and the fixtures'; `None` when the corpus tier is skipped.
fn seeds() -> Option<Vec<(String, Vec<u32>)>> {
    let root = corpus::root()?;
    let mut modules: Vec<(String, Result<ShaderModule, kiln::ShaderError>)> =
        corpus::files(&root, ".spv")
            .into_iter()
            .map(|p| (p.display().to_string(), ShaderModule::from_file(&p)))
            .collect();
    modules.extend(
        common::fixtures::SPV
            .iter()
            .map(|(name, bytes)| (name.to_string(), ShaderModule::from_bytes(bytes))),
    );
    let seeds = modules
        .into_iter()
        .filter_map(|(name, m)| {
            let m = m.ok()?;
            // Small modules keep the run short; every kind of construct is still covered.
            (m.words().len() <= 3000).then(|| (name, m.words().to_vec()))
        })
        .collect();
    Some(seeds)
}

fn run(seeds: &[(String, Vec<u32>)], cases: usize, seed: u64) -> (usize, usize, Duration) {
    count_panics();
    let mut rng = Rng(seed);
    let (mut ok, mut errors) = (0, 0);
    let mut slowest = Duration::ZERO;
    for _ in 0..cases {
        let (_, words) = &seeds[rng.below(seeds.len())];
        let mut w = mutate(words, &mut rng);
        if rng.below(4) == 0 {
            w = mutate(&w, &mut rng); // two mutations on top of each other
        }
        if let Some(dir) = std::env::var_os("KILN_FUZZ_DUMP") {
            // Debugging aid: the case about to run, so an abort leaves it behind.
            let bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
            let _ = std::fs::write(
                std::path::Path::new(&dir).join(format!("case-{seed}.spv")),
                bytes,
            );
        }
        let start = Instant::now();
        match ShaderModule::from_spirv(&w) {
            Ok(m) => {
                ok += 1;
                // What the pipeline layer does with a reflected module must hold too.
                for ep in &m.reflection().entry_points {
                    let _ = kiln::PipelineLayoutDesc::from_stages(&[(&m, ep.name.as_str())]);
                }
            }
            Err(e) => {
                assert!(e.code().starts_with("KILN-E"), "{e}");
                errors += 1;
            }
        }
        slowest = slowest.max(start.elapsed());
    }
    (ok, errors, slowest)
}

#[test]
fn mutated_corpus_modules_never_panic_or_hang() {
    count_panics();
    let Some(seeds) = seeds() else {
        return;
    };
    assert!(seeds.len() > 150, "{} seed modules", seeds.len());
    const CASES: usize = 100_000;
    let start = Instant::now();
    let threads = 2;
    let results: Vec<(usize, usize, Duration)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let seeds = &seeds;
                s.spawn(move || run(seeds, CASES / threads, 0x6b69_6c6e + t as u64))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let ok: usize = results.iter().map(|r| r.0).sum();
    let errors: usize = results.iter().map(|r| r.1).sum();
    let slowest = results.iter().map(|r| r.2).max().unwrap_or_default();
    println!(
        "fuzz: {} cases from {} seed modules in {:.1} s: {ok} reflected, {errors} coded errors, \
         slowest case {:.1} ms",
        ok + errors,
        seeds.len(),
        start.elapsed().as_secs_f64(),
        slowest.as_secs_f64() * 1e3
    );
    assert_eq!(ok + errors, CASES);
    let panics = PANICS.load(Ordering::SeqCst);
    assert_eq!(
        panics,
        0,
        "{panics} panic(s); first: {:?}",
        FIRST_PANIC.lock().unwrap()
    );
}

/// Appends `OpSpecConstantOp %uint %new <operation> %a %b` before the first OpFunction.
fn with_spec_op(words: &[u32], operation: u32) -> Vec<u32> {
    let mut w = words.to_vec();
    let insts = instructions(&w);
    let ty = insts
        .iter()
        .find(|&&i| opcode(w[i]) == 21)
        .map(|&i| w[i + 1])
        .unwrap();
    let at = insts.iter().copied().find(|&i| opcode(w[i]) == 54).unwrap();
    let id = w[3];
    w[3] += 1;
    w.splice(at..at, [(6 << 16) | 52, ty, id, operation, 1, 1]);
    w
}

#[test]
fn spec_constant_op_with_a_non_plain_operation_is_a_coded_error() {
    count_panics();
    let words = common::fixtures::module("spec_ops.spvasm.spv")
        .words()
        .to_vec();
    // OpConstant, OpSpecConstant, OpSpecConstantOp, OpSwitch: rspirv would panic.
    for op in [43, 50, 52, 251] {
        let err = ShaderModule::from_spirv(&with_spec_op(&words, op)).unwrap_err();
        assert_eq!(err.code(), "KILN-E011", "operation {op}: {err}");
        assert!(err.to_string().contains("OpSpecConstantOp"), "{err}");
    }
    // A plain integer operation still reflects.
    assert!(ShaderModule::from_spirv(&with_spec_op(&words, 128)).is_ok());
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}

#[test]
fn call_and_type_cycles_terminate() {
    count_panics();
    let words = common::fixtures::module("fn_params.comp.spv")
        .words()
        .to_vec();
    let insts = instructions(&words);
    // Every OpFunctionCall calls `main` itself: recursion through the whole call graph.
    let main = insts
        .iter()
        .find(|&&i| opcode(words[i]) == 15)
        .map(|&i| words[i + 2])
        .unwrap();
    let mut w = words.clone();
    for &i in insts.iter().filter(|&&i| opcode(words[i]) == 57) {
        w[i + 3] = main;
    }
    let m = ShaderModule::from_spirv(&w).unwrap();
    // Only main's own uses remain reachable: the images passed as call arguments.
    let used: Vec<_> = m.reflection().entry_points[0]
        .bindings
        .iter()
        .map(|b| (b.set, b.binding))
        .collect();
    assert_eq!(used, [(0, 0), (0, 1)]);
    // A struct whose member is the struct itself (only possible in a corrupt module).
    let mut w = words.clone();
    if let Some(&i) = insts.iter().find(|&&i| opcode(words[i]) == 30) {
        w[i + 2] = w[i + 1];
    }
    let _ = ShaderModule::from_spirv(&w);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0);
}
