//! Benchmark results people can read: `docs/benchmarks/RESULTS.md`, one current table per
//! machine, generated from the run records in `docs/benchmarks/data/*.json`.
//!
//! A run record is one `kiln bench --json` output (verbatim, under `bench`) with what the
//! bench cannot know about itself, and optionally the CUDA scripts' reference figures:
//!
//! ```json
//! { "machine": "NVIDIA H200", "date": "2026-12-04", "commit": "8b7017a",
//!   "source": "scripts/gpu/draws.sh",
//!   "bench": { "schema_version": 1, "device": "…", "driver": "…",
//!              "rows": [ { "name": "…", "unit": "us", "kiln": 1.0, "raw": 1.0,
//!                          "ratio": 1.0, "wgpu": 2.0, "ratio_wgpu": 0.5 } ] },
//!   "cuda": [ { "name": "<a row of bench.rows>", "value": 1.0 } ] }
//! ```
//!
//! `raw` may be `null` for rows with no raw-ash baseline (GEMM, measured against cuBLAS).
//! For every machine the newest record holding a row gives that row (records in date
//! order, then file name), so a partial run (one group of rows) replaces only its rows.
//!
//! - `cargo xtask bench-results` writes RESULTS.md; `--check` fails when it is not what
//!   the records give (CI runs the check through `cargo xtask lint`);
//! - `cargo xtask bench-import BENCH.json --machine NAME --commit SHA [--date YYYY-MM-DD]
//!   [--source TEXT]` turns a `kiln bench --json` output into a record.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

pub const DATA: &str = "docs/benchmarks/data";
pub const RESULTS: &str = "docs/benchmarks/RESULTS.md";

/// One row of a machine's table, with the record it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub name: String,
    pub unit: String,
    pub kiln: f64,
    pub raw: Option<f64>,
    pub wgpu: Option<f64>,
    pub cuda: Option<f64>,
    pub date: String,
    pub commit: String,
    pub driver: String,
}

/// A record, parsed.
#[derive(Debug)]
pub struct Record {
    pub file: String,
    pub machine: String,
    pub date: String,
    pub device: String,
    pub rows: Vec<Row>,
}

fn field<'a>(v: &'a Value, key: &str, file: &str) -> Result<&'a str, String> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{file}: `{key}` missing or not a string"))
}

/// Parses one record (`file` names it in errors).
pub fn parse(file: &str, v: &Value) -> Result<Record, String> {
    let bench = v
        .get("bench")
        .ok_or_else(|| format!("{file}: no `bench` (a kiln bench --json output)"))?;
    let (machine, date, commit) = (
        field(v, "machine", file)?,
        field(v, "date", file)?,
        field(v, "commit", file)?,
    );
    let (device, driver) = (field(bench, "device", file)?, field(bench, "driver", file)?);
    let cuda: BTreeMap<&str, f64> = v
        .get("cuda")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| Some((c.get("name")?.as_str()?, c.get("value")?.as_f64()?)))
                .collect()
        })
        .unwrap_or_default();
    let rows = bench
        .get("rows")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{file}: `bench.rows` missing"))?;
    let mut out = Vec::new();
    for r in rows {
        let name = field(r, "name", file)?;
        let kiln = r
            .get("kiln")
            .and_then(Value::as_f64)
            .ok_or_else(|| format!("{file}: row `{name}` has no number `kiln`"))?;
        out.push(Row {
            name: name.to_string(),
            unit: field(r, "unit", file)?.to_string(),
            kiln,
            raw: r.get("raw").and_then(Value::as_f64),
            wgpu: r.get("wgpu").and_then(Value::as_f64),
            cuda: cuda.get(name).copied(),
            date: date.to_string(),
            commit: commit.to_string(),
            driver: driver.to_string(),
        });
    }
    for name in cuda.keys() {
        if !out.iter().any(|r| r.name == *name) {
            return Err(format!("{file}: CUDA figure for `{name}`, which is no row"));
        }
    }
    Ok(Record {
        file: file.to_string(),
        machine: machine.to_string(),
        date: date.to_string(),
        device: device.to_string(),
        rows: out,
    })
}

/// Every record of `dir`, sorted by date then file name.
pub fn load(dir: &Path) -> Result<Vec<Record>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut records = Vec::new();
    for f in files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{name}: {e}"))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: {e}"))?;
        records.push(parse(&name, &v)?);
    }
    records.sort_by(|a, b| (&a.date, &a.file).cmp(&(&b.date, &b.file)));
    Ok(records)
}

