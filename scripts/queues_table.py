# Prints the queue groups' table (`KILN_BENCH_ONLY=queues kiln bench --json`) from the JSON left in the folder given as
# the first argument: kiln's queue rows beside the raw-ash baseline and CUDA (PyTorch) on the
# same machine, the stream rows, the best staging-sweep configurations, and the regression
# rows (round trip, recording, SAXPY).
import json, os, sys

out = sys.argv[1]

def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"({name}: {e})")
        return {"rows": []}

queues = load("bench-queues.json")
cuda = {}
try:
    with open(os.path.join(out, "cuda_transfers.json")) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                cuda[(r["kind"], r["direction"], r["bytes"] >> 20)] = r["GBps"]
except OSError as e:
    print(f"(cuda_transfers.json: {e})")

print(f"device: {queues.get('device', '?')}  driver: {queues.get('driver', '?')}")
print(f"{'row':<44} {'kiln':>9} {'raw':>9} {'CUDA pin':>9} {'CUDA page':>9} {'kiln/pin':>9} {'kiln/page':>9}")
for r in queues["rows"]:
    name = r["name"]
    if name.startswith("sweep") or name.startswith("stream"):
        continue
    words = name.split()
    direction = "H2D" if words[0] == "upload" else "D2H"
    size = int(words[1]) * (1024 if words[2] == "GiB" else 1)
    pin = cuda.get(("pinned", direction, size), float("nan"))
    page = cuda.get(("pageable", direction, size), float("nan"))
    print(f"{name:<44} {r['kiln']:>9.2f} {r['raw']:>9.2f} {pin:>9.2f} {page:>9.2f} "
          f"{r['kiln'] / pin:>9.3f} {r['kiln'] / page:>9.3f}")
print()
for r in queues["rows"]:
    if r["name"].startswith("stream"):
        print(f"{r['name']:<44} {r['unit']:>4} kiln {r['kiln']:>9.3f} raw {r['raw']:>9.3f} kiln/raw {r['ratio']:.3f}")
sweep = [r for r in queues["rows"] if r["name"].startswith("sweep")]
if sweep:
    print("\nstaging sweep (Vec paths), best 5 per direction:")
    for d in ("upload", "readback"):
        rows = sorted((r for r in sweep if r["name"].startswith(f"sweep {d}")),
                      key=lambda r: -r["kiln"])
        for r in rows[:5]:
            print(f"  {r['name']:<60} {r['kiln']:>8.2f} GB/s (raw single memcpy {r['raw']:.2f})")
print()
for group in ("transfers", "dispatch", "bandwidth"):
    for r in load(f"bench-{group}.json")["rows"]:
        print(f"{r['name']:<44} {r['unit']:>5} kiln {r['kiln']:>10.3f} raw {r['raw']:>10.3f} kiln/raw {r['ratio']:.3f}")
for note in queues.get("notes", []):
    print("note:", note)
