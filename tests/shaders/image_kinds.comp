#version 450
// Samples a cube map along the six axes (+X, -X, +Y, -Y, +Z, -Z), a 2D array at each of
// its 3 layers and a 3D texture at each of its 4 slices (texel centres, level 0), and
// writes the 13 colours in that order.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform samplerCube cube;
layout(set = 0, binding = 1) uniform sampler2DArray layers;
layout(set = 0, binding = 2) uniform sampler3D volume;
layout(set = 0, binding = 3) writeonly buffer Out { vec4 o[13]; };
void main() {
    vec3 axes[6] = vec3[6](vec3(1, 0, 0), vec3(-1, 0, 0), vec3(0, 1, 0), vec3(0, -1, 0),
                           vec3(0, 0, 1), vec3(0, 0, -1));
    for (int i = 0; i < 6; ++i) {
        o[i] = textureLod(cube, axes[i], 0.0);
    }
    for (int i = 0; i < 3; ++i) {
        o[6 + i] = textureLod(layers, vec3(0.5, 0.5, float(i)), 0.0);
    }
    for (int i = 0; i < 4; ++i) {
        o[9 + i] = textureLod(volume, vec3(0.5, 0.5, (float(i) + 0.5) / 4.0), 0.0);
    }
}
