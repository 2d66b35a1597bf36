#version 450
// Uses SPV_EXT_shader_atomic_float_add (AtomicFloat32AddEXT), an extension kiln never enables.
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer B { float v; };
void main() { atomicAdd(v, 1.0); }
