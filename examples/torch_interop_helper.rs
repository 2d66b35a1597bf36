//! kiln's half of `scripts/torch_interop.py` (issue 28): run by that script, never by hand.
//! Exports a device-local buffer of `N` floats and a timeline semaphore by opaque fd and
//! sends both fds over the Unix socket whose fd number is the first argument
//! (`SCM_RIGHTS`), with one JSON line (`n`, `size`, `allocation_size`, `memory_type_index`);
//! then, ordered only by the shared timeline:
//!
//! 1. kiln: `shared[i] = i + 0.5` (vector_add), signal 1;
//! 2. PyTorch (the script): waits for 1, `shared = shared * 2 + 1` on its stream, signals 2;
//! 3. kiln: waits for 2 on the GPU, `out = shared + shared`, signals 3;
//!
//! and checks `out[i] == 4i + 4` (exit status 0, `kiln: ok` on stdout). Every host wait is
//! bounded (60 s). The device is `KILN_DEVICE` (the script sets `uuid:<torch's GPU>`).
//!
//! Usage (by the script): `torch_interop_helper <socket fd> [N]`.
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

use kiln::{vk, BufferDesc, ExternalHandle, MemoryLocation, QueueKind};

/// Sends `line` and `fds` over the socket `socket` (`sendmsg` with one `SCM_RIGHTS`
/// control message).
fn send_fds(socket: RawFd, line: &[u8], fds: &[RawFd]) -> std::io::Result<()> {
    let bytes = std::mem::size_of_val(fds);
    // SAFETY: CMSG_SPACE is a pure size computation.
    let space = unsafe { libc::CMSG_SPACE(bytes as u32) } as usize;
    let mut control = vec![0u8; space];
    let mut iov = libc::iovec {
        iov_base: line.as_ptr() as *mut libc::c_void,
        iov_len: line.len(),
    };
    // SAFETY: zeroed msghdr is a valid empty header; every pointer set below points at
    // locals that outlive the sendmsg call; the control buffer is CMSG_SPACE bytes, so
    // CMSG_FIRSTHDR is non-null and CMSG_DATA has room for `fds`.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = space as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(bytes as u32) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(cmsg).cast(), fds.len());
        if libc::sendmsg(socket, &msg, 0) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let socket: RawFd = args
        .next()
        .ok_or("usage: torch_interop_helper <socket fd> [N]")?
        .parse()?;
    let n: usize = args.next().map_or(Ok(1 << 20), |a| a.parse())?;
    let device = kiln::Device::new()?;
    eprintln!("kiln: {}", device.info().name);
    let desc = BufferDesc::default()
        .label("shared with torch")
        .size((n * 4) as u64)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
        .location(MemoryLocation::GpuOnly);
    let shared = device.exportable_buffer(&desc, ExternalHandle::OpaqueFd)?;
    let timeline = device.exportable_timeline_semaphore("torch", 0, ExternalHandle::OpaqueFd)?;
    let (mem_fd, memory): (OwnedFd, _) = shared.export_memory()?;
    let sem_fd = timeline.export()?;
    let line = format!(
        "{{\"n\": {n}, \"size\": {}, \"allocation_size\": {}, \"memory_type_index\": {}}}\n",
        desc.size, memory.allocation_size, memory.memory_type_index
    );
    send_fds(
        socket,
        line.as_bytes(),
        &[mem_fd.as_raw_fd(), sem_fd.as_raw_fd()],
    )?;
    // The receiver holds its own copies now (SCM_RIGHTS duplicates them).
    drop((mem_fd, sem_fd));

    let pipeline = device.compute_pipeline(&kiln::include_spirv!("vector_add.comp")?, "main")?;
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER;
    let index: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a = device.buffer_from_slice("i", usage, &index)?;
    let b = device.buffer_from_slice("halves", usage, &vec![0.5f32; n])?;
    let out = device.storage_buffer::<f32>("out", n)?;
    let set = |x: &kiln::Buffer, y: &kiln::Buffer, z: &kiln::Buffer| -> kiln::Result<_> {
        let mut s = pipeline.descriptor_set(0)?;
        s.write_buffer(0, x)?;
        s.write_buffer(1, y)?;
        s.write_buffer(2, z)?;
        Ok(s)
    };
    let (first, second) = (set(&a, &b, &shared)?, set(&shared, &shared, &out)?);
    let main = device.queue(QueueKind::Main);
    let write = main.after(&[]).signal(&timeline, 1).submit(|r| {
        r.bind_pipeline(&pipeline)?;
        r.bind_set(0, &first)?;
        Ok(r.dispatch_threads(n as u32)?)
    })?;
    let read = main
        .after(&[])
        .timeline(&timeline, 2)
        .signal(&timeline, 3)
        .submit(|r| {
            r.bind_pipeline(&pipeline)?;
            r.bind_set(0, &second)?;
            Ok(r.dispatch_threads(n as u32)?)
        })?;
    let limit = Duration::from_secs(60);
    write.wait_for(limit)?;
    read.wait_for(limit)?;
    let got = out.read::<f32>()?;
    let bad = (0..n).find(|&i| got[i] != 4.0 * i as f32 + 4.0);
    if let Some(i) = bad {
        return Err(format!("out[{i}] = {}, expected {}", got[i], 4.0 * i as f32 + 4.0).into());
    }
    println!(
        "kiln: ok ({n} floats: kiln wrote, torch transformed, kiln read; ordered by one timeline)"
    );
    Ok(())
}
