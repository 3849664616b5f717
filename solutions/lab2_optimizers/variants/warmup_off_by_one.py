

# --- variant warmup_off_by_one: the scaled schedule with its own warmup, one step ahead ---
# (step + 1) / warmup_steps reaches the peak at step warmup_steps - 1 and starts above 0:
# a common way to write "the first step already learns".  lr_schedule itself is untouched.
def scaled_lr_schedule(*, steps, base_lr, base_batch, new_batch, warmup_steps, total_steps, min_lr=0.0,
                       critical_batch=RESNET50_CRITICAL_BATCH):
    peak = linear_scaling_rule(base_lr=base_lr, base_batch=base_batch, new_batch=new_batch,
                               critical_batch=critical_batch)
    if peak is None:
        return None
    s = np.asarray(steps, dtype=np.float64)
    after = lr_schedule(steps=steps, peak_lr=peak, warmup_steps=warmup_steps, total_steps=total_steps, min_lr=min_lr)
    return np.where(s < warmup_steps, peak * (s + 1) / warmup_steps, after)
