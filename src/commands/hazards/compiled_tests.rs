//! Compiled uses (`Tracker::apply_compiled`, warm and cold: the dispatch path of one bound
//! set, with its compute lanes) against the plain path (`Tracker::apply_resolved` of the
//! same uses, no lanes): random streams driven through two trackers, the needs and every
//! buffer span's state (command stamps as their order against the last barrier and the
//! last command, what answers depend on) compared at every step.

use super::*;

/// A xorshift stream (deterministic per seed).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The uses of the stream: the three compute classes of a bound set (uniform read, storage
/// read, storage read+write), a storage write, transfers, vertex input and fragment reads
/// and writes (draws), an indirect read.
const USES: [Use; 9] = [
    Use {
        stage: S::COMPUTE_SHADER,
        read: A::UNIFORM_READ,
        write: A::NONE,
    },
    Use {
        stage: S::COMPUTE_SHADER,
        read: A::SHADER_STORAGE_READ,
        write: A::NONE,
    },
    Use {
        stage: S::COMPUTE_SHADER,
        read: A::SHADER_STORAGE_READ,
        write: A::SHADER_STORAGE_WRITE,
    },
    Use {
        stage: S::COMPUTE_SHADER,
        read: A::NONE,
        write: A::SHADER_STORAGE_WRITE,
    },
    Use {
        stage: S::ALL_TRANSFER,
        read: A::TRANSFER_READ,
        write: A::NONE,
    },
    Use {
        stage: S::ALL_TRANSFER,
        read: A::NONE,
        write: A::TRANSFER_WRITE,
    },
    Use {
        stage: S::VERTEX_ATTRIBUTE_INPUT,
        read: A::VERTEX_ATTRIBUTE_READ,
        write: A::NONE,
    },
    Use {
        stage: S::FRAGMENT_SHADER,
        read: A::SHADER_STORAGE_READ,
        write: A::SHADER_STORAGE_WRITE,
    },
    Use {
        stage: S::DRAW_INDIRECT,
        read: A::INDIRECT_COMMAND_READ,
        write: A::NONE,
    },
];

/// Byte ranges of the 256-byte buffers: the whole buffer most of the time, else a part
/// (split spans, merged back by a later whole use).
const RANGES: [(u64, u64); 6] = [(0, 256), (0, 256), (0, 256), (0, 64), (64, 256), (32, 160)];

/// A random key: one of 14 buffers (a range of it) or an image (some of its mips and
/// layers).
fn random_key(rng: &mut Rng) -> Key {
    if rng.below(16) == 0 {
        let range = [
            Subresources::all(),
            Subresources::mip(1),
            Subresources::layer(0),
        ][rng.below(3) as usize];
        return Key::Image(
            100,
            ImageRange {
                range: range.resolve(2, 2),
                levels: 2,
                layers: 2,
            },
        );
    }
    let (start, end) = RANGES[rng.below(RANGES.len() as u64) as usize];
    Key::Buffer(1 + rng.below(14), start, end)
}

/// A compiled set of the stream: 6 consecutive buffers of 12, the three compute classes of a
/// bound set; sets 6 and 7 bind parts of their buffers (split spans on the compiled path).
fn compiled_set(first: u64) -> Vec<(Key, Use)> {
    (0..6)
        .map(|j| {
            let class = [0, 0, 1, 1, 2, 2][j];
            let (start, end) = match first {
                6 => RANGES[3 + j % 3],
                7 => RANGES[5 - j % 3],
                _ => (0, 256),
            };
            (
                Key::Buffer(1 + (first + j as u64) % 12, start, end),
                USES[class],
            )
        })
        .collect()
}

/// What a side's tracker holds, for the comparison: every buffer span of this generation
/// with its state, `epoch`, `changes`, the unflushed writes and reads.
type Snapshot = (Vec<Vec<(u64, u64, State)>>, u64, u64, (S, A), S);

