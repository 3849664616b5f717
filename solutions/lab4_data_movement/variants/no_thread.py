

# Variant: ignores prefetch=True and always runs the sequential loop.
_sequential_run_loader = run_loader


def run_loader(*, n_items, load_work, compute_work, kind="sleep", prefetch=False, queue_size=2):
    return _sequential_run_loader(n_items=n_items, load_work=load_work, compute_work=compute_work, kind=kind,
                                  prefetch=False, queue_size=queue_size)
