use super::*;

const W: Use = Use {
    stage: S::COMPUTE_SHADER,
    read: A::NONE,
    write: A::SHADER_STORAGE_WRITE,
};
const R: Use = Use {
    stage: S::COMPUTE_SHADER,
    read: A::SHADER_STORAGE_READ,
    write: A::NONE,
};

fn run(t: &mut Tracker, uses: &[(Key, Use)]) -> Need {
    let mut v = uses.to_vec();
    t.apply(&mut v)
}

#[test]
fn raw_war_waw_and_independent_ranges() {
    let mut t = Tracker::default();
    let a = Key::Buffer(1, 0, 64);
    let b = Key::Buffer(1, 64, 128);
    assert!(run(&mut t, &[(a, W)]).is_empty());
    // Another range of the same buffer: independent.
    assert!(run(&mut t, &[(b, W)]).is_empty());
    // RAW on `a`.
    let n = run(&mut t, &[(a, R)]);
    assert_eq!(n.src_stage, S::COMPUTE_SHADER);
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(n.dst_access, A::SHADER_STORAGE_READ);
    // Read after read, and a read of what is visible already: nothing.
    assert!(run(&mut t, &[(a, R)]).is_empty());
    // WAR on `a`: an execution dependency from the reads, and the earlier write made
    // visible to this write (the reads' barrier made it visible to reads only).
    let n = run(&mut t, &[(a, W)]);
    assert_eq!(n.src_stage, S::COMPUTE_SHADER);
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(n.dst_access, A::SHADER_STORAGE_WRITE);
    // A read of the whole buffer overlaps both writes: one merged barrier.
    let whole = Key::Buffer(1, 0, 128);
    let n = run(&mut t, &[(whole, R)]);
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    let slot = t.slot_of[&1] as usize;
    assert_eq!(t.spans_of(slot).len(), 1, "equal neighbours merged");
}

/// A fill, a dispatch that reads the buffer, a second fill: the second fill needs the
/// first one's write made visible to its own transfer write, not only the dispatch's read
/// ordered before it (`SYNC-HAZARD-WRITE-AFTER-WRITE` under validation layer 1.4.309; the
/// API fuzzer's case `KILN_FUZZ_SEED=2363b3f837b4ed18…`).
#[test]
fn a_write_after_reads_of_a_write_also_waits_for_that_write() {
    let fill = Use {
        stage: S::CLEAR,
        read: A::NONE,
        write: A::TRANSFER_WRITE,
    };
    let mut t = Tracker::default();
    let a = Key::Buffer(9, 0, 256);
    assert!(run(&mut t, &[(a, fill)]).is_empty());
    let n = run(&mut t, &[(a, R)]);
    assert_eq!((n.src_stage, n.src_access), (S::CLEAR, A::TRANSFER_WRITE));
    let n = run(&mut t, &[(a, fill)]);
    assert_eq!(n.src_stage, S::COMPUTE_SHADER | S::CLEAR);
    assert_eq!(n.src_access, A::TRANSFER_WRITE);
    assert_eq!((n.dst_stage, n.dst_access), (S::CLEAR, A::TRANSFER_WRITE));
    // The same write again, now visible to a fill: a plain WAW.
    let n = run(&mut t, &[(a, fill)]);
    assert_eq!((n.src_stage, n.dst_access), (S::CLEAR, A::TRANSFER_WRITE));
}

#[test]
fn one_command_reading_and_writing_a_buffer_does_not_wait_for_itself() {
    let mut t = Tracker::default();
    let a = Key::Buffer(7, 0, 16);
    assert!(run(&mut t, &[(a, R), (a, W)]).is_empty());
    assert!(!run(&mut t, &[(a, R), (a, W)]).is_empty());
}

#[test]
fn a_flush_orders_earlier_work_for_the_rendering_scope() {
    let mut t = Tracker::default();
    let v = Key::Buffer(3, 0, 256);
    run(&mut t, &[(v, W)]);
    let f = t.flush().unwrap();
    assert_eq!(f.src_stage, S::COMPUTE_SHADER);
    assert_eq!(f.dst_stage, GRAPHICS_STAGES);
    let vertex = Use {
        stage: S::VERTEX_ATTRIBUTE_INPUT,
        read: A::VERTEX_ATTRIBUTE_READ,
        write: A::NONE,
    };
    assert!(run(&mut t, &[(v, vertex)]).is_empty());
    assert!(run(&mut t, &[(v, vertex)]).is_empty(), "a second draw");
    t.end_rendering();
    // After the scope a compute write waits for the vertex-input read (WAR), and the
    // earlier compute write, which the flush made visible to graphics stages only, is
    // made visible to it (WAW).
    let n = run(&mut t, &[(v, W)]);
    assert_eq!(n.src_stage, S::VERTEX_ATTRIBUTE_INPUT | S::COMPUTE_SHADER);
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(n.dst_stage, S::COMPUTE_SHADER);
    // A write with no read since: WAW, with the write's access.
    let n = run(&mut t, &[(v, W)]);
    assert_eq!(n.src_stage, S::COMPUTE_SHADER);
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
}

