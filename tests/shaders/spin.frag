#version 460
// The spinning draw of the post-mortem tests (tests/root/post_mortem.rs): each fragment
// spins while `flag` is 0 — nobody writes it — for at most `max_rounds` rounds (llvmpipe
// ends an invocation's loops after 65535 rounds: a long spin there is many fragments),
// then writes how many rounds it ran and red. The flag is read with an atomic so that no
// compiler hoists the read and folds the loop away (as spin.comp).
layout(set = 0, binding = 0) coherent buffer Flag { uint flag; uint rounds; };
layout(push_constant) uniform Push { uint max_rounds; };
layout(location = 0) out vec4 color;
void main() {
    uint i = 0u;
    while (i < max_rounds && atomicAdd(flag, 0u) == 0u) {
        i++;
    }
    atomicMax(rounds, i);
    color = vec4(1.0, 0.0, 0.0, 1.0);
}
