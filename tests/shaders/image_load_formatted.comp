#version 450
#extension GL_EXT_shader_image_load_formatted : require
// Reads a storage image without a format qualifier: SPIR-V capability
// StorageImageReadWithoutFormat, which needs shaderStorageImageReadWithoutFormat.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) uniform image2D img;
layout(set = 0, binding = 1) buffer Out { vec4 o; };
void main() { o = imageLoad(img, ivec2(0)); }