/// Per machine, its current rows: the newest record holding each row gives it; rows keep
/// the order they first appeared in.
pub fn current(records: &[Record]) -> BTreeMap<String, (String, Vec<Row>)> {
    let mut machines: BTreeMap<String, (String, Vec<Row>)> = BTreeMap::new();
    for rec in records {
        let (device, rows) = machines
            .entry(rec.machine.clone())
            .or_insert_with(|| (rec.device.clone(), Vec::new()));
        device.clone_from(&rec.device);
        for r in &rec.rows {
            match rows.iter_mut().find(|o| o.name == r.name) {
                Some(old) => *old = r.clone(),
                None => rows.push(r.clone()),
            }
        }
    }
    machines
}

/// A figure as the tables print it: 3 significant digits, at most 3 decimals.
fn num(v: Option<f64>) -> String {
    let Some(v) = v else {
        return "–".into();
    };
    let a = v.abs();
    let decimals = if a >= 100.0 {
        0
    } else if a >= 10.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    };
    format!("{v:.decimals$}")
}

/// kiln against the baseline: raw ash where there is one, else CUDA.
fn ratio(r: &Row) -> String {
    match (r.raw, r.cuda) {
        (Some(raw), _) if raw != 0.0 => format!("{:.3}", r.kiln / raw),
        (None, Some(cuda)) if cuda != 0.0 => format!("{:.3} (CUDA)", r.kiln / cuda),
        _ => "–".into(),
    }
}

/// RESULTS.md from the records.
pub fn render(records: &[Record]) -> String {
    let mut s = String::from(
        "<!-- Generated by `cargo xtask bench-results` from docs/benchmarks/data/*.json: \
         do not edit. -->\n# kiln benchmark results\n\n\
         One table per machine: each row as its newest run measured it (`kiln bench`, \
         `kiln-bench/`), kiln beside a raw-`ash` baseline doing the same work in the same \
         process, wgpu (feature `bench-wgpu`) and CUDA (`scripts/cuda_*.py`) where they \
         apply. **kiln/raw** is kiln's figure over raw ash's (over CUDA's where a row has \
         no raw baseline): for times (ns, us, ms) below 1 is faster, for rates (GB/s, \
         TFLOP/s, x) above 1 is. Only figures of one row of one run are compared with each \
         other; the date, commit and driver say which run.\n\n\
         How each row is measured: [ROWS.md](ROWS.md). The runs these come from, with their \
         notes and the history before: [log/](log/). Re-run a machine's rows with \
         `cargo xtask gpu-run <topic>` (`scripts/gpu/README.md`), import the JSON with \
         `cargo xtask bench-import`, regenerate with `cargo xtask bench-results`.\n",
    );
    for (machine, (device, rows)) in current(records) {
        let _ = write!(
            s,
            "\n## {machine}\n\nDevice: {device}.\n\n\
             | row | unit | kiln | raw ash | wgpu | CUDA | kiln/raw | date | commit | driver |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |\n"
        );
        for r in &rows {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | `{}` | {} |",
                r.name.replace('|', "\\|"),
                r.unit,
                num(Some(r.kiln)),
                num(r.raw),
                num(r.wgpu),
                num(r.cuda),
                ratio(r),
                r.date,
                r.commit,
                r.driver
            );
        }
    }
    s
}

/// `cargo xtask bench-results [--check]`.
pub fn results(rest: &[&str]) -> bool {
    let check = rest.contains(&"--check");
    let records = match load(Path::new(DATA)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("xtask: bench-results: {e}");
            return false;
        }
    };
    let text = render(&records);
    if check {
        let old = std::fs::read_to_string(RESULTS).unwrap_or_default();
        if old != text {
            eprintln!(
                "xtask: bench-results: {RESULTS} is not what {DATA} gives; run \
                 `cargo xtask bench-results` and commit it"
            );
            return false;
        }
        eprintln!(
            "xtask: bench-results: {RESULTS} is current ({} records)",
            records.len()
        );
        return true;
    }
    match std::fs::write(RESULTS, text) {
        Ok(()) => {
            eprintln!("xtask: wrote {RESULTS} from {} records", records.len());
            true
        }
        Err(e) => {
            eprintln!("xtask: cannot write {RESULTS}: {e}");
            false
        }
    }
}

fn option<'a>(rest: &[&'a str], name: &str) -> Option<&'a str> {
    rest.iter()
        .position(|a| *a == name)
        .and_then(|i| rest.get(i + 1))
        .copied()
}

/// Today's date (UTC) from the system clock, `YYYY-MM-DD`.
fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() / 86_400)
        .unwrap_or(0) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `cargo xtask bench-import BENCH.json --machine NAME --commit SHA [--date D] [--source S]`.
