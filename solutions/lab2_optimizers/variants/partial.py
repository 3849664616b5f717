

# --- variant partial: a partly correct submission (noise experiment, schedule, clipping not done) ---
def gradient_noise(*, config, batch_sizes, trials, pool_size, seed):
    raise NotImplementedError


def lr_schedule(*, steps, peak_lr=2.5e-4, warmup_steps=500, total_steps=50_000, min_lr=0.0):
    raise NotImplementedError


def clip_grad_norm(*, grads, max_norm):
    raise NotImplementedError
