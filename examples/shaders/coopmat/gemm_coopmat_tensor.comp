// kiln: prebuilt
// The workgroup-scope GEMM with tensor addressing (VK_NV_cooperative_matrix2,
// SPV_NV_tensor_addressing). Its source is SPIR-V assembly, gemm_coopmat_tensor.spvasm (the
// header there says what it computes and its spec constants): no glslang on PyPI knows
// GL_NV_cooperative_matrix2. scripts/build_coopmat_spv.sh assembles it with spirv-as 2025.5
// into gemm_coopmat_tensor.comp.spv, which kiln-build copies.
