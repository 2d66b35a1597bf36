use super::*;

const W: Use = Use {
    stage: S::COMPUTE_SHADER,
    read: A::NONE,
    write: A::SHADER_STORAGE_WRITE,
};

#[test]
fn a_recorded_barrier_covers_earlier_writes_of_other_ranges() {
    let mut t = Tracker::default();
    let c0 = Key::Buffer(1, 0, 64);
    let c1 = Key::Buffer(1, 64, 128);
    assert!(t.apply(&mut vec![(c0, W)]).is_empty());
    assert!(t.apply(&mut vec![(c1, W)]).is_empty());
    let n = t.apply(&mut vec![(c0, W)]);
    assert!(!n.is_empty());
    t.recorded(n);
    let n = t.apply(&mut vec![(c1, W)]);
    assert!(n.is_empty(), "{n:?}");
}

const R: Use = Use {
    stage: S::COMPUTE_SHADER,
    read: A::SHADER_STORAGE_READ,
    write: A::NONE,
};
const COPY: Use = Use {
    stage: S::ALL_TRANSFER,
    read: A::TRANSFER_READ,
    write: A::NONE,
};

#[test]
fn reads_before_the_last_barrier_need_no_war_wait_and_other_stages_stay_uncovered() {
    let mut t = Tracker::default();
    let (a, b, c) = (
        Key::Buffer(1, 0, 64),
        Key::Buffer(2, 0, 64),
        Key::Buffer(3, 0, 64),
    );
    assert!(t.apply(&mut vec![(a, W)]).is_empty());
    assert!(t.apply(&mut vec![(b, R)]).is_empty());
    // RAW on `a`: a compute → compute barrier.
    let n = t.apply(&mut vec![(a, R)]);
    assert_eq!(n.dst_stage, S::COMPUTE_SHADER);
    t.recorded(n);
    // A write of `b`, read before that barrier at a stage it covers: no WAR wait.
    assert!(t.apply(&mut vec![(b, W)]).is_empty());
    // `c` written after it, read by a copy: the barrier before the copy goes to the
    // transfer stage only...
    assert!(t.apply(&mut vec![(c, W)]).is_empty());
    let w2 = Key::Buffer(4, 0, 64);
    assert!(t.apply(&mut vec![(w2, W)]).is_empty());
    let n = t.apply(&mut vec![(c, COPY)]);
    assert_eq!(n.dst_stage, S::ALL_TRANSFER);
    t.recorded(n);
    // ...so a compute read of `w2` (written before it) still needs its own.
    let n = t.apply(&mut vec![(w2, R)]);
    assert_eq!(n.dst_stage, S::COMPUTE_SHADER, "{n:?}");
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
}