pub fn import(rest: &[&str]) -> bool {
    let (Some(file), Some(machine), Some(commit)) = (
        rest.first().filter(|f| !f.starts_with("--")),
        option(rest, "--machine"),
        option(rest, "--commit"),
    ) else {
        eprintln!(
            "usage: cargo xtask bench-import BENCH.json --machine NAME --commit SHA \
             [--date YYYY-MM-DD] [--source TEXT]"
        );
        return false;
    };
    let date = option(rest, "--date").map_or_else(today, str::to_string);
    let bench: Value = match std::fs::read_to_string(file)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    {
        Ok(v) => v,
        Err(e) => {
            eprintln!("xtask: bench-import: {file}: {e}");
            return false;
        }
    };
    let record = json!({
        "machine": machine,
        "date": date,
        "commit": commit,
        "source": option(rest, "--source").unwrap_or(file),
        "bench": bench,
    });
    if let Err(e) = parse(file, &record) {
        eprintln!("xtask: bench-import: {e}");
        return false;
    }
    let slug: String = machine
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let stem = Path::new(file)
        .file_stem()
        .map_or("bench".into(), |s| s.to_string_lossy().into_owned());
    let target = Path::new(DATA).join(format!("{date}-{slug}-{stem}.json"));
    let text = serde_json::to_string_pretty(&record).unwrap_or_default() + "\n";
    match std::fs::write(&target, text) {
        Ok(()) => {
            eprintln!(
                "xtask: wrote {}; now `cargo xtask bench-results`",
                target.display()
            );
            true
        }
        Err(e) => {
            eprintln!("xtask: cannot write {}: {e}", target.display());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(machine: &str, date: &str, rows: Value, cuda: Value) -> Value {
        json!({"machine": machine, "date": date, "commit": "abc1234", "source": "test",
               "bench": {"schema_version": 1, "device": "Dev", "driver": format!("drv {date}"),
                         "rows": rows}, "cuda": cuda})
    }

    #[test]
    fn the_newest_record_of_a_row_wins_and_rows_keep_their_order() {
        let a = record(
            "M",
            "2026-01-01",
            json!([{"name": "a", "unit": "us", "kiln": 2.0, "raw": 1.0},
                   {"name": "b", "unit": "GB/s", "kiln": 10.0, "raw": 20.0, "wgpu": 5.0}]),
            json!([{"name": "b", "value": 40.0}]),
        );
        let b = record(
            "M",
            "2026-02-01",
            json!([{"name": "a", "unit": "us", "kiln": 1.5, "raw": 1.0},
                   {"name": "gemm", "unit": "TFLOP/s", "kiln": 300.0, "raw": null}]),
            json!([{"name": "gemm", "value": 600.0}]),
        );
        let mut recs = vec![parse("b", &b).unwrap(), parse("a", &a).unwrap()];
        recs.sort_by(|x, y| (&x.date, &x.file).cmp(&(&y.date, &y.file)));
        let cur = current(&recs);
        let rows = &cur["M"].1;
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "gemm"]);
        assert_eq!((rows[0].kiln, rows[0].date.as_str()), (1.5, "2026-02-01"));
        assert_eq!(rows[1].cuda, Some(40.0));
        let text = render(&recs);
        assert!(
            text.contains("| a | us | 1.50 | 1.00 | – | – | 1.500 | 2026-02-01 | `abc1234` | drv 2026-02-01 |"),
            "{text}"
        );
        assert!(
            text.contains("| b | GB/s | 10.0 | 20.0 | 5.00 | 40.0 | 0.500 | 2026-01-01 |"),
            "{text}"
        );
        assert!(
            text.contains("| gemm | TFLOP/s | 300 | – | – | 600 | 0.500 (CUDA) |"),
            "{text}"
        );
    }

    #[test]
    fn a_cuda_figure_of_no_row_is_refused() {
        let r = record(
            "M",
            "2026-01-01",
            json!([{"name": "a", "unit": "us", "kiln": 2.0, "raw": 1.0}]),
            json!([{"name": "typo", "value": 1.0}]),
        );
        assert!(parse("r", &r).unwrap_err().contains("typo"));
    }

    #[test]
    fn the_committed_records_give_the_committed_results() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let records = load(&root.join(DATA)).unwrap();
        assert!(!records.is_empty());
        let machines = current(&records);
        assert!(machines.len() >= 2, "{:?}", machines.keys());
        for (m, (_, rows)) in &machines {
            assert!(!rows.is_empty(), "{m}");
            for r in rows {
                assert!(r.kiln.is_finite() && r.kiln > 0.0, "{m}: {r:?}");
            }
        }
        let committed = std::fs::read_to_string(root.join(RESULTS)).unwrap();
        assert_eq!(
            committed,
            render(&records),
            "RESULTS.md is stale: cargo xtask bench-results"
        );
    }

    #[test]
    fn today_is_a_date() {
        let t = today();
        assert_eq!(t.len(), 10);
        assert!(t.starts_with("20"));
    }
}
