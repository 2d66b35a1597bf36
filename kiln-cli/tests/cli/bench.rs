//! `kiln bench --quick --json` runs end to end on the test device (lavapipe in CI) so the
//! benchmark never rots. It runs under the validation layer (debug build) and exits non-zero
//! if the layer reports anything, for kiln's side and the raw-ash baseline alike. Speed is
//! never asserted: only the JSON shape and that every figure is a positive number.

use std::process::Command;

const ROWS: &[(&str, &str)] = &[
    ("dispatch recording", "ns"),
    ("dispatch recording, automatic barriers", "ns"),
    ("round trip median", "us"),
    ("round trip p99", "us"),
    ("round trip CPU time", "us"),
    ("round trip, recorded once", "us"),
    ("descriptor set alloc+write+bind", "ns"),
    // lavapipe has VK_KHR_push_descriptor.
    ("descriptor set alloc+write+bind (push descriptor)", "ns"),
    ("push descriptor set, 6 buffers", "ns"),
    ("scoped dispatch recording", "ns"),
    ("timed round trip median", "us"),
    // Issue 15's chains.
    (
        "chain 1000 dependent 1-thread dispatches (recorded once)",
        "us",
    ),
    ("chain 100 dependent y += x over 2^20 f32", "us"),
    ("saxpy scalar", "GB/s"),
    ("saxpy vec4", "GB/s"),
    ("pipeline create cold", "ms"),
    ("pipeline create warm", "ms"),
    ("pipeline warm speedup (cold/warm)", "x"),
    ("pipeline re-create, no cache", "ms"),
    // Issue 28: 24 specializations one after another and on the pipeline threads.
    ("pipeline create 24, one after another", "ms"),
    ("pipeline create 24, in parallel", "ms"),
    (
        "pipeline parallel speedup (one after another/parallel)",
        "x",
    ),
    ("reflection + layout per module", "us"),
    ("staging upload", "GB/s"),
    ("staging readback", "GB/s"),
    // The queue rows (issue 12); --quick: 16 MiB. The imported-memory rows need
    // VK_EXT_external_memory_host, which lavapipe has.
    ("upload 16 MiB from pinned memory", "GB/s"),
    ("readback 16 MiB to pinned memory", "GB/s"),
    ("upload 16 MiB from imported memory", "GB/s"),
    ("readback 16 MiB to imported memory", "GB/s"),
    ("upload 16 MiB from a Vec", "GB/s"),
    ("readback 16 MiB into a Vec", "GB/s"),
    ("stream 16 MiB, serial (one queue)", "ms"),
    ("stream 16 MiB, overlapped (three queues)", "ms"),
    ("stream overlap speedup (serial/overlapped)", "x"),
    (
        "stream 16 MiB, overlapped, readbacks on the main queue",
        "ms",
    ),
    ("stream overlap speedup, readbacks on the main queue", "x"),
    (
        "stream 16 MiB, overlapped, dispatches on the main queue, readbacks on the compute queue",
        "ms",
    ),
    (
        "stream overlap speedup, dispatches on the main queue, readbacks on the compute queue",
        "x",
    ),
    // The graphics rows (issue 25); --quick sizes. lavapipe has drawIndirectCount.
    ("draw recording, set + push per draw", "ns"),
    ("draw recording, one draw_list", "ns"),
    ("GPU-driven frame, 10k culled", "us"),
    ("MSAA 4x resolve 640x360", "us"),
    ("generate_mips 512x512 RGBA8", "us"),
];

#[test]
fn bench_quick_json_has_every_row_with_positive_numbers() {
    // The reflection row reads the corpus: this test is in the corpus tier.
    let Some(corpus) = crate::corpus::root() else {
        return;
    };
    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["bench", "--quick", "--json"])
        .env("KILN_CORPUS", corpus)
        .env("KILN_VALIDATION", "1")
        // The recording row deliberately records dispatches with no barriers between them
        // (raw and kiln alike, to time recording only); synchronization validation would
        // report those hazards, so it alone is off here. Core validation stays on.
        .env("KILN_SYNC_VALIDATION", "0")
        // lavapipe maps device-local memory; make kiln stage anyway so the staged transfer
        // path runs under the validation layer too.
        .env("KILN_BENCH_FORCE_STAGING", "1")
        .output()
        .expect("run the kiln binary");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "kiln bench failed:\n{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    // The documented shape's version (kiln-cli/README.md).
    assert_eq!(doc["schema_version"], 1);
    for key in ["device", "driver"] {
        let s = doc[key].as_str().unwrap_or_default();
        assert!(!s.is_empty(), "`{key}` missing in {doc}");
    }
    let rows = doc["rows"].as_array().expect("rows is an array");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["name"].as_str()).collect();
    assert_eq!(
        names,
        ROWS.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "rows in order"
    );
    for (row, (name, unit)) in rows.iter().zip(ROWS) {
        assert_eq!(row["unit"].as_str(), Some(*unit), "unit of {name}");
        for key in ["kiln", "raw", "ratio"] {
            let v = row[key].as_f64().unwrap_or(f64::NAN);
            assert!(
                v.is_finite() && v > 0.0,
                "{name}: `{key}` = {} is not a positive number",
                row[key]
            );
        }
        let (k, r, ratio) = (
            row["kiln"].as_f64().unwrap(),
            row["raw"].as_f64().unwrap(),
            row["ratio"].as_f64().unwrap(),
        );
        assert!(
            (ratio - k / r).abs() <= 1e-9 * ratio.abs().max(1.0),
            "{name}: ratio {ratio} is not kiln/raw = {}",
            k / r
        );
        // Feature `bench-wgpu`: rows 1-3 and the draw recording carry the wgpu figure and
        // kiln/wgpu; otherwise no row has them.
        let peer = cfg!(feature = "bench-wgpu")
            && ((name.starts_with("dispatch recording") && !name.contains("automatic"))
                || name.starts_with("draw recording")
                || (name.starts_with("round trip") && !name.contains("recorded once"))
                || name.starts_with("saxpy"));
        if peer {
            let w = row["wgpu"].as_f64().unwrap_or(f64::NAN);
            let rw = row["ratio_wgpu"].as_f64().unwrap_or(f64::NAN);
            assert!(w.is_finite() && w > 0.0, "{name}: `wgpu` = {}", row["wgpu"]);
            assert!(
                (rw - k / w).abs() <= 1e-9 * rw.abs().max(1.0),
                "{name}: ratio_wgpu {rw} is not kiln/wgpu = {}",
                k / w
            );
        } else {
            assert!(
                row.get("wgpu").is_none() && row.get("ratio_wgpu").is_none(),
                "{name}: unexpected wgpu fields in {row}"
            );
        }
    }
}
