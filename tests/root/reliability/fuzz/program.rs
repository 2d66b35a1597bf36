//! The programs the fuzzer generates: their steps ([`Op`]), the commands of a recording
//! ([`Cmd`], [`Draw`]), how and where they run ([`Mode`], [`On`]), and the proptest
//! strategies that draw them.

use proptest::prelude::*;

use super::{BUFS, IMGS, LEN, SETS};

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
    /// `execute`: recorded, submitted, waited for.
    Execute,
    /// `submit`: the submission is kept and waited for (or dropped) later.
    Submit,
    /// `record` once, then this many `Recording::execute`s (0: never submitted).
    Record(u8),
}

/// The queue a recording runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum On {
    /// The device's own path: `Device::execute`/`submit`/`record` (the main queue).
    Main,
    /// `Device::queue(QueueKind::Compute)`: no graphics, so a rendering scope is refused
    /// (`KILN-E120`).
    Compute,
    /// `Device::queue(QueueKind::Transfer)`: copies only, so a dispatch or a rendering
    /// scope is refused (`KILN-E120`).
    Transfer,
}

/// What a rendering scope draws: nothing, or the full-screen triangle
/// (`test/fuzz_*.{vert,frag}`), which makes every pixel the four bytes of one word.
#[derive(Clone, Copy, Debug)]
pub(super) enum Draw {
    /// No draw: the scope only clears or loads its attachment.
    Nothing,
    /// The word `float(v)`, a push constant of the fragment stage.
    Push(u8),
    /// The word at element `at` of buffer `buf`, bound as the vertex buffer: the
    /// provoking (first) vertex's R32_UINT attribute, passed flat to the fragment stage.
    Vertex { buf: usize, at: u8 },
    /// The word at element `at` of buffer `buf`, read by the fragment shader through a
    /// storage-buffer descriptor set.
    Storage { buf: usize, at: u8 },
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
    /// Turns the automatic dispatch barriers off, then places a barrier after each dispatch
    /// (and full barriers around each rendering scope).
    Manual,
    /// A rendering scope over image `img` as its one colour attachment, cleared to the
    /// bytes of `float(v)` (`clear: Some(v)`) or loaded (`None`), then `draw`.
    Render {
        img: usize,
        clear: Option<u8>,
        draw: Draw,
    },
}

/// One step of a program.
#[derive(Clone, Debug)]
pub(super) enum Op {
    NewBuffer(usize, Loc),
    DropBuffer(usize),
    /// `Buffer::upload` of [`ramp`](super::model::ramp)`(v)`.
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
    /// `Image::upload` of the bytes of [`ramp`](super::model::ramp)`(v)`.
    UploadImage(usize, u8),
    ReadImage(usize),
    Run(Vec<Cmd>, Mode, On),
    /// Waits for (or drops) the oldest pending submission.
    Settle(bool),
}

fn loc() -> impl Strategy<Value = Loc> {
    prop_oneof![Just(Loc::GpuOnly), Just(Loc::CpuToGpu), Just(Loc::GpuToCpu)]
}

fn draw() -> impl Strategy<Value = Draw> {
    let b = 0..BUFS;
    prop_oneof![
        1 => Just(Draw::Nothing),
        2 => (0u8..8).prop_map(Draw::Push),
        // Three vertices read elements at, at + 1, at + 2.
        2 => (b.clone(), 0..(LEN - 2) as u8).prop_map(|(buf, at)| Draw::Vertex { buf, at }),
        2 => (b, 0..LEN as u8).prop_map(|(buf, at)| Draw::Storage { buf, at }),
    ]
}

/// A command; `dispatch` and `render` weigh dispatches and rendering scopes (which some
/// queues refuse) against the copies, fills, transitions and barriers every queue runs.
fn cmd(dispatch: u32, render: u32) -> impl Strategy<Value = Cmd> {
    let b = 0..BUFS;
    let i = 0..IMGS;
    prop_oneof![
        dispatch => (0..SETS).prop_map(Cmd::Dispatch),
        2 => (b.clone(), 0u8..8).prop_map(|(b, v)| Cmd::Fill(b, v)),
        3 => (b.clone(), b.clone(), 0u8..70, 0u8..70, 0u8..70)
            .prop_map(|(src, dst, so, d_o, n)| Cmd::Copy { src, dst, so, d_o, n }),
        1 => (b.clone(), i.clone()).prop_map(|(b, i)| Cmd::ToImage(b, i)),
        1 => (i.clone(), b).prop_map(|(i, b)| Cmd::FromImage(i, b)),
        1 => (i.clone(), 0u8..3).prop_map(|(i, l)| Cmd::Transition(i, l)),
        1 => Just(Cmd::Barrier),
        1 => Just(Cmd::FullBarrier),
        1 => Just(Cmd::Manual),
        render => (i, prop::option::weighted(0.75, 0u8..8), draw())
            .prop_map(|(img, clear, draw)| Cmd::Render { img, clear, draw }),
    ]
}

fn mode() -> impl Strategy<Value = Mode> {
    prop_oneof![
        3 => Just(Mode::Execute),
        2 => Just(Mode::Submit),
        2 => (0u8..4).prop_map(Mode::Record),
    ]
}

/// A recording on one of the queues: the main queue gets every command; the compute
/// queue fewer rendering scopes and the transfer queue fewer dispatches too (each one
/// there makes the recording a `KILN-E120`, checked, but then nothing runs).
fn run() -> impl Strategy<Value = Op> {
    let cmds = |dispatch, render| prop::collection::vec(cmd(dispatch, render), 1..5);
    prop_oneof![
        3 => (cmds(4, 3), mode()).prop_map(|(c, m)| Op::Run(c, m, On::Main)),
        2 => (cmds(4, 1), mode()).prop_map(|(c, m)| Op::Run(c, m, On::Compute)),
        2 => (cmds(1, 1), mode()).prop_map(|(c, m)| Op::Run(c, m, On::Transfer)),
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
        7 => run(),
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
