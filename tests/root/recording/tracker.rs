//! The hazard tracker's shortcuts (issue 15's recording cost): the compiled uses of a bound
//! set (resolved once per set and pipeline, copied at later dispatches) and the last
//! barrier's coverage (a global barrier recorded for one resource orders every earlier
//! access in its scopes). Each test is a case an optimisation could break: sub-ranges of
//! one buffer through several sets, sets rebound with one pipeline and across pipelines,
//! a full barrier clearing the state, a barrier whose scope does not cover a later use,
//! images moved through sets between compiled dispatches. Checked by value, by the exact
//! barrier count and by synchronization validation (on by default in the tests).

use common::add::{self, vector_add};
use common::{assert_clean, device};
use kiln::{vk, Device, ImageDesc};

/// `test/add_one.comp`: y[i] += x[i] for i < n (push constant n).
fn add_one(device: &Device) -> kiln::ComputePipeline {
    device
        .compute_pipeline(&kiln::include_spirv!("test/add_one.comp").unwrap(), "main")
        .unwrap()
}

/// A set of `add_one` with x and y.
fn xy(p: &kiln::ComputePipeline, x: &kiln::Buffer, y: &kiln::Buffer) -> kiln::DescriptorSet {
    let mut s = p.descriptor_set(0).unwrap();
    s.write_buffer(0, x).unwrap();
    s.write_buffer(1, y).unwrap();
    s
}

/// Two independent chains recorded interleaved (A0 B0 A1 B1 ...): the barrier before A_i
/// also orders B_(i-1) → B_i, so one barrier per level (links − 1 in all), not two; the
/// values are exact and validation sees no hazard.
#[test]
fn interleaved_independent_chains_share_one_barrier_per_level() {
    let device = device();
    let p = add_one(&device);
    let n = 256usize;
    let xa = add::storage(&device, "xa", &vec![1.0f32; n]);
    let xb = add::storage(&device, "xb", &vec![2.0f32; n]);
    let ya = add::storage(&device, "ya", &vec![0.0f32; n]);
    let yb = add::storage(&device, "yb", &vec![0.0f32; n]);
    let (sa, sb) = (xy(&p, &xa, &ya), xy(&p, &xb, &yb));
    let links = 20u32;
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push(0, &(n as u32))?;
            for _ in 0..links {
                r.bind_set(0, &sa)?;
                r.dispatch_threads(n as u32)?;
                r.bind_set(0, &sb)?;
                r.dispatch_threads(n as u32)?;
            }
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, links - 1);
    assert_eq!(ya.read::<f32>().unwrap(), vec![links as f32; n]);
    assert_eq!(yb.read::<f32>().unwrap(), vec![2.0 * links as f32; n]);
    assert_clean(&device);
}

/// Sub-ranges of one buffer written through several sets whose uses are compiled once:
/// disjoint ranges need nothing, the same range again (WAW) does, a whole-buffer read
/// through another pipeline waits for both ranges, and the ranges written again after
/// that read (WAR) wait for it.
#[test]
fn sub_ranges_through_compiled_sets_keep_their_hazards() {
    let device = device();
    let add = vector_add(&device);
    let one = add_one(&device);
    let n = 256usize;
    let a = add::storage(&device, "a", &vec![1.0f32; n]);
    let b = add::storage(&device, "b", &vec![0.5f32; n]);
    let c = device.storage_buffer::<f32>("c", 2 * n).unwrap();
    let d = add::storage(&device, "d", &vec![0.0f32; 2 * n]);
    let range = (n * 4) as u64;
    let halves: Vec<_> = (0..2u64)
        .map(|k| {
            let mut s = add.descriptor_set(0).unwrap();
            s.write_buffer(0, &a).unwrap();
            s.write_buffer(1, &b).unwrap();
            s.write_buffer_range(2, 0, None, &c, k * range, range)
                .unwrap();
            s
        })
        .collect();
    let whole = xy(&one, &c, &d);
    let counts = device
        .execute(|r| {
            let mut counts = Vec::new();
            r.bind_pipeline(&add)?;
            for s in [0, 1, 0, 1] {
                r.bind_set(0, &halves[s])?;
                r.dispatch_threads(n as u32)?;
                counts.push(r.barrier_count());
            }
            r.bind_pipeline(&one)?;
            r.bind_set(0, &whole)?;
            r.push(0, &(2 * n as u32))?;
            r.dispatch_threads(2 * n as u32)?;
            counts.push(r.barrier_count());
            r.bind_pipeline(&add)?;
            for s in [1, 0] {
                r.bind_set(0, &halves[s])?;
                r.dispatch_threads(n as u32)?;
                counts.push(r.barrier_count());
            }
            Ok(counts)
        })
        .unwrap();
    // halves 0, 1: none; 0 again: WAW (one barrier, which covers half 1 too); the whole
    // read: RAW on half 1's second write only... which the barrier before it did not see:
    // one more; then WAR on half 1 (one), and half 0 is ordered by that one.
    assert_eq!(counts, vec![0, 0, 1, 1, 2, 3, 3]);
    assert_eq!(d.read::<f32>().unwrap(), vec![1.5f32; 2 * n]);
    assert_eq!(c.read::<f32>().unwrap(), vec![1.5f32; 2 * n]);
    assert_clean(&device);
}

