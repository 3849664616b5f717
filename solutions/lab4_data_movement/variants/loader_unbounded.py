

# Variant: the queue has no bound, so a fast loader runs arbitrarily far
# ahead of the consumer (and would fill memory with samples).
def run_loader(*, n_items, load_work, compute_work, kind="sleep", prefetch=False, queue_size=2):
    rec = Recorder()
    if not prefetch:
        for i in range(n_items):
            rec.compute(rec.load(i, kind=kind, amount=load_work), kind=kind, amount=compute_work)
        return rec.report()
    q = queue.Queue()  # BUG: maxsize=queue_size is missing

    def producer():
        for i in range(n_items):
            q.put(rec.load(i, kind=kind, amount=load_work))

    loader = threading.Thread(target=producer, daemon=True)
    loader.start()
    for _ in range(n_items):
        rec.compute(q.get(), kind=kind, amount=compute_work)
    loader.join()
    return rec.report()
