//! External memory and semaphores between two kiln devices on one physical device
//! (`Device::exportable_buffer`, `Buffer::export_memory`, `Device::import_buffer`,
//! `Device::exportable_timeline_semaphore`, `TimelineSemaphore::export`,
//! `Device::import_timeline_semaphore`, `After::signal`), their coded errors, and the fd
//! ownership rules (imported fds closed exactly once, counted in `/proc/self/fd` in a
//! process of its own).
//!
//! What lavapipe offers decides the path, and each test prints which one ran: where a
//! device lacks an extension (or the driver the handle type), the coded `KILN-E163` path is
//! asserted instead.

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use common::{add, assert_clean, code, device};
use kiln::{
    vk, Buffer, BufferDesc, Device, ExternalHandle, ExternalMemory, MemoryLocation, QueueKind,
};

const N: usize = 1024;

fn desc(label: &str) -> BufferDesc<'_> {
    BufferDesc::default()
        .label(label)
        .size((N * 4) as u64)
        .usage(vk::BufferUsageFlags::STORAGE_BUFFER)
        .location(MemoryLocation::GpuOnly)
}

/// Whether `device` can share timeline semaphores as opaque fds; prints the path.
fn semaphores_shared(device: &Device) -> bool {
    match device.exportable_timeline_semaphore("probe", 0, ExternalHandle::OpaqueFd) {
        Ok(_) => true,
        Err(e) => {
            assert_eq!(e.code(), "KILN-E163", "{e}");
            println!("path: no exportable timeline semaphores on this device ({e})");
            false
        }
    }
}

/// vector_add on `device`: `out = x + y` over N floats.
fn add_into(
    device: &Device,
    x: &Buffer,
    y: &Buffer,
    out: &Buffer,
) -> (kiln::ComputePipeline, kiln::DescriptorSet) {
    let pipeline = add::vector_add(device);
    let set = add::set(&pipeline, x, y, out);
    (pipeline, set)
}

/// The lavapipe test: device A writes a shared buffer and signals a shared
/// timeline; device B, which imported both, waits for it, runs a kernel that reads what A
/// wrote and writes the buffer back, and signals; A waits for that and runs a kernel on
/// what B wrote. Only the shared timeline orders the three (no host wait between them);
/// the bytes are checked, and both devices' validation stays silent.
#[test]
fn two_devices_share_a_buffer_and_a_timeline_semaphore_by_fd() {
    let (a, b) = (device(), device());
    if !a.features().external_memory_fd {
        let e = a
            .exportable_buffer(&desc("shared"), ExternalHandle::OpaqueFd)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E163", "{e}");
        println!(
            "path: {} lacks VK_KHR_external_memory_fd: E163 ({e})",
            a.info().name
        );
        return;
    }
    let shared_a = a
        .exportable_buffer(&desc("shared"), ExternalHandle::OpaqueFd)
        .unwrap();
    let (fd, memory) = shared_a.export_memory().unwrap();
    assert_eq!(memory.handle, ExternalHandle::OpaqueFd);
    assert!(memory.allocation_size >= (N * 4) as u64);
    let shared_b = b
        .import_buffer(&desc("shared (imported)"), fd.as_fd(), &memory)
        .unwrap();
    drop(fd); // the caller's fd, closed by its owner; B's import holds its own
    assert_eq!(shared_b.external_memory(), Some(memory));
    // A's side: shared = 1.5; later out_a = shared + shared.
    let ones_a = add::storage(&a, "zeros", &vec![0.0f32; N]);
    let out_a = a.storage_buffer::<f32>("out a", N).unwrap();
    let (pa, set_a) = add_into(&a, &shared_a, &shared_a, &out_a);
    let _ = ones_a;
    // B's side: scratch = shared + 2; shared = scratch (a copy back).
    let twos_b = add::storage(&b, "twos", &vec![2.0f32; N]);
    let scratch_b = b.storage_buffer::<f32>("scratch b", N).unwrap();
    let (pb, set_b) = add_into(&b, &shared_b, &twos_b, &scratch_b);
    let (qa, qb) = (a.queue(QueueKind::Main), b.queue(QueueKind::Main));
    if semaphores_shared(&a) {
        let sa = a
            .exportable_timeline_semaphore("handoff", 0, ExternalHandle::OpaqueFd)
            .unwrap();
        let sfd = sa.export().unwrap();
        let sb = b
            .import_timeline_semaphore("handoff (imported)", sfd.as_fd(), ExternalHandle::OpaqueFd)
            .unwrap();
        drop(sfd);
        let first = qa
            .after(&[])
            .signal(&sa, 1)
            .submit(|r| Ok(r.fill_buffer(&shared_a, 1.5f32.to_bits())?))
            .unwrap();
        let second = qb
            .after(&[])
            .timeline(&sb, 1)
            .signal(&sb, 2)
            .submit(|r| {
                add::dispatch(r, &pb, &set_b, N as u32)?;
                Ok(r.copy_buffer(&scratch_b, 0, &shared_b, 0, (N * 4) as u64)?)
            })
            .unwrap();
        let third = qa
            .after(&[])
            .timeline(&sa, 2)
            .submit(|r| add::dispatch(r, &pa, &set_a, N as u32))
            .unwrap();
        third.wait().unwrap();
        second.wait().unwrap();
        first.wait().unwrap();
        assert_eq!(
            sb.value().unwrap(),
            2,
            "the imported semaphore shares the payload"
        );
        println!("path: buffer and timeline semaphore shared by opaque fd");
    } else {
        a.execute(|r| Ok(r.fill_buffer(&shared_a, 1.5f32.to_bits())?))
            .unwrap();
        b.execute(|r| {
            add::dispatch(r, &pb, &set_b, N as u32)?;
            Ok(r.copy_buffer(&scratch_b, 0, &shared_b, 0, (N * 4) as u64)?)
        })
        .unwrap();
        a.execute(|r| add::dispatch(r, &pa, &set_a, N as u32))
            .unwrap();
        println!("path: buffer shared by opaque fd, ordered by host waits");
    }
    // B read 1.5 and wrote 3.5; A read 3.5 (7 = 3.5 + 3.5).
    assert_eq!(scratch_b.read::<f32>().unwrap(), vec![3.5f32; N]);
    assert_eq!(out_a.read::<f32>().unwrap(), vec![7.0f32; N]);
    assert_eq!(shared_b.read::<f32>().unwrap(), vec![3.5f32; N]);
    assert_clean(&a);
    assert_clean(&b);
}

