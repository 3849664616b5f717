

# Variant: a background thread that never overlaps anything. After putting
# an item into the queue the loader waits until the consumer says it has
# computed it, so loading item i+1 only starts once item i is done: the
# thread and the queue are there, the prefetching is not.
def run_loader(*, n_items, load_work, compute_work, kind="sleep", prefetch=False, queue_size=2):
    rec = Recorder()
    if not prefetch:
        for i in range(n_items):
            rec.compute(rec.load(i, kind=kind, amount=load_work), kind=kind, amount=compute_work)
        return rec.report()
    q, done = queue.Queue(maxsize=queue_size), queue.Queue()

    def producer():
        for i in range(n_items):
            q.put(rec.load(i, kind=kind, amount=load_work))
            done.get()  # BUG: waits for the compute before loading the next item

    loader = threading.Thread(target=producer, daemon=True)
    loader.start()
    for _ in range(n_items):
        rec.compute(q.get(), kind=kind, amount=compute_work)
        done.put(True)
    loader.join()
    return rec.report()