#[test]
fn a_hazard_between_draws_of_one_scope_is_returned_for_a_split() {
    let frag = |read, write| Use {
        stage: S::FRAGMENT_SHADER,
        read,
        write,
    };
    let mut t = Tracker::default();
    let b = Key::Buffer(4, 0, 64);
    let other = Key::Buffer(5, 0, 64);
    run(&mut t, &[(other, W)]);
    assert!(t.flush().is_some());
    // Draw A writes `b`; `other`, written before the scope, is covered by the flush.
    assert!(run(&mut t, &[(b, frag(A::NONE, A::SHADER_STORAGE_WRITE))]).is_empty());
    assert!(run(&mut t, &[(other, frag(A::SHADER_STORAGE_READ, A::NONE))]).is_empty());
    // Draw B reads `b`: RAW against draw A, the barrier of the split.
    let n = run(&mut t, &[(b, frag(A::SHADER_STORAGE_READ, A::NONE))]);
    assert_eq!(
        n,
        Need {
            src_stage: S::FRAGMENT_SHADER,
            src_access: A::SHADER_STORAGE_WRITE,
            dst_stage: S::FRAGMENT_SHADER,
            dst_access: A::SHADER_STORAGE_READ,
        }
    );
    t.recorded(n);
    // A third draw reading `b` needs nothing more; a fourth writing it waits for the reads
    // (WAR) and for draw A's write (WAW: the split's barrier made it visible to reads
    // only): another split.
    assert!(run(&mut t, &[(b, frag(A::SHADER_STORAGE_READ, A::NONE))]).is_empty());
    let n = run(&mut t, &[(b, frag(A::NONE, A::SHADER_STORAGE_WRITE))]);
    assert_eq!(n.src_stage, S::FRAGMENT_SHADER);
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(n.dst_access, A::SHADER_STORAGE_WRITE);
    t.end_rendering();
}

/// A key of `range` of image 8 (2 mip levels, 2 layers).
fn image(range: Subresources) -> Key {
    Key::Image(
        8,
        ImageRange {
            range: range.resolve(2, 2),
            levels: 2,
            layers: 2,
        },
    )
}

#[test]
fn image_subresources_are_tracked_apart() {
    use vk::Handle;
    let copy = Use {
        stage: S::ALL_TRANSFER,
        read: A::NONE,
        write: A::TRANSFER_WRITE,
    };
    let sample = Use {
        stage: S::FRAGMENT_SHADER,
        read: A::SHADER_SAMPLED_READ,
        write: A::NONE,
    };
    let mut t = Tracker::default();
    let (mip0, mip1) = (Subresources::mip(0), Subresources::mip(1));
    assert!(run(&mut t, &[(image(mip0), copy)]).is_empty());
    // Another mip level: no hazard against the copy.
    assert!(run(&mut t, &[(image(mip1), W)]).is_empty());
    // Sampling mip 0 waits for the copy only.
    let n = run(&mut t, &[(image(mip0), sample)]);
    assert_eq!(
        (n.src_stage, n.src_access),
        (S::ALL_TRANSFER, A::TRANSFER_WRITE)
    );
    assert_eq!(n.dst_stage, S::FRAGMENT_SHADER);
    // A read of the whole image waits for both writes, each from its own level.
    let n = run(&mut t, &[(image(Subresources::all()), R)]);
    assert_eq!(n.src_stage, S::ALL_TRANSFER | S::COMPUTE_SHADER);
    assert_eq!(n.src_access, A::TRANSFER_WRITE | A::SHADER_STORAGE_WRITE);
    // The source of a transition of one layer of mip 1: what was done to it alone.
    let raw = vk::Image::from_raw(8);
    let layer1 = Subresources::new(1..2, 1..2);
    assert_eq!(
        t.image_src(raw, layer1),
        Some((S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE))
    );
    // A transition of layer 0 (every mip) resets that layer only.
    let r = ImageRange {
        range: Subresources::layer(0).resolve(2, 2),
        levels: 2,
        layers: 2,
    };
    t.transitioned(raw, r, (S::ALL_TRANSFER, A::TRANSFER_WRITE), A::NONE);
    assert_eq!(
        t.image_src(raw, Subresources::layer(0)),
        Some((S::ALL_TRANSFER, A::NONE))
    );
    assert_eq!(
        t.image_src(raw, layer1),
        Some((S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE))
    );
    // A write of layer 0 after the transition (visible to transfer): nothing; of layer 1
    // after the reads: a WAR wait and the WAW visibility.
    assert!(run(&mut t, &[(image(Subresources::layer(0)), copy)]).is_empty());
    let n = run(&mut t, &[(image(Subresources::layer(1)), copy)]);
    assert_eq!(
        n.src_stage,
        S::FRAGMENT_SHADER | S::COMPUTE_SHADER | S::ALL_TRANSFER
    );
}