/// Bad input is coded before the Vulkan call it stands in for: handle types of the other
/// kind of object or that the device lacks (`KILN-E163`), sizes and memory types that do
/// not fit (`KILN-E164`), fds that are no exported allocation (`KILN-E165`, the fd still
/// the caller's and open).
#[test]
fn external_misuse_is_coded() {
    let device = device();
    let f = device.features().clone();
    println!(
        "external_memory_fd {}, external_memory_dma_buf {}, external_semaphore_fd {}",
        f.external_memory_fd, f.external_memory_dma_buf, f.external_semaphore_fd
    );
    // Handle types of the other kind of object.
    let e = device
        .exportable_buffer(&desc("x"), ExternalHandle::SyncFd)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E163", "{e}");
    let e = device
        .exportable_timeline_semaphore("t", 0, ExternalHandle::SyncFd)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E163", "{e}");
    assert!(e.to_string().contains("03253"), "{e}");
    assert_eq!(
        code(device.exportable_timeline_semaphore("t", 0, ExternalHandle::DmaBuf)),
        "KILN-E163"
    );
    // Objects that were not made exportable.
    let plain = device.storage_buffer::<u32>("plain", 4).unwrap();
    assert_eq!(code(plain.export_memory()), "KILN-E163");
    assert_eq!(plain.external_memory(), None);
    let t = device.timeline_semaphore("plain", 0).unwrap();
    assert_eq!(code(t.export()), "KILN-E163");
    // Not device-local.
    let host = desc("host").location(MemoryLocation::CpuToGpu);
    assert_eq!(
        code(device.exportable_buffer(&host, ExternalHandle::OpaqueFd)),
        "KILN-E163"
    );
    if !f.external_memory_fd {
        assert_eq!(
            code(device.exportable_buffer(&desc("x"), ExternalHandle::OpaqueFd)),
            "KILN-E163"
        );
        println!("path: no VK_KHR_external_memory_fd: E163 only");
        assert_clean(&device);
        return;
    }
    let exported = device
        .exportable_buffer(&desc("exported"), ExternalHandle::OpaqueFd)
        .unwrap();
    let (fd, memory) = exported.export_memory().unwrap();
    let other = common::device();
    // Larger than the memory: E164, before any import.
    let big = desc("too big").size(memory.allocation_size + 1);
    let e = other.import_buffer(&big, fd.as_fd(), &memory).unwrap_err();
    assert_eq!(e.code(), "KILN-E164", "{e}");
    // A memory type the buffer does not allow.
    let wrong_type = memory.memory_type_index(31);
    assert_eq!(
        code(other.import_buffer(&desc("x"), fd.as_fd(), &wrong_type)),
        "KILN-E164"
    );
    // An fd that is no allocation on any driver (a pipe): E165 before any Vulkan call,
    // and the fd is still the caller's.
    let (pipe, _writer) = std::io::pipe().unwrap();
    let e = other
        .import_buffer(&desc("x"), pipe.as_fd(), &memory)
        .unwrap_err();
    assert_eq!(e.code(), "KILN-E165", "{e}");
    assert!(e.to_string().contains("a pipe"), "{e}");
    assert!(fd_is_open(&pipe), "a failed import closed the caller's fd");
    // One of another kind than the driver's exports (/dev/null): E165 too, the caller's fd
    // still open.
    driver_refuses(&fd, &memory);
    // The good import still works after the failed ones.
    let imported = other
        .import_buffer(&desc("imported"), fd.as_fd(), &memory)
        .unwrap();
    assert!(fd_is_open(&fd), "an import closed the caller's fd");
    // An imported buffer cannot be exported again.
    assert_eq!(code(imported.export_memory()), "KILN-E163");
    if f.external_semaphore_fd && semaphores_shared(&device) {
        let e = other
            .import_timeline_semaphore("x", pipe.as_fd(), ExternalHandle::OpaqueFd)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E165", "{e}");
        assert!(fd_is_open(&pipe));
        semaphore_driver_refuses();
    }
    dma_buf(&device, &other);
    drop(imported);
    assert_clean(&device);
    assert_clean(&other);
}