/// Two sets of one pipeline that each read what the other writes (b += a, then a += b),
/// bound alternately: every dispatch depends on the one before (n − 1 barriers) although
/// each set's uses are compiled once; the values follow the recurrence exactly.
#[test]
fn rebinding_sets_that_swap_buffers_waits_at_every_dispatch() {
    let device = device();
    let p = add_one(&device);
    let n = 64usize;
    let a = add::storage(&device, "a", &vec![1.0f32; n]);
    let b = add::storage(&device, "b", &vec![1.0f32; n]);
    let (ab, ba) = (xy(&p, &a, &b), xy(&p, &b, &a));
    let steps = 12u32;
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push(0, &(n as u32))?;
            for i in 0..steps {
                r.bind_set(0, if i % 2 == 0 { &ab } else { &ba })?;
                r.dispatch_threads(n as u32)?;
            }
            Ok(r.barrier_count())
        })
        .unwrap();
    assert_eq!(barriers, steps - 1);
    let (mut x, mut y) = (1.0f32, 1.0f32);
    for i in 0..steps {
        if i % 2 == 0 {
            y += x;
        } else {
            x += y;
        }
    }
    assert_eq!(a.read::<f32>().unwrap(), vec![x; n]);
    assert_eq!(b.read::<f32>().unwrap(), vec![y; n]);
    assert_clean(&device);
}

/// A full barrier orders everything before it (the tracker's state is cleared, the
/// compiled uses stay valid): the next dispatch of the chain records nothing, the one
/// after it waits again.
#[test]
fn a_full_barrier_clears_the_state_of_compiled_sets() {
    let device = device();
    let p = add_one(&device);
    let n = 128usize;
    let x = add::storage(&device, "x", &vec![1.0f32; n]);
    let y = add::storage(&device, "y", &vec![0.0f32; n]);
    let set = xy(&p, &x, &y);
    let counts = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.bind_set(0, &set)?;
            r.push(0, &(n as u32))?;
            r.dispatch_threads(n as u32)?;
            let mut counts = vec![r.barrier_count()];
            r.full_barrier()?;
            counts.push(r.barrier_count());
            r.dispatch_threads(n as u32)?;
            counts.push(r.barrier_count());
            r.dispatch_threads(n as u32)?;
            counts.push(r.barrier_count());
            Ok(counts)
        })
        .unwrap();
    assert_eq!(counts, vec![0, 1, 1, 2]);
    assert_eq!(y.read::<f32>().unwrap(), vec![3.0f32; n]);
    assert_clean(&device);
}

