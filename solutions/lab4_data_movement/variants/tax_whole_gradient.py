

# Variant "tax_whole_gradient": the AllReduce is counted as every GPU sending the
# whole gradient once, M bytes, not the ring's 2(N−1)/N × M (its own arithmetic,
# not network_wall's).
def communication_tax(*, n_params, bytes_per_param, n_gpus, link_Gbps, compute_s_one_gpu, overlap=False):
    grad = n_params * bytes_per_param
    link = link_Gbps / 8 * 1e9
    compute = compute_s_one_gpu / n_gpus
    comm = grad / link if n_gpus > 1 else 0.0
    step = max(compute, comm) if overlap else compute + comm
    speedup = compute_s_one_gpu / step
    return {"comm_s": comm, "compute_s": compute, "step_s": step, "comm_fraction": (step - compute) / step,
            "speedup": speedup, "efficiency": speedup / n_gpus, "r": 2 * grad / (link * compute_s_one_gpu)}
