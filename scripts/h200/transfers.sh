# Issue 12's open targets (sourced by scripts/h200-batch.sh; uses step, rows, $B, $W).
# (a) why a 1 GiB upload from a HostBuffer runs at 38 GB/s while imported memory reaches 49:
#     the `hostmem` sweep (memory types, imported huge / 4 KiB pages, NUMA, copy shapes);
# (b) which queues copy at the same time (the hostmem duplex rows) and what CUDA gets for
#     the same duplex copies and the same 3-stage stream (scripts/cuda_stream.py).
# About 2.5 minutes in all. Needs .devbin/kiln and .devbin/stream_overlap.
echo "-- transfers: host facts"
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag 2>&1
grep -i huge /proc/meminfo | head -6
lscpu 2>/dev/null | grep -i "numa\|model name\|socket" | head -8
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f')
bus=${bus: -12}
echo "GPU $bus: numa_node $(cat /sys/bus/pci/devices/$bus/numa_node 2>&1), local_cpulist $(cat /sys/bus/pci/devices/$bus/local_cpulist 2>&1)"
echo "iommu: $(ls /sys/class/iommu 2>/dev/null | head -3 | tr '\n' ' ') groups $(ls /sys/kernel/iommu_groups 2>/dev/null | wc -l); cmdline: $(grep -o 'iommu[^ ]*\|intel_iommu[^ ]*\|amd_iommu[^ ]*' /proc/cmdline | tr '\n' ' ')"
nvidia-smi topo -m 2>&1 | head -6
which numactl >/dev/null 2>&1 && numactl -H | head -4

echo "-- transfers: GPU state before the sweep (PCIe link, clocks, P-state)"
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,clocks.sm,clocks.mem --format=csv 2>&1 | tail -2
echo "-- transfers: hostmem sweep (1 GiB; one line per variant)"
KILN_BENCH_ONLY=hostmem KILN_BENCH_HOSTMEM_MIB=1024 step hostmem 100 $B/kiln bench --json
grep -h "hostmem:\|error\|Error" $W/hostmem.err | sed 's/^kiln bench: hostmem: //' | cut -c1-400 | head -130
nvidia-smi --query-gpu=pstate,pcie.link.gen.current,pcie.link.width.current,clocks.sm,clocks.mem --format=csv,noheader 2>&1 | tail -1

# (Run A: the machine has one NUMA node, node0, and the per-node rerun hit its cap; the sweep
# runs once, at 1 GiB, where run A's 75 s cap cut it short after the memory variants.)
echo "-- transfers: CUDA duplex copies and the 3-stage stream (PyTorch streams, pinned memory)"
step cuda-stream 60 python3 scripts/cuda_stream.py; cat $W/cuda-stream.out; tail -3 $W/cuda-stream.err

# The stream example with each readback placement (KILN_READBACK_QUEUE): transfer (the
# second transfer queue, kiln's default), main, compute, compute-shader (readbacks by kiln's
# copy shader on the main queue, beside the dispatches' async-compute queue, instead of a
# copy engine).
for rq in transfer main compute compute-shader; do
  KILN_READBACK_QUEUE=$rq step stream-$rq 30 $B/stream_overlap
  echo "-- stream_overlap, KILN_READBACK_QUEUE=$rq: $(grep -h 'overlapped stages\|serial\|FAILED' $W/stream-$rq.out | tr '\n' ' ')"
  tail -2 $W/stream-$rq.err
done