/// A barrier recorded for a copy (compute → transfer) does not cover a later dispatch's
/// read of another buffer an earlier dispatch wrote (its second scope is the transfer
/// stage): that read gets a barrier of its own.
#[test]
fn a_barrier_to_another_stage_does_not_cover_a_later_dispatch() {
    let device = device();
    let p = add_one(&device);
    let n = 256usize;
    let x = add::storage(&device, "x", &vec![1.0f32; n]);
    let y1 = add::storage(&device, "y1", &vec![0.0f32; n]);
    let y2 = add::storage(&device, "y2", &vec![0.0f32; n]);
    let z = add::storage(&device, "z", &vec![0.0f32; n]);
    let w = add::storage(&device, "w", &vec![5.0f32; n]);
    let (s1, s2, s3) = (xy(&p, &x, &y1), xy(&p, &x, &y2), xy(&p, &y2, &w));
    let counts = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            r.push(0, &(n as u32))?;
            r.bind_set(0, &s1)?;
            r.dispatch_threads(n as u32)?;
            r.bind_set(0, &s2)?;
            r.dispatch_threads(n as u32)?;
            let mut counts = vec![r.barrier_count()];
            r.copy_buffer(&y1, 0, &z, 0, (n * 4) as u64)?;
            counts.push(r.barrier_count());
            // Reads y2 (written by the second dispatch, before the copy's barrier).
            r.bind_set(0, &s3)?;
            r.dispatch_threads(n as u32)?;
            counts.push(r.barrier_count());
            Ok(counts)
        })
        .unwrap();
    assert_eq!(counts, vec![0, 1, 2]);
    assert_eq!(z.read::<f32>().unwrap(), vec![1.0f32; n]);
    assert_eq!(w.read::<f32>().unwrap(), vec![6.0f32; n]);
    assert_clean(&device);
}

/// Storage images written by one dispatch and read by the next through two sets bound
/// alternately: sets with images are listed binding by binding at every dispatch (never
/// from the compiled uses), so each image is moved to GENERAL once and every dependent
/// dispatch waits (one barrier per pass).
#[test]
fn images_through_sets_keep_layouts_and_hazards_at_every_dispatch() {
    let device = device();
    let p = device
        .compute_pipeline(&kiln::include_spirv!("test/blur.comp").unwrap(), "main")
        .unwrap();
    let (w, h) = (16u32, 2u32);
    let usage = vk::ImageUsageFlags::STORAGE;
    let img = |label: &str| {
        device
            .image(&ImageDesc::texture(label, w, h, vk::Format::R32_SFLOAT).usage(usage))
            .unwrap()
    };
    let (a, b) = (img("a"), img("b"));
    let src: Vec<f32> = (0..w * h).map(|i| (i % 5) as f32).collect();
    a.upload(kiln::bytemuck::cast_slice(&src)).unwrap();
    let mut ab = p.descriptor_set(0).unwrap();
    ab.write_image(0, &a).unwrap();
    ab.write_image(1, &b).unwrap();
    let mut ba = p.descriptor_set(0).unwrap();
    ba.write_image(0, &b).unwrap();
    ba.write_image(1, &a).unwrap();
    let passes = 4u32;
    let barriers = device
        .execute(|r| {
            r.bind_pipeline(&p)?;
            for i in 0..passes {
                r.bind_set(0, if i % 2 == 0 { &ab } else { &ba })?;
                r.dispatch_threads_2d(w, h)?;
            }
            Ok(r.barrier_count())
        })
        .unwrap();
    // The first dispatch moves both images to GENERAL (one barrier); each later one waits
    // for the one before.
    assert_eq!(barriers, passes);
    let mut want = src.clone();
    for _ in 0..passes {
        want = blur_rows(&want, w as usize);
    }
    let got: Vec<f32> = kiln::bytemuck::cast_slice(&a.read().unwrap()).to_vec();
    assert_eq!(got, want);
    assert_clean(&device);
}

/// The host's blur of one row after another (`test/blur.comp`).
fn blur_rows(src: &[f32], w: usize) -> Vec<f32> {
    (0..src.len())
        .map(|i| {
            let x = i % w;
            let mut s = src[i];
            if x > 0 {
                s += src[i - 1];
            }
            if x + 1 < w {
                s += src[i + 1];
            }
            s
        })
        .collect()
}
