//! Recording a [`Cmd`] list through kiln's `Recorder`, noting each command's [`Effect`]
//! and the first command the queue cannot run.

use kiln::{vk, ColorAttachment, LoadOp, Recorder, RenderingDesc};

use super::model::{float, unorm, Drawn, Effect};
use super::program::{Cmd, Draw};
use super::world::World;
use super::LEN;

/// What recording a command list noted.
#[derive(Default)]
pub(super) struct Notes {
    /// The effects of the commands recorded, in order.
    pub(super) effects: Vec<Effect>,
    /// The command the queue cannot run (a dispatch without compute, a rendering scope
    /// without graphics), recorded to see it refused with `KILN-E120`.
    pub(super) refused: Option<&'static str>,
    /// The recording turned the automatic barriers off (`Cmd::Manual`): the program
    /// places them.
    pub(super) manual: bool,
}

/// The layouts `Cmd::Transition` picks from.
pub(super) const LAYOUTS: [vk::ImageLayout; 3] = [
    vk::ImageLayout::GENERAL,
    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
    vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
];

/// Records `cmds` (skipping those whose objects do not exist) on a queue that can run
/// `flags`, noting their effects.
pub(super) fn record<'a>(
    r: &mut Recorder<'a, '_>,
    w: &'a World<'_>,
    cmds: &[Cmd],
    flags: vk::QueueFlags,
    notes: &mut Notes,
) -> kiln::Result<()> {
    for c in cmds {
        let effects = &mut notes.effects;
        match c {
            Cmd::Dispatch(s) => {
                let Some(set) = &w.sets[*s] else { continue };
                if !flags.contains(vk::QueueFlags::COMPUTE) {
                    notes.refused = Some("a dispatch on a queue without compute");
                }
                r.bind_pipeline(&w.pipes.add)?;
                r.bind_set(0, &set.set)?;
                r.dispatch_threads(LEN as u32)?;
                if notes.manual {
                    r.barrier()?;
                }
                effects.push(Effect::Add(set.abc.clone()));
            }
            Cmd::Fill(b, v) => {
                let Some(b) = &w.bufs[*b] else { continue };
                r.fill_buffer(&b.buffer, float(*v))?;
                effects.push(Effect::Fill(b.clone(), float(*v)));
            }
            Cmd::Copy {
                src,
                dst,
                so,
                d_o,
                n,
            } => {
                let (Some(s), Some(d)) = (&w.bufs[*src], &w.bufs[*dst]) else {
                    continue;
                };
                let (so, d_o, n) = (*so as usize, *d_o as usize, *n as usize);
                r.copy_buffer(
                    &s.buffer,
                    4 * so as u64,
                    &d.buffer,
                    4 * d_o as u64,
                    4 * n as u64,
                )?;
                effects.push(Effect::Copy(s.clone(), so, d.clone(), d_o, n));
            }
            Cmd::ToImage(b, i) => {
                let (Some(b), Some(i)) = (&w.bufs[*b], &w.imgs[*i]) else {
                    continue;
                };
                r.copy_buffer_to_image(&b.buffer, &i.image, 0)?;
                effects.push(Effect::ToImage(b.clone(), i.clone()));
            }
            Cmd::FromImage(i, b) => {
                let (Some(i), Some(b)) = (&w.imgs[*i], &w.bufs[*b]) else {
                    continue;
                };
                r.copy_image_to_buffer(&i.image, 0, &b.buffer)?;
                effects.push(Effect::FromImage(i.clone(), b.clone()));
            }
            Cmd::Transition(i, l) => {
                let Some(i) = &w.imgs[*i] else { continue };
                r.transition(&i.image, LAYOUTS[*l as usize])?;
            }
            Cmd::Barrier => r.barrier()?,
            Cmd::FullBarrier => r.full_barrier()?,
            Cmd::Manual => {
                // From here on the program places the barriers: one now for what came
                // before, one after each dispatch, full ones around rendering scopes.
                r.manual_barriers();
                r.barrier()?;
                notes.manual = true;
            }
            Cmd::Render { img, clear, draw } => {
                render(r, w, (*img, *clear, *draw), flags, notes)?;
            }
        }
    }
    Ok(())
}

/// Records a rendering scope over image `img` (cleared to the bytes of `float(v)`, or
/// loaded) with `draw` in it, unless the image or the buffer the draw reads does not
/// exist; notes its effect, or that the queue must refuse it.
fn render<'a>(
    r: &mut Recorder<'a, '_>,
    w: &'a World<'_>,
    (img, clear, draw): (usize, Option<u8>, Draw),
    flags: vk::QueueFlags,
    notes: &mut Notes,
) -> kiln::Result<()> {
    let Some(i) = &w.imgs[img] else { return Ok(()) };
    let buf = match draw {
        Draw::Nothing | Draw::Push(_) => None,
        Draw::Vertex { buf, .. } | Draw::Storage { buf, .. } => match &w.bufs[buf] {
            Some(b) => Some(b),
            None => return Ok(()),
        },
    };
    let graphics = flags.contains(vk::QueueFlags::GRAPHICS);
    if !graphics {
        notes.refused = Some("a rendering scope on a queue without graphics");
    }
    // Manual barriers: the draw's reads wait for every earlier write (a dispatch's
    // barrier orders only compute and transfer work after it).
    if notes.manual && graphics {
        r.full_barrier()?;
    }
    let load = clear.map_or(LoadOp::Load, |v| LoadOp::Clear(unorm(float(v))));
    let color = [ColorAttachment::clear(&i.image, [0.0; 4]).load(load)];
    r.begin_rendering(&RenderingDesc::new(&color))?;
    let drawn = match (draw, buf) {
        (Draw::Push(v), _) => {
            r.bind_pipeline(&w.pipes.push_word)?;
            r.push(0, &float(v))?;
            Drawn::Word(float(v))
        }
        (Draw::Vertex { at, .. }, Some(b)) => {
            r.bind_pipeline(&w.pipes.vertex_word)?;
            r.bind_vertex_buffer(0, &b.buffer, 4 * u64::from(at))?;
            Drawn::Element(b.clone(), usize::from(at))
        }
        (Draw::Storage { at, .. }, Some(b)) => {
            r.bind_pipeline(&w.pipes.storage_word)?;
            r.bind_set(0, &b.word_set)?;
            r.push(0, &u32::from(at))?;
            Drawn::Element(b.clone(), usize::from(at))
        }
        _ => Drawn::Nothing,
    };
    if !matches!(drawn, Drawn::Nothing) {
        // Twice: the second draw repeats the first one's reads (the recorder's path for
        // draws whose reads were applied already); the pixels are the same.
        r.draw(3, 1, 0, 0)?;
        r.draw(3, 1, 0, 0)?;
    }
    r.end_rendering()?;
    // ... and, with manual barriers, later commands wait for the scope's reads and writes.
    if notes.manual {
        r.full_barrier()?;
    }
    let clear = clear.map(float);
    notes.effects.push(Effect::Render(i.clone(), clear, drawn));
    Ok(())
}

/// Codes a recording of these commands may fail with: a copy out of range or of zero
/// bytes or overlapping (`E151`, `E155`), a reusable recording that leaves an image in
/// another layout (`E284`: a rendering scope that loads its attachment leaves it in
/// COLOR_ATTACHMENT_OPTIMAL) or finds it moved (`E285`).
pub(super) const RUN_CODES: &[&str] = &["KILN-E151", "KILN-E155", "KILN-E284", "KILN-E285"];
