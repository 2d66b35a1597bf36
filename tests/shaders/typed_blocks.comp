#version 450
// Typed bindings (kiln-build `bindings`): std140 and std430 blocks and push constants with
// the vec3 traps, a mat3, a padded float array, a nested struct and a runtime array.
layout(local_size_x = 1) in;

struct Light {
    vec3 dir;        // std140/std430: 16-byte aligned, 12 bytes
    float power;     // fills the vec3's 4th slot: offset 12
};

layout(set = 0, binding = 0, std140) uniform Scene {
    float exposure;  // 0
    vec3 tint;       // 16 (not 4)
    float gamma;     // 28
    mat3 basis;      // 32: 3 columns of 16 bytes
    float weights[3];// 80: ArrayStride 16 in std140
    Light light;     // 128: a struct is 16-aligned in std140 (16 bytes)
    uint count;      // 144
} scene;

layout(set = 0, binding = 1, std430) buffer Particles {
    vec3 origin;     // 0
    float scale;     // 12
    vec2 extent;     // 16
    float mass[2];   // 24: ArrayStride 4 in std430
    Light lights[];  // 32, stride 16
} particles;

layout(set = 0, binding = 2, std430) buffer Out { float result[]; };

layout(push_constant) uniform Push {
    vec3 offset;     // 0
    float factor;    // 12
    uint index;      // 16
} pc;

void main() {
    result[0] = scene.exposure;
    result[1] = scene.tint.z;
    result[2] = scene.gamma;
    result[3] = scene.basis[2][1];
    result[4] = scene.weights[2];
    result[5] = scene.light.dir.y;
    result[6] = scene.light.power;
    result[7] = float(scene.count);
    result[8] = particles.origin.x + particles.scale;
    result[9] = particles.extent.y + particles.mass[1];
    result[10] = particles.lights[pc.index].power;
    result[11] = pc.offset.z * pc.factor;
}
