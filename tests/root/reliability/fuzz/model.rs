//! The model of the GPU's contents: every buffer and image beside its expected contents,
//! and the [`Effect`]s a recording has on them, applied once per execution, in the order
//! of submission on whichever queue (kiln orders submissions of different queues that use
//! one resource in that order, `src/queue/submit.rs`; submissions it leaves unordered
//! touch disjoint objects, whose models do not depend on each other).
//!
//! Every buffer element and every image pixel holds the bits of a small whole float: an
//! image's pixels are bytes of buffer words (copies) or words drawn whole (an RGBA8 UNORM
//! pixel written as `unpackUnorm4x8(word)` stores the word's four bytes exactly), so the
//! additions of vector_add stay exact whatever went through an image.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::Ordering;

use kiln::{Buffer, DescriptorSet, Image};

use super::{DRAWS, EXECUTIONS, LEN};

/// A buffer and the model of its contents (f32 bits), shared with the sets that hold it.
#[derive(Clone)]
pub(super) struct Buf {
    pub(super) buffer: Buffer,
    pub(super) model: Rc<RefCell<Vec<u32>>>,
    /// Set 0 of the storage-word draw pipeline over this buffer (`Draw::Storage`).
    pub(super) word_set: Rc<DescriptorSet>,
}

/// A vector_add set and the buffers (a, b, c) it was written with.
pub(super) struct Set {
    pub(super) set: DescriptorSet,
    pub(super) abc: [Buf; 3],
}

/// An 8×8 RGBA8 image and its contents (`None`: undefined).
#[derive(Clone)]
pub(super) struct Img {
    pub(super) image: Image,
    pub(super) model: Rc<RefCell<Option<Vec<u8>>>>,
}

pub(super) fn float(v: u8) -> u32 {
    f32::from(v).to_bits()
}

fn add(a: u32, b: u32) -> u32 {
    (f32::from_bits(a) + f32::from_bits(b)).to_bits()
}

/// The words `v`, `v + 1`, … `v + LEN - 1` (whole floats): uploads write them, so that
/// an element read from the wrong place (a copy's offset, a draw's index) differs.
pub(super) fn ramp(v: u8) -> Vec<u32> {
    (0..LEN as u8).map(|i| float(v + i)).collect()
}

/// The clear colour whose RGBA8 UNORM pixel holds the four bytes of `word` (byte / 255,
/// which the conversion to UNORM rounds back to the byte).
pub(super) fn unorm(word: u32) -> [f32; 4] {
    word.to_ne_bytes().map(|b| f32::from(b) / 255.0)
}

pub(super) fn bytes_of(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// What a recording will do to the models once it runs (applied per execution).
pub(super) enum Effect {
    Add([Buf; 3]),
    Fill(Buf, u32),
    Copy(Buf, usize, Buf, usize, usize),
    ToImage(Buf, Img),
    FromImage(Img, Buf),
    /// A rendering scope over the image: cleared to the word (`Some`) or loaded, then
    /// every pixel set to what the draw wrote.
    Render(Img, Option<u32>, Drawn),
}

/// The word a draw of a rendering scope writes to every pixel.
pub(super) enum Drawn {
    Nothing,
    Word(u32),
    /// Element `.1` of the buffer, as it is when the draw runs.
    Element(Buf, usize),
}

pub(super) fn apply(effects: &[Effect]) {
    EXECUTIONS.fetch_add(1, Ordering::Relaxed);
    for e in effects {
        match e {
            Effect::Add([a, b, c]) => {
                let r: Vec<u32> = {
                    let (a, b) = (a.model.borrow(), b.model.borrow());
                    a.iter().zip(b.iter()).map(|(x, y)| add(*x, *y)).collect()
                };
                *c.model.borrow_mut() = r;
            }
            Effect::Fill(b, v) => *b.model.borrow_mut() = vec![*v; LEN],
            Effect::Copy(s, so, d, d_o, n) => {
                let part: Vec<u32> = s.model.borrow()[*so..so + n].to_vec();
                d.model.borrow_mut()[*d_o..d_o + n].copy_from_slice(&part);
            }
            Effect::ToImage(b, i) => *i.model.borrow_mut() = Some(bytes_of(&b.model.borrow())),
            Effect::FromImage(i, b) => {
                // An image of undefined contents gives undefined bytes: the model forgets
                // nothing it can check (reads compare only defined images).
                if let Some(px) = i.model.borrow().as_ref() {
                    *b.model.borrow_mut() = words_of(px);
                }
            }
            Effect::Render(i, clear, drawn) => {
                let mut px = i.model.borrow_mut();
                if let Some(c) = clear {
                    *px = Some(bytes_of(&[*c; LEN]));
                }
                let word = match drawn {
                    Drawn::Nothing => None,
                    Drawn::Word(w) => Some(*w),
                    Drawn::Element(b, at) => Some(b.model.borrow()[*at]),
                };
                if let Some(w) = word {
                    // The full-screen triangle covers every pixel.
                    *px = Some(bytes_of(&[w; LEN]));
                    DRAWS.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
}
