

# -- variant "partial": a partly correct submission ---------------------------------
# Everything through checkpointing works; the number formats and the V100
# walk-through are not done yet.  Doubles as the demo "partly correct" hand-in.
def format_ranges() -> dict:
    raise NotImplementedError


def fp16_gradient_underflow(*, config: dict, batch_size: int, loss_scale: float = 1.0) -> dict:
    raise NotImplementedError


def lost_updates(*,
                 weights: np.ndarray,  # (...) float32, any shape
                 updates: np.ndarray,  # same shape as weights, float32
                 ) -> dict:
    raise NotImplementedError


def v100_walkthrough(*, n_params: int, n_layers: int, s: int, b: int, h: int, a: int,
                     checkpoint_every: int, capacity_bytes: float) -> dict:
    raise NotImplementedError
