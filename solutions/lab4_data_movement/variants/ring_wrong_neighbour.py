

# Variant: sends to the previous rank, (rank − 1) mod N, instead of the next
# one. The network refuses the message (for N >= 3; with two ranks the two
# neighbours coincide).
def ring_send(*, rank, N, step, buffer):
    c = ring_chunk(rank=rank, N=N, step=step)
    lo, hi = chunk_bounds(M=buffer.shape[0], N=N)[c]
    return [{"to": (rank - 1) % N, "chunk": c, "data": buffer[lo:hi].copy()}]
