// The glTF scene's shared declarations (examples/common/gltf_render.rs mirrors them):
// the frame uniform, the object and material records, the draw lists the culling pass
// writes. std140 / std430 layouts; sizes in the Rust structs' comments.
layout(set = 0, binding = 0) uniform Frame {
    mat4 view_proj;        // camera
    mat4 light_view_proj;  // the directional light's orthographic projection
    vec4 eye;              // camera position (w unused)
    vec4 light_dir;        // towards the light; w: 1 with shadows, 0 without
    vec4 light_color;      // rgb; w: ambient
    vec4 planes[6];        // camera frustum planes (xyz normal inwards, w distance)
    vec4 light_planes[6];  // the light's box
    uvec4 counts;          // x: objects; y: 1 = encode sRGB in the shader; z: 1 = compact lists
} frame;

struct Object {
    mat4 model;
    vec4 sphere;           // world-space bounding sphere: centre, radius
    uint index_count;
    uint first_index;
    int vertex_offset;
    uint material;
};

layout(std430, set = 0, binding = 1) readonly buffer Objects {
    Object objects[];
};
