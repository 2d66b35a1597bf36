#!/bin/bash
# `cargo xtask gpu-run profile`: where a dispatch's (or a set's) CPU time goes on an NVIDIA
# machine.
# perf (software `cpu-clock`, user space: the device's VM has no hardware events, and
# perf_event_paranoid 2 lets a process sample itself) over the automatic row's stream
# (10 000 dispatches a round, recorded, never submitted): `tracker_profile` in kiln's
# automatic mode and its *barriers known* floor, `raw_profile` in raw's automatic form
# (kiln's masks, where kiln put them). Per run: the example's thread CPU time per
# dispatch (best and mean of the rounds), the samples' shares by DSO and the top symbols.
# A share times the mean is the ns a dispatch spends there.
#
# Needs: .devbin/tracker_profile.xz, raw_profile.xz, descriptor_profile.xz (with symbols); .gl/lib*.deb (glvnd),
# .gl/d13/ (Debian 13's loader); .gl/perf/: Debian 12's `linux-perf` and the libraries it
# links (`apt-get download linux-perf libbabeltrace1 libdw1 libelf1 libnuma1 libopencsd1
# libperl5.36 libpython3.11 libpython3.11-minimal libslang2 libunwind8 libcap2
# libglib2.0-0 libdebuginfod1 libcurl3-gnutls`), unpacked beside the machine's own (its
# glibc 2.39 runs Debian 12's 2.36 binaries). ROUNDS (100), FREQ (10000 Hz), N (2), IPS, MODES
# (`automatic known raw-automatic`: `tracker_profile`'s TRACKER_MODE, `descriptor`
# (`descriptor_profile`), or `raw-` and `raw_profile`'s RAW_MODE, e.g. `scoped raw-scoped`,
# `descriptor raw-descriptor`).
TOPIC=profile
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ls .gl/perf/linux-perf_*.deb >/dev/null 2>&1 || { echo "no .gl/perf/linux-perf_*.deb"; exit 1; }
P=/tmp/perf-debs; mkdir -p $P; for f in .gl/perf/*.deb; do dpkg -x "$f" $P; done
X=/tmp/stack-d13; mkdir -p $X; for f in .gl/d13/*.deb; do dpkg -x "$f" $X; done
L=$X/usr/lib/x86_64-linux-gnu
perf() { LD_LIBRARY_PATH=$P/usr/lib/x86_64-linux-gnu:$L $P/usr/bin/perf "$@"; }
B=/tmp/devbin; mkdir -p $B
for e in tracker_profile raw_profile descriptor_profile; do
  [ -f .devbin/$e.xz ] && xz -dc .devbin/$e.xz > $B/$e && chmod +x $B/$e
done
export LD_LIBRARY_PATH=$L VK_LAYER_PATH=$X/usr/share/vulkan/explicit_layer.d KILN_VALIDATION=0
R=${ROUNDS:-100}; F=${FREQ:-10000}
date -u
for i in $(seq 1 ${N:-2}); do
  for m in ${MODES:-automatic known raw-automatic}; do
    case $m in
      raw-*) cmd="env RAW_MODE=${m#raw-} $B/raw_profile $R" ;;
      descriptor) cmd="$B/descriptor_profile $R" ;;
      *) cmd="env TRACKER_MODE=$m $B/tracker_profile $R" ;;
    esac
    d=$W/$m-$i.data
    perf record -q -e cpu-clock:u -F $F -o $d -- $cmd > $W/$m-$i.out 2>&1
    echo "== $m run $i: $(grep -h "ns per" $W/$m-$i.out | tr -s ' ')"
    echo "   $(perf report -i $d --stdio 2>/dev/null | grep -m1 'of event')"
    perf report -q -i $d --sort dso --stdio 2>/dev/null | head -4
    perf report -q -i $d --sort dso,sym --stdio 2>/dev/null | grep -v "\] 0x" | head -6 | cut -c1-150
    # IPS=1: the example's 30 most sampled instruction addresses (count, address), to read
    # against the binary's disassembly (hot instructions, e.g. a locked one).
    if [ -n "${IPS:-}" ]; then
      perf script -i $d -F ip,dso 2>/dev/null | awk '$2 ~ /_profile/ {c[$1]++} END {for (k in c) print c[k], k}' \
        | sort -rn | head -30 | tr '\n' ' '; echo
    fi
    rm -f $d
  done
done
pack
date -u
