//! [`Lanes::step`] against `State::apply` on the whole compute domain.

use super::super::Ctx;
use super::*;

/// The last barrier of flags (bits 0..6: destination uniform read, storage read, storage
/// write, compute stage; source compute stage, storage write); `extra`: its first scope
/// also holds a transfer write (which changes nothing here).
fn last_of(flags: u32, extra: bool) -> Need {
    let f = |i: u32| flags & (1 << i) != 0;
    let mut l = Need {
        src_stage: compute_if(f(4)),
        src_access: if f(5) {
            A::SHADER_STORAGE_WRITE
        } else {
            A::NONE
        },
        dst_stage: compute_if(f(3)),
        dst_access: A::NONE,
    };
    for (i, a) in [
        (0, A::UNIFORM_READ),
        (1, A::SHADER_STORAGE_READ),
        (2, A::SHADER_STORAGE_WRITE),
    ] {
        if f(i) {
            l.dst_access |= a;
        }
    }
    if extra {
        l.src_stage |= S::ALL_TRANSFER;
        l.src_access |= A::TRANSFER_WRITE;
    }
    l
}

/// Case `k` (12 bits): a state in the domain (7 flags), the stamps of its write and read
/// before the last barrier's cover or after it (2), a use (3: uniform read, storage read,
/// storage write; never none). `None`: the use accesses nothing.
fn case(k: u32) -> Option<(State, Use)> {
    let f = |i: u32| k & (1 << i) != 0;
    let u = k >> 9;
    if u == 0 {
        return None;
    }
    let mut visible_access = A::NONE;
    let mut read = A::NONE;
    for (i, a) in [
        (0, A::UNIFORM_READ),
        (1, A::SHADER_STORAGE_READ),
        (2, A::SHADER_STORAGE_WRITE),
    ] {
        if f(i) {
            visible_access |= a;
        }
        if i < 2 && u & (1 << i) != 0 {
            read |= a;
        }
    }
    let written = f(3);
    let read_stage = f(6);
    let state = State {
        write_stage: compute_if(written),
        write_access: if written {
            A::SHADER_STORAGE_WRITE
        } else {
            A::NONE
        },
        visible_stage: compute_if(f(4)),
        visible_access,
        read_stage: compute_if(read_stage),
        war_ok: compute_if(f(5)),
        flush: FLUSH,
        write_cmd: if !written {
            0
        } else if f(7) {
            5
        } else {
            15
        },
        read_cmd: if !read_stage {
            0
        } else if f(8) {
            5
        } else {
            15
        },
    };
    let write = if u & 4 != 0 {
        A::SHADER_STORAGE_WRITE
    } else {
        A::NONE
    };
    Some((
        state,
        Use {
            stage: S::COMPUTE_SHADER,
            read,
            write,
        },
    ))
}

const FLUSH: u32 = 4;
const COVER: u32 = 10;
const CMD: u32 = 20;

/// A state with its stamps replaced by their order against `cover` and `cmd` (what the
/// tracker's answers depend on).
fn ordered(s: State, cover: u32, cmd: u32) -> State {
    let class = |stamp: u32| {
        if stamp < cover {
            0
        } else if stamp < cmd {
            1
        } else {
            2
        }
    };
    State {
        write_cmd: class(s.write_cmd),
        read_cmd: class(s.read_cmd),
        ..s
    }
}

