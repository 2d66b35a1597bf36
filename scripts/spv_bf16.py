#!/usr/bin/env python3
"""Re-encodes the 16-bit float type of a SPIR-V module as bfloat16 (SPV_KHR_bfloat16).

Used by scripts/build_coopmat_spv.sh to make the bf16 GEMM module from the fp16 one: the
glslang available here (13.1.1) predates GL_EXT_bfloat16. The input must use its 16-bit
float type only as data (buffer elements, cooperative-matrix components), never in
arithmetic or constants, which holds for examples/shaders/coopmat/gemm_coopmat.comp.

  OpTypeFloat %t 16            ->  OpTypeFloat %t 16 BFloat16KHR
  OpCapability Float16         ->  OpCapability BFloat16TypeKHR, BFloat16CooperativeMatrixKHR
  + OpExtension "SPV_KHR_bfloat16"

Usage: spv_bf16.py in.spv out.spv
"""
import struct
import sys

OP_CAPABILITY, OP_EXTENSION, OP_TYPE_FLOAT = 17, 10, 22
OP_CONSTANT, OP_FCONVERT = 43, 115
CAP_FLOAT16, CAP_BF16_TYPE, CAP_BF16_COOPMAT = 9, 5116, 5118
FP_ENCODING_BFLOAT16 = 0


def string_words(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 4)
    return list(struct.unpack(f"<{len(b) // 4}I", b))


def main(src, dst):
    data = open(src, "rb").read()
    words = list(struct.unpack(f"<{len(data) // 4}I", data))
    if words[0] != 0x07230203:
        sys.exit(f"{src}: not a little-endian SPIR-V module")
    header, body, i = words[:5], [], 5
    insts = []
    while i < len(words):
        count, op = words[i] >> 16, words[i] & 0xFFFF
        insts.append((op, words[i + 1 : i + count]))
        i += count
    f16 = {ops[0] for op, ops in insts if op == OP_TYPE_FLOAT and ops[1:] == [16]}
    if len(f16) != 1:
        sys.exit(f"{src}: expected one 16-bit float type, found {len(f16)}")
    for op, ops in insts:
        if op == OP_CONSTANT and ops[0] in f16 or op == OP_FCONVERT:
            sys.exit(f"{src}: the 16-bit float type is used in arithmetic; cannot re-encode")
    out, added = [], False
    for op, ops in insts:
        if op == OP_CAPABILITY and ops == [CAP_FLOAT16]:
            continue
        if op == OP_TYPE_FLOAT and ops[0] in f16:
            ops = ops + [FP_ENCODING_BFLOAT16]
        if not added and op not in (OP_CAPABILITY,):
            out.append((OP_CAPABILITY, [CAP_BF16_TYPE]))
            out.append((OP_CAPABILITY, [CAP_BF16_COOPMAT]))
            out.append((OP_EXTENSION, string_words("SPV_KHR_bfloat16")))
            added = True
        out.append((op, ops))
    for op, ops in out:
        body.append(((len(ops) + 1) << 16) | op)
        body.extend(ops)
    open(dst, "wb").write(struct.pack(f"<{len(header) + len(body)}I", *header, *body))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