/// An opaque fd of another kind of file than the device's own exports (`/dev/null`, a
/// character device): `KILN-E165` naming both kinds before the driver sees it (NVIDIA
/// 580.159.04 was handed it once and the process's next allocations ran out of memory), the
/// caller's fd still open, and the good export still importable. On a device of its own,
/// which learns its kind from a probe export (this import comes before any export there).
fn driver_refuses(good: &OwnedFd, memory: &ExternalMemory) {
    let d = device();
    let not_memory: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
    for _ in 0..3 {
        let e = d
            .import_buffer(&desc("x"), not_memory.as_fd(), memory)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E165", "{e}");
        assert!(
            e.to_string().contains("it is the character device 1:3"),
            "{e}"
        );
        assert!(
            fd_is_open(&not_memory),
            "a failed import closed the caller's fd"
        );
    }
    let ok = d
        .import_buffer(&desc("after"), good.as_fd(), memory)
        .unwrap();
    drop(ok);
    // The driver never saw the fd: not even lavapipe's refusal message.
    assert_clean(&d);
}

/// `/dev/null` as an opaque semaphore payload: `KILN-E165` naming both kinds before the
/// driver sees it (the same undefined behaviour as for memory,
/// VUID-VkImportSemaphoreFdInfoKHR-fd-01544), the caller's fd still open. On a device of
/// its own that exported no semaphore yet (it learns its kind from a probe export).
fn semaphore_driver_refuses() {
    let d = device();
    let null: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
    for _ in 0..2 {
        let e = d
            .import_timeline_semaphore("x", null.as_fd(), ExternalHandle::OpaqueFd)
            .unwrap_err();
        assert_eq!(e.code(), "KILN-E165", "{e}");
        assert!(
            e.to_string().contains("it is the character device 1:3"),
            "{e}"
        );
        assert!(fd_is_open(&null), "a failed import closed the caller's fd");
    }
    // The driver never saw the fd.
    assert_clean(&d);
    println!("path: /dev/null refused as an opaque semaphore payload");
}

/// DMA-BUF where the device offers it: exported, imported by the other device, the bytes
/// seen through it; else `KILN-E163`.
fn dma_buf(a: &Device, b: &Device) {
    match a.exportable_buffer(&desc("dma-buf"), ExternalHandle::DmaBuf) {
        Ok(buf) => {
            a.execute(|r| Ok(r.fill_buffer(&buf, 0xD3AB)?)).unwrap();
            let (fd, memory) = buf.export_memory().unwrap();
            let imported = b
                .import_buffer(&desc("dma-buf (imported)"), fd.as_fd(), &memory)
                .unwrap();
            assert_eq!(imported.read::<u32>().unwrap(), vec![0xD3ABu32; N]);
            println!("path: DMA-BUF exported and imported");
        }
        Err(e) => {
            assert_eq!(e.code(), "KILN-E163", "{e}");
            println!("path: no DMA-BUF export: {e}");
        }
    }
}