/// A structure built before a rendering scope and ray-queried in a draw's shader: with
/// `rayQuery` the scope's flush makes the build visible to ACCELERATION_STRUCTURE_READ (no
/// hazard inside the scope, so no split); without it the access is left out of the flush
/// (invalid in a barrier, VUID-VkMemoryBarrier2-dstAccessMask-06256).
#[test]
fn a_flush_makes_builds_visible_to_ray_queries_only_with_ray_query() {
    let build = Use {
        stage: S::ACCELERATION_STRUCTURE_BUILD_KHR,
        read: A::NONE,
        write: A::ACCELERATION_STRUCTURE_WRITE_KHR,
    };
    let query = Use {
        stage: S::FRAGMENT_SHADER,
        read: A::ACCELERATION_STRUCTURE_READ_KHR,
        write: A::NONE,
    };
    let tlas = Key::Buffer(7, 0, 1024);
    let mut t = Tracker::new(true);
    run(&mut t, &[(tlas, build)]);
    let f = t.flush().unwrap();
    assert_eq!(f.src_stage, S::ACCELERATION_STRUCTURE_BUILD_KHR);
    assert_eq!(f.src_access, A::ACCELERATION_STRUCTURE_WRITE_KHR);
    assert_eq!(
        f.dst_access,
        GRAPHICS_ACCESS | A::ACCELERATION_STRUCTURE_READ_KHR
    );
    assert!(
        run(&mut t, &[(tlas, query)]).is_empty(),
        "covered by the flush"
    );
    let mut t = Tracker::new(false);
    run(&mut t, &[(tlas, build)]);
    assert_eq!(t.flush().unwrap().dst_access, GRAPHICS_ACCESS);
}

/// A draw reads a buffer written before the scope, a later draw of the same scope writes
/// it: the flush ordered the earlier write, not the first draw's read, so the write waits
/// for the read (WAR between draws: a split).
#[test]
fn a_write_after_a_read_of_an_earlier_draw_of_the_scope_waits_for_it() {
    let frag = |read, write| Use {
        stage: S::FRAGMENT_SHADER,
        read,
        write,
    };
    let mut t = Tracker::default();
    let b = Key::Buffer(4, 0, 64);
    run(&mut t, &[(b, W)]);
    assert!(t.flush().is_some());
    assert!(run(&mut t, &[(b, frag(A::SHADER_STORAGE_READ, A::NONE))]).is_empty());
    let n = run(&mut t, &[(b, frag(A::NONE, A::SHADER_STORAGE_WRITE))]);
    assert_eq!(n.src_stage, S::FRAGMENT_SHADER);
    assert_eq!(n.dst_stage, S::FRAGMENT_SHADER);
}

/// `apply_compiled`'s warm path skips the slots' generation checks, which is exact only at
/// the generation the uses were last applied at: after a full barrier (`reset`) the same
/// compiled uses must take the checked path, which clears the stale spans (the write
/// before the full barrier needs nothing more). Taken warm there (wrongly), the stale
/// write would ask for a barrier: the answers differ, so the rule is what keeps it exact.
#[test]
fn compiled_uses_are_warm_only_at_the_generation_they_were_applied_at() {
    let mut t = Tracker::default();
    let res = t.resolve(Key::Buffer(7, 0, 256));
    let uses = [(res, W)];
    let summary = UsesSummary::of(&uses);
    assert_eq!(summary, {
        let mut s = UsesSummary::default();
        s.add(W);
        s
    });
    // First application: checked (never applied); lists the buffer as written.
    let gen = t.generation();
    assert!(t.apply_compiled(&uses, &summary, false, None).is_empty());
    assert!(t.written.contains(&7));
    // Warm at the same generation: the WAW is still found (states are applied as always).
    assert_eq!(t.generation(), gen);
    let n = t.apply_compiled(&uses, &summary, true, None).need();
    assert_eq!(n.src_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(n.dst_access, A::SHADER_STORAGE_WRITE);
    assert_eq!(
        t.unflushed_write,
        (S::COMPUTE_SHADER, A::SHADER_STORAGE_WRITE)
    );
    // A full barrier: a new generation, so the caller's rule (`warm_gen == generation`)
    // says cold, and the write after it needs nothing.
    t.reset();
    assert_ne!(t.generation(), gen);
    assert!(t.apply_compiled(&uses, &summary, false, None).is_empty());
    // The same sequence taking the warm path after the reset (what the rule prevents)
    // answers differently: the stale span of the earlier generation asks for a barrier.
    let mut wrong = Tracker::default();
    let res = wrong.resolve(Key::Buffer(7, 0, 256));
    let uses = [(res, W)];
    assert!(wrong
        .apply_compiled(&uses, &summary, false, None)
        .is_empty());
    wrong.reset();
    assert!(!wrong.apply_compiled(&uses, &summary, true, None).is_empty());
}
