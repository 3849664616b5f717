# A partly correct submission: the counting of the forward pass and the
# calculators are done; the backward pass and the measurement are not yet.


def layer_backward_flops(B: int, S: int, d: int, h: int) -> dict:
    raise NotImplementedError


def step_flops(B: int, S: int, d: int, h: int, n_layers: int) -> dict:
    raise NotImplementedError


def measure_peak_flop_per_s(n: int = 512, repeats: int = 10, device: dict | None = None) -> float:
    raise NotImplementedError


def measure_matmul_throughput(batch_sizes: list[int], d_in: int, d_out: int, repeats: int = 5,
                              peak_flop_per_s: float | None = None, device: dict | None = None) -> dict:
    raise NotImplementedError