/// Every case in a lane of its own (the lane moving through all 64) and 64 cases at once,
/// under every last barrier: the same barrier as `State::apply` (at once: the union of the
/// cases'), the same next states up to the stamps' order, and after a barrier recorded for
/// the command, the stamps in the same order against it.
#[test]
fn step_is_state_apply_lane_by_lane() {
    let (mut cases, mut needs) = (0, 0);
    for flags in 0..1u32 << 6 {
        let last = last_of(flags, flags % 3 == 0);
        let l = Last::of(&last).expect("in the domain");
        let ctx = Ctx {
            flush: FLUSH,
            rendering: false,
            cmd: CMD,
            last,
            cover: COVER,
            graphics_access: A::NONE,
        };
        for batch in 0..1u32 << 6 {
            let (mut all, mut all_uses, mut all_need) =
                (Lanes::default(), UseLanes::default(), Need::default());
            let mut expected = Vec::new();
            for lane in 0..64 {
                let k = batch * 64 + lane;
                let Some((state, u)) = case(k) else {
                    continue;
                };
                let (mut next, mut need) = (state, Need::default());
                next.apply(u, &mut need, &ctx);
                let mut one = Lanes::default();
                let mut uses = UseLanes::default();
                assert!(one.enter(lane, &state, FLUSH, COVER), "case {k}");
                assert!(all.enter(lane, &state, FLUSH, COVER), "case {k}");
                assert!(uses.add(lane, u) && all_uses.add(lane, u));
                let bits = one.step(&uses, &l, true);
                let what = format!("case {k}: {state:?} {u:?} last {last:?}");
                assert_eq!(need_of(bits), need, "{what}");
                assert_eq!(
                    ordered(one.state(lane, FLUSH, COVER, CMD), COVER, CMD),
                    ordered(next, COVER, CMD),
                    "{what}"
                );
                all_need.merge(need);
                expected.push((lane, next));
                cases += 1;
                needs += usize::from(!need.is_empty());
            }
            let bits = all.step(&all_uses, &l, true);
            assert_eq!(need_of(bits), all_need, "batch {batch}");
            all.barrier_recorded();
            for (lane, next) in expected {
                // After a barrier at `CMD`: `cover` is `CMD`.
                assert_eq!(
                    ordered(all.state(lane, FLUSH, CMD, CMD), CMD, CMD),
                    ordered(next, CMD, CMD),
                    "batch {batch} lane {lane}"
                );
            }
        }
    }
    assert_eq!(cases, 64 * 7 * 512);
    // Not trivial: a good part of the cases need a barrier, and not all.
    assert!(needs > cases / 5 && needs < cases, "{needs} of {cases}");
}

/// Uses, states and barriers outside the domain are refused: they take the general path.
#[test]
fn outside_the_domain_nothing_enters() {
    let compute = |read, write| Use {
        stage: S::COMPUTE_SHADER,
        read,
        write,
    };
    let mut u = UseLanes::default();
    assert!(u.add(3, compute(A::UNIFORM_READ, A::NONE)));
    assert!(u.add(5, compute(A::SHADER_STORAGE_READ, A::SHADER_STORAGE_WRITE)));
    assert_eq!(
        u,
        UseLanes {
            ur: 1 << 3,
            sr: 1 << 5,
            sw: 1 << 5,
            read: 1 << 3 | 1 << 5,
            read_only: 1 << 3,
            all: 1 << 3 | 1 << 5,
        }
    );
    for (lane, use_) in [
        (0, compute(A::SHADER_SAMPLED_READ, A::NONE)),
        (0, compute(A::SHADER_STORAGE_WRITE, A::NONE)),
        (
            0,
            compute(A::NONE, A::SHADER_STORAGE_WRITE | A::TRANSFER_WRITE),
        ),
        (0, compute(A::NONE, A::NONE)),
        (64, compute(A::UNIFORM_READ, A::NONE)),
        (
            0,
            Use {
                stage: S::COMPUTE_SHADER | S::FRAGMENT_SHADER,
                read: A::SHADER_STORAGE_READ,
                write: A::NONE,
            },
        ),
        (
            0,
            Use {
                stage: S::ALL_TRANSFER,
                read: A::TRANSFER_READ,
                write: A::NONE,
            },
        ),
    ] {
        assert!(!u.add(lane, use_), "{use_:?} in lane {lane}");
    }
    let mut l = last_of(0b11_1010, false);
    assert!(Last::of(&l).is_some());
    l.dst_stage |= S::ALL_TRANSFER;
    assert_eq!(Last::of(&l), None, "a transfer in the second scope");
    let l = Need {
        dst_access: A::TRANSFER_READ,
        ..last_of(0b1000, false)
    };
    assert_eq!(Last::of(&l), None, "a transfer read in the second scope");
    let (written, _) = case((1 << 3) | (1 << 9)).expect("a written state, a uniform read");
    let mut lanes = Lanes::default();
    assert!(lanes.enter(0, &written, FLUSH, COVER));
    for (s, flush) in [
        (
            State {
                visible_stage: S::COMPUTE_SHADER | S::FRAGMENT_SHADER,
                ..written
            },
            FLUSH,
        ),
        (
            State {
                war_ok: super::super::GRAPHICS_STAGES,
                ..written
            },
            FLUSH,
        ),
        (
            State {
                write_access: A::TRANSFER_WRITE,
                ..written
            },
            FLUSH,
        ),
        (
            State {
                visible_access: A::SHADER_SAMPLED_READ,
                ..written
            },
            FLUSH,
        ),
        (written, FLUSH - 1),
    ] {
        assert!(!lanes.enter(1, &s, flush, COVER), "{s:?} at flush {flush}");
    }
    assert!(!lanes.enter(64, &written, FLUSH, COVER));
    assert_eq!(lanes.fast, 1, "only lane 0 entered");
}

