#version 450
// Dynamic rendering local read (tests/root/local_read.rs), the second draw: reads what the
// first draw wrote to colour attachment 0 through input attachment 0 and writes it back
// doubled (alpha 1).
layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput previous;
layout(location = 0) out vec4 color;
void main() {
    color = vec4(subpassLoad(previous).rgb * 2.0, 1.0);
}
