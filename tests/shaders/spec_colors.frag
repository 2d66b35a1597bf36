#version 450
// Issue 30 for graphics: a descriptor array whose length is specialization constant 0
// (1 by default); the fragment colour is the last buffer's. The pipeline's reflected layout
// must hold as many descriptors as the specialization makes.
layout(constant_id = 0) const uint COUNT = 1;
layout(set = 0, binding = 0) readonly buffer Color { vec4 c; } colors[COUNT];
layout(location = 0) out vec4 out_color;
void main() {
    out_color = colors[COUNT - 1].c;
}
