

# Variant: no message passing at all. ring_send remembers every rank's buffer
# in a module-level dict and sends nothing; at the first receive every rank
# already "knows" all buffers and returns their sum. The final numbers are
# right, but nothing crossed the network: 0 bytes sent, no messages.
_SEEN = {}


def ring_send(*, rank, N, step, buffer):
    if step == 0:
        _SEEN[rank] = buffer.copy()
    return []


def ring_receive(*, rank, N, step, buffer, messages):
    if step == 0:
        return np.sum([_SEEN[r] for r in range(N)], axis=0).astype(buffer.dtype)  # np.sum, not the network
    return buffer
