//! The programs the fuzzer generates: their steps ([`Op`]), the commands of a recording
//! ([`Cmd`]) and how they run ([`Mode`]), and the proptest strategies that draw them.

use proptest::prelude::*;

use super::{BUFS, IMGS, SETS};

/// Where a buffer's memory lives.
#[derive(Clone, Copy, Debug)]
pub(super) enum Loc {
    GpuOnly,
    CpuToGpu,
    GpuToCpu,
}

/// How a recording runs.
#[derive(Clone, Copy, Debug)]
pub(super) enum Mode {
    /// `Device::execute`: recorded, submitted, waited for.
    Execute,
    /// `Device::submit`: the submission is kept and waited for (or dropped) later.
    Submit,
    /// `Device::record` once, then this many `Recording::execute`s (0: never submitted).
    Record(u8),
}

/// A command of one recording.
#[derive(Clone, Debug)]
pub(super) enum Cmd {
    /// vector_add with set `s` over `LEN` threads (c = a + b).
    Dispatch(usize),
    /// `fill_buffer` with a whole float.
    Fill(usize, u8),
    /// `copy_buffer` of `n` elements between element offsets (maybe out of range).
    Copy {
        src: usize,
        dst: usize,
        so: u8,
        d_o: u8,
        n: u8,
    },
    /// A buffer copied into an image (256 bytes both).
    ToImage(usize, usize),
    /// An image copied into a buffer.
    FromImage(usize, usize),
    /// An image moved to a layout (contents kept).
    Transition(usize, u8),
    Barrier,
    FullBarrier,
    /// Turns the automatic dispatch barriers off, then places a barrier after each dispatch.
    Manual,
}

/// One step of a program.
#[derive(Clone, Debug)]
pub(super) enum Op {
    NewBuffer(usize, Loc),
    DropBuffer(usize),
    Upload(usize, u8),
    Read(usize),
    /// A set of vector_add (a, b, c from buffer slots), from the shared or an own pipeline.
    NewSet {
        set: usize,
        abc: [usize; 3],
        own_pipeline: bool,
    },
    /// A write that cannot work: a binding the set lacks.
    WrongWrite(usize, u32),
    /// A set left with binding 2 unwritten, bound by a dispatch: refused.
    Unwritten(usize),
    DropSet(usize),
    NewImage(usize),
    UploadImage(usize, u8),
    ReadImage(usize),
    Run(Vec<Cmd>, Mode),
    /// Waits for (or drops) the oldest pending submission.
    Settle(bool),
}

fn loc() -> impl Strategy<Value = Loc> {
    prop_oneof![Just(Loc::GpuOnly), Just(Loc::CpuToGpu), Just(Loc::GpuToCpu)]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let b = 0..BUFS;
    let i = 0..IMGS;
    prop_oneof![
        4 => (0..SETS).prop_map(Cmd::Dispatch),
        2 => (b.clone(), 0u8..8).prop_map(|(b, v)| Cmd::Fill(b, v)),
        3 => (b.clone(), b.clone(), 0u8..70, 0u8..70, 0u8..70)
            .prop_map(|(src, dst, so, d_o, n)| Cmd::Copy { src, dst, so, d_o, n }),
        1 => (b.clone(), i.clone()).prop_map(|(b, i)| Cmd::ToImage(b, i)),
        1 => (i.clone(), b).prop_map(|(i, b)| Cmd::FromImage(i, b)),
        1 => (i, 0u8..3).prop_map(|(i, l)| Cmd::Transition(i, l)),
        1 => Just(Cmd::Barrier),
        1 => Just(Cmd::FullBarrier),
        1 => Just(Cmd::Manual),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        3 => Just(Mode::Execute),
        2 => Just(Mode::Submit),
        2 => (0u8..4).prop_map(Mode::Record),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let b = 0..BUFS;
    let s = 0..SETS;
    let i = 0..IMGS;
    prop_oneof![
        4 => (b.clone(), loc()).prop_map(|(b, l)| Op::NewBuffer(b, l)),
        1 => b.clone().prop_map(Op::DropBuffer),
        2 => (b.clone(), 0u8..8).prop_map(|(b, v)| Op::Upload(b, v)),
        3 => b.clone().prop_map(Op::Read),
        3 => (s.clone(), [b.clone(), b.clone(), b.clone()], prop::bool::weighted(0.05))
            .prop_map(|(set, abc, own_pipeline)| Op::NewSet { set, abc, own_pipeline }),
        1 => (s.clone(), 3u32..6).prop_map(|(s, b)| Op::WrongWrite(s, b)),
        1 => b.prop_map(Op::Unwritten),
        1 => s.prop_map(Op::DropSet),
        1 => i.clone().prop_map(Op::NewImage),
        1 => (i.clone(), 0u8..8).prop_map(|(i, v)| Op::UploadImage(i, v)),
        1 => i.prop_map(Op::ReadImage),
        6 => (prop::collection::vec(cmd(), 1..5), mode()).prop_map(|(c, m)| Op::Run(c, m)),
        1 => any::<bool>().prop_map(Op::Settle),
    ]
}

/// A program: where its four starting buffers live, and its steps. Every program starts
/// with those buffers (zeroed), set 0 over buffers 0, 1, 2 and image 0, and ends by reading
/// every buffer and image back.
pub(super) type Program = ([Loc; BUFS], Vec<Op>);

/// One case: one program, or two run at once on two threads.
pub(super) fn case() -> impl Strategy<Value = Vec<Program>> {
    let program = || {
        (
            [loc(), loc(), loc(), loc()],
            prop::collection::vec(op(), 1..9),
        )
    };
    prop_oneof![
        6 => program().prop_map(|p| vec![p]),
        1 => (program(), program()).prop_map(|(a, b)| vec![a, b]),
    ]
}