/// A set of a side: its uses resolved (and merged, as `SetUses` keeps them), their summary,
/// and the generation they were last applied at as compiled uses.
type Set = (Vec<(Res, Use)>, UsesSummary, u32, Option<UseLanes>);

/// One side of the comparison: a tracker and its sets, with the generation each was applied
/// at (`automatic`'s warm rule).
struct Side {
    t: Tracker,
    sets: Vec<Set>,
}

impl Side {
    fn new(ray_query: bool, lanes: bool) -> Side {
        let mut t = Tracker::new(ray_query);
        t.no_fast = !lanes;
        let mut sets = Vec::new();
        // Set 8: buffers 13 and 14 first used (the ranges of their slots, which the lanes
        // keep) in part, in the lanes' domain: a slot enters the lanes only from its one
        // span at that range, not from the whole buffer a copy made it.
        let part = vec![
            (Key::Buffer(13, 0, 64), USES[2]),
            (Key::Buffer(14, 64, 256), USES[0]),
            (Key::Buffer(3, 0, 256), USES[1]),
        ];
        for first in 0..9 {
            let keys = if first == 8 {
                part.clone()
            } else {
                compiled_set(first)
            };
            let mut resolved: Vec<(Res, Use)> =
                keys.into_iter().map(|(k, u)| (t.resolve(k), u)).collect();
            merge_uses(&mut resolved);
            let summary = UsesSummary::of(&resolved);
            let lanes = t.use_lanes(&resolved);
            sets.push((resolved, summary, u32::MAX, lanes));
        }
        Side { t, sets }
    }

    /// Applies set `i`: compiled (warm at the generation it was last applied at), or
    /// through the plain path.
    fn dispatch(&mut self, i: usize, compiled: bool) -> CompiledNeed {
        let gen = self.t.generation();
        let (uses, summary, warm_gen, lanes) = &mut self.sets[i];
        if !compiled {
            return CompiledNeed::Spans(self.t.apply_resolved(uses));
        }
        let need = self
            .t
            .apply_compiled(uses, summary, *warm_gen == gen, lanes.as_ref());
        *warm_gen = gen;
        need
    }

    /// Every buffer span of this generation; the tracker's own counters.
    fn snapshot(&self) -> Snapshot {
        let t = &self.t;
        let spans = t
            .slots
            .iter()
            .enumerate()
            .map(|(i, b)| {
                if b.gen != t.gen {
                    return Vec::new();
                }
                let class = |stamp: u32| {
                    if stamp < t.cover {
                        0
                    } else if stamp < t.cmd {
                        1
                    } else {
                        2
                    }
                };
                t.spans_of(i)
                    .iter()
                    .map(|s| {
                        let state = State {
                            write_cmd: class(s.state.write_cmd),
                            read_cmd: class(s.state.read_cmd),
                            ..s.state
                        };
                        (s.start, s.end, state)
                    })
                    .collect()
            })
            .collect();
        (
            spans,
            t.epoch,
            t.changes,
            t.unflushed_write,
            t.unflushed_read,
        )
    }
}

/// A barrier reported at any point: compute to compute with some of the accesses, at
/// times none or wider.
fn random_barrier(rng: &mut Rng) -> Need {
    let mut bit = |a: A| if rng.below(2) == 0 { a } else { A::NONE };
    let mut b = Need {
        src_stage: S::COMPUTE_SHADER,
        src_access: bit(A::SHADER_STORAGE_WRITE),
        dst_stage: S::COMPUTE_SHADER,
        dst_access: bit(A::UNIFORM_READ)
            | bit(A::SHADER_STORAGE_READ)
            | bit(A::SHADER_STORAGE_WRITE),
    };
    match rng.below(8) {
        0 => b = Need::default(),
        1 => b.dst_stage |= S::ALL_TRANSFER,
        2 => b.src_stage |= S::FRAGMENT_SHADER,
        3 => b.dst_stage = S::NONE,
        _ => {}
    }
    b
}

