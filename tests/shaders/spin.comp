#version 460
// The hung shader of the post-mortem tests (tests/root/post_mortem.rs): each invocation
// spins while `flag` is 0 — nobody writes it — for at most `max_rounds` rounds, then
// writes how many rounds it ran. lavapipe's llvmpipe (gallivm) ends the loops of an
// invocation after 65535 iterations in all, so a long spin there is many workgroups; on
// other GPUs one workgroup of 0xffffffff rounds spins for minutes. The flag is read with
// an atomic so that no compiler hoists the read and folds the loop away.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) coherent buffer Flag { uint flag; uint rounds; };
layout(push_constant) uniform Push { uint max_rounds; };
void main() {
    uint i = 0u;
    while (i < max_rounds && atomicAdd(flag, 0u) == 0u) {
        i++;
    }
    atomicMax(rounds, i);
}