fn fd_is_open(fd: &impl AsRawFd) -> bool {
    std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd())).is_ok()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Imported fds are closed exactly once: a failed import leaves the caller's fd open and
/// adds none; a successful import neither closes the caller's fd nor leaks the one kiln
/// gave Vulkan (the count returns to where it was once the buffers and semaphores are
/// gone). Counted in a process of its own (`KILN_TEST_CHILD`), where no other test opens
/// fds meanwhile.
#[test]
fn imported_fds_are_closed_exactly_once() {
    const NAME: &str = "interop::external::imported_fds_are_closed_exactly_once";
    if std::env::var("KILN_TEST_CHILD").as_deref() != Ok(NAME) {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env("KILN_TEST_CHILD", NAME)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        print!("{text}");
        assert!(
            out.status.success() && text.contains("counted:"),
            "the child failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let (a, b) = (device(), device());
    if !a.features().external_memory_fd {
        println!("counted: nothing (no VK_KHR_external_memory_fd)");
        return;
    }
    let probe = a
        .exportable_buffer(&desc("probe"), ExternalHandle::OpaqueFd)
        .unwrap();
    let (probe_fd, probe_memory) = probe.export_memory().unwrap();
    println!("exported fd: {}", describe_fd(probe_fd.as_raw_fd()));
    drop(probe_fd);
    // A first round opens whatever the driver keeps open for itself (a GPU driver's device
    // files); the second is counted.
    round(&a, &b, &probe_memory, None);
    let base = open_fds();
    round(&a, &b, &probe_memory, Some(base));
    assert_eq!(
        open_fds(),
        base,
        "an imported fd was leaked (or closed twice)"
    );
    println!("counted: {base} fds before and after");
}

/// What file fd names: its link in `/proc/self/fd`, file type and device numbers.
fn describe_fd(fd: i32) -> String {
    use std::os::unix::fs::MetadataExt;
    let path = format!("/proc/self/fd/{fd}");
    let link = std::fs::read_link(&path);
    match std::fs::metadata(&path) {
        Ok(m) => format!(
            "{link:?} mode {:o} dev {:#x} rdev {:#x}",
            m.mode(),
            m.dev(),
            m.rdev()
        ),
        Err(e) => format!("{link:?} ({e})"),
    }
}

/// Failed imports of an fd that is no memory (refused before kiln duplicates it: no fd more,
/// none less), then
/// successful imports of buffers and semaphores, all dropped. With `base`, the counts are
/// checked against it.
fn round(a: &Device, b: &Device, probe: &ExternalMemory, base: Option<usize>) {
    let not_memory: OwnedFd = std::fs::File::open("/dev/null").unwrap().into();
    for _ in 0..3 {
        let e = b.import_buffer(&desc("x"), not_memory.as_fd(), probe);
        assert_eq!(code(e), "KILN-E165");
    }
    if let Some(base) = base {
        assert_eq!(
            open_fds(),
            base + 1,
            "failed imports leaked or closed an fd"
        );
    }
    drop(not_memory);
    let exported = a
        .exportable_buffer(&desc("e"), ExternalHandle::OpaqueFd)
        .unwrap();
    let mut imported = Vec::new();
    for i in 0..3 {
        let (fd, memory) = exported.export_memory().unwrap();
        imported.push(
            b.import_buffer(&desc(&format!("i{i}")), fd.as_fd(), &memory)
                .unwrap(),
        );
        assert!(fd_is_open(&fd));
    }
    let sem = semaphores_shared(a).then(|| {
        let s = a
            .exportable_timeline_semaphore("s", 0, ExternalHandle::OpaqueFd)
            .unwrap();
        let fd = s.export().unwrap();
        let i = b
            .import_timeline_semaphore("i", fd.as_fd(), ExternalHandle::OpaqueFd)
            .unwrap();
        (s, i)
    });
    drop(sem);
    drop(imported);
    drop(exported);
    a.wait_idle().unwrap();
    b.wait_idle().unwrap();
}