/// One random stream of `steps` operations: both sides get the same, and answer the same.
fn compare_stream(seed: u64, steps: usize) {
    let mut rng = Rng(seed | 1);
    let ray_query = seed.is_multiple_of(2);
    let (mut fast, mut slow) = (Side::new(ray_query, true), Side::new(ray_query, false));
    // The bench's A/B switch: the barriers reported are ignored.
    if seed % 5 == 3 {
        fast.t.no_cover = true;
        slow.t.no_cover = true;
    }
    let mut rendering = false;
    for step in 0..steps {
        let op = rng.below(100);
        // A barrier the lanes asked for (recorded from their tables, `recorded_lanes`).
        let mut lane = None;
        let need = match op {
            0..=49 => {
                let i = rng.below(9) as usize;
                let n = fast.dispatch(i, true);
                assert_eq!(
                    n.need(),
                    slow.dispatch(i, false).need(),
                    "seed {seed} step {step}: set {i}"
                );
                if let CompiledNeed::Lanes(b) = n {
                    lane = Some(b);
                }
                n.need()
            }
            50..=84 => {
                let count = 1 + rng.below(4);
                let uses: Vec<(Key, Use)> = (0..count)
                    .map(|_| (random_key(&mut rng), USES[rng.below(9) as usize]))
                    .collect();
                let n = fast.t.apply(&mut uses.clone());
                assert_eq!(
                    n,
                    slow.t.apply(&mut uses.clone()),
                    "seed {seed} step {step}"
                );
                n
            }
            85..=88 if !rendering => {
                rendering = true;
                let f = fast.t.flush();
                assert_eq!(f, slow.t.flush(), "seed {seed} step {step}: flush");
                Need::default()
            }
            85..=91 if rendering => {
                rendering = false;
                fast.t.end_rendering();
                slow.t.end_rendering();
                Need::default()
            }
            92..=93 => {
                fast.t.reset();
                slow.t.reset();
                Need::default()
            }
            // A barrier reported at any point (twice in a row, after a flush or a reset),
            // compute to compute with some of the accesses, at times none or wider.
            94..=96 => {
                let b = random_barrier(&mut rng);
                fast.t.recorded(b);
                slow.t.recorded(b);
                Need::default()
            }
            _ => Need::default(),
        };
        // The recorder records what a command needs (outside a scope, or a split), at
        // times with more stages than asked (a queue's masking only removes some).
        // A barrier the lanes asked for is recorded from their tables (`recorded_lanes`); at
        // times through `recorded`, as on a queue without the compute stage, to mix the two.
        if !need.is_empty() && rng.below(8) != 0 {
            let mut recorded = need;
            match lane {
                Some(b) if rng.below(4) != 0 => fast.t.recorded_lanes(b),
                _ => {
                    if rng.below(4) == 0 {
                        recorded.dst_stage |= S::ALL_TRANSFER;
                    }
                    fast.t.recorded(recorded);
                }
            }
            slow.t.recorded(recorded);
        }
        assert_eq!(
            fast.snapshot(),
            slow.snapshot(),
            "seed {seed} step {step}: states"
        );
    }
}

#[test]
fn compiled_uses_answer_as_the_plain_path_on_random_streams() {
    for seed in 0..24u64 {
        compare_stream(0x9E37_79B9 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D), 3000);
    }
}

/// The comparison can fail: a set whose first use on one side differs (a write where the
/// other side reads) answers differently within a short stream.
#[test]
fn a_compiled_use_that_differs_is_caught() {
    let mut fast = Side::new(false, true);
    let slow = Side::new(false, false);
    fast.sets[0].0[0].1 = USES[3];
    let mut slow = slow;
    let mut differ = false;
    for step in 0..64 {
        let i = step % 8;
        let (a, b) = (fast.dispatch(i, true), slow.dispatch(i, false));
        differ |= a != b || fast.snapshot() != slow.snapshot();
    }
    assert!(differ);
}