#[test]
fn the_tables_of_a_lane_barrier_are_its_need() {
    for bits in 0..64u8 {
        let b = LaneNeed(bits);
        let (n, m) = (b.need(), b.memory_barrier());
        assert_eq!(n, need_of(u32::from(bits)));
        assert_eq!(b.is_empty(), n.is_empty(), "{bits}");
        assert_eq!(m.s_type, vk::StructureType::MEMORY_BARRIER_2);
        assert!(m.p_next.is_null());
        assert_eq!(
            (
                m.src_stage_mask,
                m.src_access_mask,
                m.dst_stage_mask,
                m.dst_access_mask
            ),
            (n.src_stage, n.src_access, n.dst_stage, n.dst_access),
            "{bits}"
        );
        assert_eq!(b.last(), Last::of(&n), "{bits}");
        let d = b.dependency_info();
        assert_eq!(d.s_type, vk::StructureType::DEPENDENCY_INFO);
        assert!(d.p_next.is_null());
        assert_eq!(d.memory_barrier_count, 1);
        assert!(std::ptr::eq(
            d.p_memory_barriers,
            &MEMORY_BARRIERS[usize::from(bits)]
        ));
        assert_eq!(
            (d.buffer_memory_barrier_count, d.image_memory_barrier_count),
            (0, 0)
        );
    }
    // The bits name the accesses: a storage write to a uniform read.
    let n = LaneNeed((SRC_STAGE | SRC_SW | DST_STAGE | NEED_UR) as u8).need();
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(n.dst_access, A::UNIFORM_READ);
    assert_eq!(
        (n.src_stage, n.dst_stage),
        (S::COMPUTE_SHADER, S::COMPUTE_SHADER)
    );
}

/// The last barrier the tracker answers with (its `Need` and its lanes) is the one
/// recorded last, whichever path recorded it, through resets and `no_cover`.
#[test]
fn the_last_barrier_is_the_one_recorded_last_on_either_path() {
    let check = |t: &Tracker, want: Need, what: &str| {
        assert_eq!(t.last.need(), want, "{what}: need");
        assert_eq!(
            t.last.lanes().copied(),
            Last::of(&want),
            "{what}: its lanes"
        );
    };
    let b = LaneNeed((SRC_STAGE | SRC_SW | DST_STAGE | NEED_SR) as u8);
    let c = LaneNeed((SRC_STAGE | DST_STAGE) as u8);
    let transfer = Need {
        src_stage: S::ALL_TRANSFER,
        src_access: A::TRANSFER_WRITE,
        dst_stage: S::COMPUTE_SHADER,
        dst_access: A::UNIFORM_READ,
    };
    let mut t = Tracker::new(false);
    check(&t, Need::default(), "new");
    t.recorded_lanes(b);
    check(&t, b.need(), "lanes b");
    t.recorded_lanes(b);
    check(&t, b.need(), "lanes b again");
    t.recorded_lanes(c);
    check(&t, c.need(), "lanes c");
    t.recorded(transfer);
    check(&t, transfer, "general");
    t.recorded_lanes(c);
    check(&t, c.need(), "lanes c after general");
    t.recorded(c.need());
    check(&t, c.need(), "general, the same barrier");
    t.recorded_lanes(b);
    t.reset();
    check(&t, Need::default(), "reset after lanes b");
    t.recorded_lanes(b);
    check(&t, b.need(), "lanes b after reset");
    t.no_cover = true;
    t.recorded_lanes(c);
    t.recorded(transfer);
    check(&t, b.need(), "no_cover");
}
