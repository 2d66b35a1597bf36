//! Recording a [`Cmd`] list through kiln's `Recorder`, noting each command's [`Effect`].

use kiln::{vk, Recorder};

use super::model::{float, Effect};
use super::program::Cmd;
use super::world::World;
use super::LEN;

/// The layouts `Cmd::Transition` picks from.
pub(super) const LAYOUTS: [vk::ImageLayout; 3] = [
    vk::ImageLayout::GENERAL,
    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
    vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
];

/// Records `cmds` (skipping those whose objects do not exist), noting their effects.
pub(super) fn record<'a>(
    r: &mut Recorder<'a, '_>,
    w: &'a World<'_>,
    cmds: &[Cmd],
    effects: &mut Vec<Effect>,
) -> kiln::Result<()> {
    let mut manual = false;
    for c in cmds {
        match c {
            Cmd::Dispatch(s) => {
                let Some(set) = &w.sets[*s] else { continue };
                r.bind_pipeline(w.pipeline)?;
                r.bind_set(0, &set.set)?;
                r.dispatch_threads(LEN as u32)?;
                if manual {
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
                // before, one after each dispatch.
                r.manual_barriers();
                r.barrier()?;
                manual = true;
            }
        }
    }
    Ok(())
}

/// Codes a recording of these commands may fail with: a copy out of range or of zero
/// bytes or overlapping (`E151`, `E155`), a reusable recording that leaves an image in
/// another layout (`E284`) or finds it moved (`E285`).
pub(super) const RUN_CODES: &[&str] = &["KILN-E151", "KILN-E155", "KILN-E284", "KILN-E285"];
