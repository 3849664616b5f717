

# Variant: wrong chunk boundaries. Every chunk is M // N long, so when N does
# not divide M the last M mod N elements belong to no chunk and are never
# reduced.
def chunk_bounds(*, M, N):
    size = M // N
    return [(c * size, (c + 1) * size) for c in range(N)]
