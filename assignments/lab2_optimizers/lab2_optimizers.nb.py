# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] tags=["en"]
# # Lab 2: optimizers and batch (sổ tay thực hành)
#
# *Machine Learning Systems*, Vol. I, Ch. 8 "Model Training" (huấn luyện mô hình), sections 3, 4, 6 and 8.
#
# In this lab you write the pieces of a training step that sit *after* the backward pass:
#
# 1. the **update rules** of SGD, momentum (động lượng), RMSprop and Adam, in NumPy, with the optimizer state (trạng thái) passed in and out explicitly;
# 2. their **trajectories** (quỹ đạo) on a 2-D loss surface (mặt mất mát);
# 3. the **memory of optimizer state**: the 1×/2×/2×/3× rule, checked on real `torch.optim` optimizers;
# 4. **gradient noise** (nhiễu gradient): why the mini-batch gradient's noise falls as 1/√B;
# 5. **GPT-2 XL's learning-rate schedule** (lịch tốc độ học) and gradient clipping;
# 6. **gradient accumulation** (tích luỹ gradient), and the two bugs the chapter warns about.
#
# You edit `optimizers.py` and `accumulation.py`; their docstrings are the contract (every convention the grader uses is written there). `lab2_models.py` is given: a tiny seeded classifier and its data. The whole notebook runs on a CPU in well under a minute.

# %% [markdown] tags=["vi"]
# # Lab 2: bộ tối ưu và batch (sổ tay thực hành)
#
# *Machine Learning Systems*, Tập I, Chương 8 "Model Training" (huấn luyện mô hình), các mục 3, 4, 6 và 8.
#
# Trong bài lab này, bạn viết các thành phần của một bước huấn luyện nằm *sau* lượt ngược:
#
# 1. **các quy tắc cập nhật** của SGD, động lượng (momentum), RMSprop và Adam, bằng NumPy, với trạng thái của bộ tối ưu được truyền vào và trả ra một cách tường minh;
# 2. **quỹ đạo** của chúng trên một mặt mất mát 2 chiều;
# 3. **bộ nhớ dành cho trạng thái bộ tối ưu**: quy tắc 1×/2×/2×/3×, được kiểm chứng trên các bộ tối ưu `torch.optim` thật;
# 4. **nhiễu gradient**: vì sao nhiễu của gradient mini-batch giảm theo 1/√B;
# 5. **lịch tốc độ học của GPT-2 XL** và cắt gradient (gradient clipping);
# 6. **tích luỹ gradient**, cùng hai lỗi mà chương sách cảnh báo.
#
# Bạn sửa `optimizers.py` và `accumulation.py`; docstring của chúng là bản hợp đồng (mọi quy ước mà bộ chấm sử dụng đều được ghi ở đó). `lab2_models.py` được cho sẵn: một bộ phân loại rất nhỏ với seed cố định, cùng dữ liệu của nó. Toàn bộ sổ tay chạy trên CPU, dưới 1 phút và còn dư nhiều thời gian.

# %% [markdown] tags=["en"]
# ### Setup, and checking as you go
#
# The next cell finds this lab's files (also when the notebook was opened somewhere else, e.g. on Colab) and starts
# [otter-grader](https://otter-grader.readthedocs.io)'s checker. After each exercise a cell `grader.check("...")`
# runs that question's **public tests** on your files in this folder and shows what failed: the same tests as
# `autograder check lab2`, one question at a time.

# %% [markdown] tags=["vi"]
# ### Thiết lập, và kiểm tra trong lúc làm
#
# Ô tiếp theo tìm các tệp của bài lab này (kể cả khi sổ tay được mở ở nơi khác, ví dụ trên Colab) và khởi động
# bộ kiểm tra của [otter-grader](https://otter-grader.readthedocs.io). Sau mỗi bài tập, một ô `grader.check("...")`
# chạy các **bài kiểm thử công khai** (public tests) của câu hỏi đó trên các tệp của bạn trong thư mục này và cho biết
# những gì chưa đạt: đó chính là các bài kiểm thử của `autograder check lab2`, chạy mỗi lần một câu hỏi.
#
# Các thông báo do `grader.check` in ra bằng tiếng Việt ở mọi nơi (Jupyter, VS Code, Colab): ô thiết lập của sổ tay
# này (`*.vi.ipynb`) tự đặt ngôn ngữ của nó.

# %% tags=["setup"]
LAB, MODULE = "lab2_optimizers", "optimizers"

# %%
import numpy as np
import matplotlib.pyplot as plt
import torch

torch.set_num_threads(1)  # the models here are tiny: one thread is faster than two

import lab2_models
import optimizers
import accumulation
from autograder.grading.notebook_text import num, nums, show, tr  # what the cells print and plot, in the notebook's language

# How the plots name and draw each optimizer
LABEL = {"sgd": "SGD", "momentum": tr("momentum"), "rmsprop": "RMSprop", "adam": "Adam"}
STYLE = {"sgd": dict(color="tab:blue", ls="-", marker="o"), "momentum": dict(color="tab:orange", ls="--", marker="s"),
         "rmsprop": dict(color="tab:green", ls="-.", marker="^"), "adam": dict(color="tab:red", ls=":", marker="D")}

# %% [markdown] tags=["en"]
# ## 1. Update rules (bộ tối ưu), section 3
#
# With gradient $g_t$ (plus weight decay $\lambda\theta$ when asked for), PyTorch's rules are
#
# | rule | state | update |
# |---|---|---|
# | SGD | none | $\theta \leftarrow \theta - \eta g$ |
# | momentum | $b$ (starts **at the first gradient**) | $b \leftarrow \mu b + g,\ \theta \leftarrow \theta - \eta b$ |
# | RMSprop | $s$ (starts at 0) | $s \leftarrow \alpha s + (1-\alpha) g^2,\ \theta \leftarrow \theta - \eta\, g / (\sqrt{s} + \epsilon)$ |
# | Adam | $m, v$, step $t$ | $\hat m = m/(1-\beta_1^t),\ \hat v = v/(1-\beta_2^t),\ \theta \leftarrow \theta - \eta\, \hat m / (\sqrt{\hat v} + \epsilon)$ |
#
# Implement `sgd_step`, `rmsprop_step` and `adam_step`. The cell below replays the same 50 gradients through your Adam and through `torch.optim.Adam`; the grader does the same for every rule, over many steps, to about 1e-6.

# %% [markdown] tags=["vi"]
# ## 1. Các quy tắc cập nhật (bộ tối ưu), mục 3
#
# Với gradient $g_t$ (cộng thêm suy giảm trọng số (weight decay) $\lambda\theta$ khi được yêu cầu), các quy tắc của PyTorch là
#
# | quy tắc | trạng thái | cập nhật |
# |---|---|---|
# | SGD | không có | $\theta \leftarrow \theta - \eta g$ |
# | động lượng (momentum) | $b$ (khởi đầu **bằng gradient đầu tiên**) | $b \leftarrow \mu b + g,\ \theta \leftarrow \theta - \eta b$ |
# | RMSprop | $s$ (khởi đầu bằng 0) | $s \leftarrow \alpha s + (1-\alpha) g^2,\ \theta \leftarrow \theta - \eta\, g / (\sqrt{s} + \epsilon)$ |
# | Adam | $m, v$, bước $t$ | $\hat m = m/(1-\beta_1^t),\ \hat v = v/(1-\beta_2^t),\ \theta \leftarrow \theta - \eta\, \hat m / (\sqrt{\hat v} + \epsilon)$ |
#
# Hãy cài đặt `sgd_step`, `rmsprop_step` và `adam_step`. Ô bên dưới cho cùng 50 gradient chạy lại qua Adam của bạn và qua `torch.optim.Adam`; bộ chấm làm điều tương tự cho mọi quy tắc, qua nhiều bước, với sai lệch khoảng 1e-6.

# %%
rng = np.random.default_rng(0)
theta0 = rng.normal(size=(4, 3))
grads = [rng.normal(size=(4, 3)) for _ in range(50)]

theta, state = theta0, {}
for g in grads:
    theta, state = optimizers.adam_step(params=theta, grads=g, state=state, lr=1e-2)

p = torch.tensor(theta0, requires_grad=True)
opt = torch.optim.Adam([p], lr=1e-2)
for g in grads:
    p.grad = torch.tensor(g)
    opt.step()

print(tr("state keys: {keys}, step: {step}").format(keys=sorted(state), step=state["step"]))
print(tr("max |yours - torch.optim| after 50 steps: {error}").format(
    error=num(np.abs(theta - p.detach().numpy()).max(), ".1e")))

# %%
grader.check("update_rules")

# %% [markdown] tags=["en"]
# ## 2. Trajectories on a loss surface (quỹ đạo trên mặt mất mát), section 3
#
# Two named surfaces (given by name, the formulas are in `loss_surface`'s docstring):
#
# * `"quadratic"`: $f = \tfrac12 x^2 + 10 y^2$, curvatures 1 and 20: an ill-conditioned bowl. The step size is limited by the steep direction ($\eta < 2/20$), so progress along the flat one is slow.
# * `"rosenbrock"`: $f = (1-x)^2 + 100(y-x^2)^2$, a narrow curved valley with its minimum at (1, 1).
#
# Implement `loss_surface` and `trajectory`, then compare the four optimizers.
#
# A trajectory is a long chain of floating-point steps, and some settings amplify rounding: RMSprop at a large learning rate bounces across Rosenbrock's valley, and two correct implementations that round differently (the gradient written as $400x^3 - 400xy + 2x - 2$ instead of autograd's order) can end up far apart. The grader measures each case's own sensitivity to rounding and allows for it, so you need not match torch bit for bit.

# %% [markdown] tags=["vi"]
# ## 2. Quỹ đạo trên mặt mất mát, mục 3
#
# Hai mặt được đặt tên (chọn theo tên; công thức nằm trong docstring của `loss_surface`):
#
# * `"quadratic"`: $f = \tfrac12 x^2 + 10 y^2$, độ cong 1 và 20: một cái bát có điều kiện xấu (ill-conditioned). Kích thước bước bị giới hạn bởi hướng dốc ($\eta < 2/20$), nên việc tiến dọc theo hướng thoải diễn ra chậm.
# * `"rosenbrock"`: $f = (1-x)^2 + 100(y-x^2)^2$, một thung lũng hẹp và cong, có cực tiểu tại (1, 1).
#
# Hãy cài đặt `loss_surface` và `trajectory`, rồi so sánh bốn bộ tối ưu.
#
# Một quỹ đạo là một chuỗi dài các bước tính dấu phẩy động, và có những thiết lập khuếch đại sai số làm tròn: RMSprop với tốc độ học lớn nảy qua lại giữa hai vách thung lũng Rosenbrock, và hai cách cài đặt đúng nhưng làm tròn khác nhau (gradient viết thành $400x^3 - 400xy + 2x - 2$ thay vì theo thứ tự của autograd) có thể đi rất xa nhau. Bộ chấm đo độ nhạy với sai số làm tròn của từng trường hợp và chừa chỗ cho nó, nên bạn không cần khớp với torch đến từng bit.

# %%
runs = {
    "quadratic": ((-2.0, 1.0), 50, (0.0, 0.0), {"sgd": {"lr": 0.09}, "momentum": {"lr": 0.02}, "rmsprop": {"lr": 0.05}, "adam": {"lr": 0.1}}),
    "rosenbrock": ((-1.5, 2.0), 1000, (1.0, 1.0), {"sgd": {"lr": 1e-3}, "momentum": {"lr": 2e-4}, "rmsprop": {"lr": 3e-3}, "adam": {"lr": 0.02}}),
}
paths = {surface: {name: optimizers.trajectory(surface=surface, optimizer=name, start=start, steps=steps, hparams=hp)
                   for name, hp in settings.items()}
         for surface, (start, steps, minimum, settings) in runs.items()}
box = {"quadratic": ((-2.2, 2.2), (-1.2, 1.2)), "rosenbrock": ((-2.0, 2.0), (-0.6, 2.6))}  # (x range, y range)
title = {"quadratic": tr("quadratic"), "rosenbrock": "Rosenbrock"}

def contours(ax, surface):
    (x0, x1), (y0, y1) = box[surface]
    X, Y = np.meshgrid(np.linspace(x0, x1, 200), np.linspace(y0, y1, 200))
    Z, _ = optimizers.loss_surface(surface=surface, xy=np.stack([X, Y], axis=-1))
    ax.contour(X, Y, np.log1p(Z), levels=25, cmap="Greys", linewidths=0.6)
    start, minimum = runs[surface][0], runs[surface][2]
    ax.plot(*start, "ko"); ax.plot(*minimum, "k*", ms=12)  # where it starts, the minimum
    ax.set_xlim(x0, x1); ax.set_ylim(y0, y1)

# Top: the quadratic's four paths, then both surfaces' loss curves.
# Bottom: Rosenbrock's paths share one valley, so each optimizer gets its own panel (the others in grey).
fig = plt.figure(figsize=(14, 8), layout="constrained")
axd = fig.subplot_mosaic([["quadratic"] * 4 + ["loss quadratic"] * 4 + ["loss rosenbrock"] * 4,
                          [name for name in optimizers.OPTIMIZERS for _ in range(3)]])
for surface, (start, steps, minimum, settings) in runs.items():
    ax_loss = axd[f"loss {surface}"]
    for name, path in paths[surface].items():
        loss, _ = optimizers.loss_surface(surface=surface, xy=path)  # (steps + 1,)
        ax_loss.semilogy(loss, **STYLE[name], markevery=steps // 10, ms=4, label=LABEL[name])
    ax_loss.set_title(tr("{surface}: loss").format(surface=title[surface]))
    ax_loss.set_xlabel(tr("step")); ax_loss.set_ylabel(tr("loss"))
    ax_loss.legend(fontsize=8)

ax = axd["quadratic"]
start, steps, minimum, settings = runs["quadratic"]
contours(ax, "quadratic")
for name, path in paths["quadratic"].items():
    ax.plot(path[:, 0], path[:, 1], **STYLE[name], ms=3, lw=1.2, label=f"{LABEL[name]}, lr {num(settings[name]['lr'], 'g')}")
ax.set_title(tr("quadratic: {steps} steps from {start}").format(steps=num(steps), start=nums(start, brackets="()")))
ax.legend(fontsize=8, loc="upper right")

start, steps, minimum, settings = runs["rosenbrock"]
for name in optimizers.OPTIMIZERS:
    ax = axd[name]
    contours(ax, "rosenbrock")
    for other, path in paths["rosenbrock"].items():
        if other != name:
            ax.plot(path[:, 0], path[:, 1], color="0.6", lw=0.8)
    path = paths["rosenbrock"][name]
    ax.plot(path[:, 0], path[:, 1], **{**STYLE[name], "ls": "-"}, lw=1.5, ms=4, markevery=100)  # a marker every 100 steps
    ax.plot(*path[-1], marker=STYLE[name]["marker"], color=STYLE[name]["color"], ms=10, mec="k")  # where it ends
    ax.set_title(tr("Rosenbrock, {optimizer} (lr {lr}): {steps} steps").format(
        optimizer=LABEL[name], lr=num(settings[name]["lr"], "g"), steps=num(steps)), fontsize=10)
show()

# %% [markdown] tags=["en"]
# Things to notice: on the quadratic, SGD zig-zags across the steep direction (its step size is capped by the curvature 20); momentum gathers speed but overshoots and circles in; RMSprop and Adam divide each coordinate by its own gradient scale, so both directions shrink at a similar rate. On Rosenbrock every method finds the valley quickly and then crawls along its floor toward (1, 1); the loss curves show who crawls fastest. Try other learning rates: where does SGD diverge on the quadratic?

# %% [markdown] tags=["vi"]
# Những điều cần để ý: trên mặt bậc hai (quadratic), SGD đi zig-zag qua lại theo hướng dốc (kích thước bước của nó bị chặn bởi độ cong 20); động lượng tăng tốc dần nhưng vượt quá đích rồi lượn vòng vào dần; RMSprop và Adam chia mỗi toạ độ cho độ lớn gradient của riêng toạ độ đó, nên cả hai hướng đều co lại với tốc độ tương tự nhau. Trên Rosenbrock, mọi phương pháp đều nhanh chóng tìm ra thung lũng rồi bò chậm dọc theo đáy thung lũng về phía (1, 1); các đường cong mất mát cho thấy phương pháp nào bò nhanh nhất. Hãy thử các tốc độ học khác: từ tốc độ học nào thì SGD phân kỳ trên mặt bậc hai?

# %%
grader.check("trajectories")

# %% [markdown] tags=["en"]
# ## 3. Optimizer state (trạng thái) and its memory, section 3
#
# Per parameter, SGD keeps nothing extra, momentum one buffer, RMSprop one square average, Adam two moments. Counting parameters plus state: **1×, 2×, 2×, 3×** the parameter memory. For 100M parameters in FP32, Adam's state alone is 800 MB. The work per parameter per step grows the same way: about 2, 3, 4 and 5 operations.
#
# Implement `optimizer_memory` (the rule) and `optimizer_state_footprint`, which builds a real `torch.optim` optimizer, takes one step, and counts what it actually keeps.

# %% [markdown] tags=["vi"]
# ## 3. Trạng thái bộ tối ưu và bộ nhớ của nó, mục 3
#
# Với mỗi tham số, SGD không giữ thêm gì, động lượng giữ một bộ đệm, RMSprop một trung bình bình phương, Adam hai moment. Tính cả tham số lẫn trạng thái: **1×, 2×, 2×, 3×** bộ nhớ của tham số. Với 100M tham số ở FP32, riêng trạng thái của Adam đã chiếm 800 MB. Khối lượng tính toán cho mỗi tham số ở mỗi bước cũng tăng theo cách tương tự: khoảng 2, 3, 4 và 5 phép toán.
#
# Hãy cài đặt `optimizer_memory` (quy tắc) và `optimizer_state_footprint`; hàm sau tạo một bộ tối ưu `torch.optim` thật, thực hiện một bước, rồi đếm những gì nó thực sự lưu giữ.

# %%
for name in optimizers.OPTIMIZERS:
    rule = optimizers.optimizer_memory(num_params=100_000_000, optimizer=name, bytes_per_value=4)
    real = optimizers.optimizer_state_footprint(config=lab2_models.DEFAULT_CONFIG, optimizer=name, hparams={})
    print(tr("{optimizer} rule: state {mb} MB for 100M FP32 parameters, {rule}x   | torch keeps {keys}: {real}x").format(
        optimizer=f"{LABEL[name]:>11}", mb=num(rule["state_bytes"] / 1e6, "6,.0f"), rule=num(rule["multiple"]),
        keys=real["state_keys"], real=num(real["multiple"], 0)))
amsgrad = optimizers.optimizer_state_footprint(config=lab2_models.DEFAULT_CONFIG, optimizer="adam", hparams={"amsgrad": True})
print(tr("Adam with amsgrad keeps {keys} -> {multiple}x").format(keys=amsgrad["state_keys"],
                                                                 multiple=num(amsgrad["multiple"], 0)))

# %%
names = list(optimizers.OPTIMIZERS)
rule = [optimizers.optimizer_memory(num_params=100, optimizer=n, bytes_per_value=4)["multiple"] for n in names]
real = [optimizers.optimizer_state_footprint(config=lab2_models.DEFAULT_CONFIG, optimizer=n, hparams={})["multiple"]
        for n in names]
x = np.arange(len(names))
plt.figure(figsize=(5, 3))
plt.bar(x - 0.2, rule, 0.4, label=tr("the rule"))
plt.bar(x + 0.2, real, 0.4, label=tr("what torch.optim keeps"))
plt.xticks(x, [LABEL[n] for n in names]); plt.ylabel(tr("memory / parameter memory")); plt.legend(); show()

# %%
grader.check("optimizer_state")

# %% [markdown] tags=["en"]
# ## 4. Gradient noise (nhiễu gradient), section 3
#
# The mini-batch gradient is a mean of B per-example gradients, so its standard deviation falls as $\sigma/\sqrt{B}$: on a log-log plot, a line of slope −0.5. Implement `gradient_noise` exactly as its docstring describes (the grader replays it), then fit the slope.

# %% [markdown] tags=["vi"]
# ## 4. Nhiễu gradient, mục 3
#
# Gradient mini-batch là trung bình của B gradient theo từng mẫu, nên độ lệch chuẩn của nó giảm theo $\sigma/\sqrt{B}$: trên đồ thị log-log, đó là một đường thẳng có hệ số góc −0,5. Hãy cài đặt `gradient_noise` đúng như docstring của nó mô tả (bộ chấm chạy lại đúng thí nghiệm đó), rồi khớp hệ số góc.

# %%
batch_sizes = [1, 2, 4, 8, 16, 32, 64, 128]
noise = optimizers.gradient_noise(config=optimizers.NOISE_CONFIG, batch_sizes=batch_sizes, trials=50, pool_size=512, seed=0)
B = np.array(batch_sizes)
fig, ax = plt.subplots(figsize=(5.5, 4), layout="constrained")
ax.loglog(B, noise["std"][0] / np.sqrt(B), "-", color="0.75", lw=5, label=tr("1/√B, from the value at B = 1"))
ax.loglog(B, np.exp(noise["intercept"]) * B ** noise["slope"], "-", color="tab:orange",
          label=tr("fit: slope {slope}").format(slope=num(noise["slope"], 3)))
ax.loglog(B, noise["std"], "o", color="tab:blue", label=tr("measured std of the mini-batch gradient"))
ax.set_xticks(B, [str(b) for b in batch_sizes]); ax.xaxis.set_minor_locator(plt.NullLocator())
ax.set_xlabel(tr("batch size B")); ax.set_ylabel(tr("gradient noise (std)")); ax.legend(loc="lower left"); show()

# %% [markdown] tags=["en"]
# Quadrupling the batch only halves the noise; this diminishing return is one reason large-batch training needs a retuned learning rate.

# %% [markdown] tags=["vi"]
# Tăng batch lên gấp bốn chỉ làm nhiễu giảm một nửa; lợi ích giảm dần này là một lý do khiến huấn luyện với batch lớn cần chỉnh lại tốc độ học.

# %%
grader.check("gradient_noise")

# %% [markdown] tags=["en"]
# ## 5. GPT-2 XL's learning-rate schedule (lịch tốc độ học), section 4
#
# GPT-2 XL trains with Adam, β = (0.9, 0.999), weight decay 0.01 and gradient clipping at global norm 1.0. The learning rate warms up linearly from 0 to 2.5e-4 over 500 steps, then follows a cosine down to a floor (0 by default; the chapter does not state it) at step 50,000. Implement `lr_schedule` and `clip_grad_norm`.

# %% [markdown] tags=["vi"]
# ## 5. Lịch tốc độ học của GPT-2 XL, mục 4
#
# GPT-2 XL được huấn luyện bằng Adam, β = (0,9; 0,999), suy giảm trọng số (weight decay) 0,01 và cắt gradient ở chuẩn toàn cục (global norm) 1,0. Tốc độ học khởi động (warmup): tăng tuyến tính từ 0 lên 2,5e-4 trong 500 bước, rồi giảm theo đường cosin xuống một mức sàn (mặc định là 0; chương sách không nêu mức này) tại bước 50.000. Hãy cài đặt `lr_schedule` và `clip_grad_norm`.

# %%
for key, value in optimizers.GPT2_XL.items():  # the chapter's setup
    print(f"{key:>14} = {nums(value, ',g', brackets='()') if isinstance(value, tuple) else num(value, ',g')}")
steps = np.arange(0, 55_001, 50)
lrs = {tr("floor {lr}").format(lr=num(0)): np.asarray(optimizers.lr_schedule(steps=steps)),
       tr("floor {lr}").format(lr=num(2.5e-5, "g")): np.asarray(optimizers.lr_schedule(steps=steps, min_lr=2.5e-5))}
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), layout="constrained")
for ax, last, where in zip(axes, (55_000, 1_000), ("upper right", "lower right")):
    keep = steps <= last
    for (label, lr), ls in zip(lrs.items(), ("-", "--")):
        ax.plot(steps[keep], lr[keep], ls, label=label)
    ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))  # 2.5 × 1e-4, not 0.00025
    ax.set_xlabel(tr("step")); ax.set_ylabel(tr("learning rate")); ax.legend(loc=where)
axes[0].set_title(tr("the whole run")); axes[1].set_title(tr("the warmup: the first 1,000 steps"))
show()
key_steps = [0, 250, 500, 25_250, 50_000, 60_000]
print(tr("learning rate at steps {steps}: {lrs}").format(
    steps=nums(key_steps), lrs=nums(optimizers.lr_schedule(steps=key_steps), "g")))
clipped = optimizers.clip_grad_norm(grads=[np.array([3.0, 4.0])], max_norm=1.0)
print(tr("clip {grads} to norm 1: {clipped}, norm before: {norm}").format(
    grads=nums([3, 4]), clipped=nums(clipped["grads"][0], "g"), norm=num(clipped["total_norm"], "g")))

# %%
grader.check("schedule")

# %% [markdown] tags=["en"]
# ## 6. Gradient accumulation (tích luỹ gradient), sections 6 and 8
#
# When a batch of B examples does not fit, run k micro-batches of b examples, calling `backward()` on each so the gradients add up in `.grad`, then step once. GPT-2's setup: micro-batch 16 × 4 accumulation steps × 8 GPUs = an effective batch of 512.
#
# For the sum to be the big-batch gradient, each micro-batch's mean loss must be scaled by $b_j/B$ (= 1/k for equal micro-batches):
# $$\nabla L = \frac1k \sum_j \frac1b \sum_{i \in j} \nabla \ell_i.$$
#
# Time: the chapter writes the time per update as $k\,T_\text{micro} + (k-1)\,T_\text{sync}$. In data-parallel training every `backward()` all-reduces the gradients; the $k-1$ synchronizations of the intermediate micro-batches are wasted work, and wrapping those backwards in `no_sync()` removes them, leaving a single sync per update.
#
# The chapter names two bugs, and the hidden tests check for both:
#
# * **(A)** summing the micro-batch gradients without dividing by k: the gradient is k× too large;
# * **(B)** a misplaced `zero_grad()`: the previous step's gradient leaks into the next.
#
# A third pitfall: with a short last micro-batch, averaging the per-micro-batch means with weight 1/k is not the mean over examples.
#
# And the point of it all: the model must never see the whole big batch at once, or no memory was saved. Putting all B examples through one forward gives exactly the big-batch gradient, so the numbers cannot show it. The shipped model shows it instead: it records every forward it runs (`model.forward_log`: how many examples, and a fingerprint of which), `accumulate_and_step` returns that log as `"forward_log"`, and the grader compares it with the micro-batches it expects.
#
# Implement `split_batch` and `accumulate_and_step`, then compare with the big-batch gradient.

# %% [markdown] tags=["vi"]
# ## 6. Tích luỹ gradient, mục 6 và 8
#
# Khi một batch gồm B mẫu không vừa bộ nhớ, hãy chạy k micro-batch, mỗi micro-batch b mẫu, gọi `backward()` trên từng micro-batch để các gradient cộng dồn vào `.grad`, rồi cập nhật một lần. Cấu hình của GPT-2: micro-batch 16 × 4 bước tích luỹ × 8 GPU = batch hiệu dụng 512.
#
# Để tổng này đúng bằng gradient của batch lớn, mất mát trung bình của mỗi micro-batch phải được nhân với $b_j/B$ (= 1/k khi các micro-batch có kích thước bằng nhau):
# $$\nabla L = \frac1k \sum_j \frac1b \sum_{i \in j} \nabla \ell_i.$$
#
# Thời gian: chương sách viết thời gian cho mỗi lần cập nhật là $k\,T_\text{micro} + (k-1)\,T_\text{sync}$. Trong huấn luyện song song dữ liệu (data-parallel), mỗi lần `backward()` đều all-reduce các gradient; $k-1$ lần đồng bộ của các micro-batch trung gian là công sức lãng phí, và bọc các lượt ngược đó trong `no_sync()` sẽ loại bỏ chúng, chỉ còn một lần đồng bộ cho mỗi lần cập nhật.
#
# Chương sách nêu tên hai lỗi, và các bài kiểm thử ẩn kiểm tra cả hai:
#
# * **(A)** cộng các gradient của micro-batch mà không chia cho k: gradient lớn gấp k lần;
# * **(B)** đặt `zero_grad()` sai chỗ: gradient của bước trước rò sang bước sau.
#
# Cạm bẫy thứ ba: khi micro-batch cuối ngắn hơn, lấy trung bình các giá trị trung bình của từng micro-batch với trọng số 1/k không cho ra giá trị trung bình trên các mẫu.
#
# Và mục đích của tất cả: mô hình không bao giờ được thấy cả batch lớn cùng một lúc, nếu không thì chẳng tiết kiệm được chút bộ nhớ nào. Đưa cả B mẫu qua một lượt xuôi cho đúng gradient của batch lớn, nên các con số không thể cho thấy lỗi này. Mô hình được cho sẵn cho thấy điều đó: nó ghi lại mọi lượt xuôi nó chạy (`model.forward_log`: bao nhiêu mẫu, và dấu vân tay của những mẫu nào), `accumulate_and_step` trả về nhật ký đó dưới khoá `"forward_log"`, và bộ chấm so nó với các micro-batch mà bộ chấm mong đợi.
#
# Hãy cài đặt `split_batch` và `accumulate_and_step`, rồi so sánh với gradient của batch lớn.

# %%
print(tr("GPT-2's effective batch: {batch}").format(batch=num(16 * 4 * 8)))
config = {**lab2_models.DEFAULT_CONFIG, "dtype": "float64"}
init = lab2_models.build_model(config).state_dict()
batches = [lab2_models.make_batch(config, n=12, seed=t) for t in range(3)]

def big_batch_gradient(state_dict, batch):
    model = lab2_models.build_model(config)
    model.load_state_dict(state_dict)
    lab2_models.loss_fn(model, batch).backward()
    return model.fc1.weight.grad

for b in (12, 4, 3, 5):  # k = 1, 3, 4, and 3 with a short last micro-batch (5, 5, 2)
    out = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches[:1], micro_batch_size=b, lr=0.5)
    err = (out["grads"][0]["fc1.weight"] - big_batch_gradient(init, batches[0])).abs().max().item()
    print(tr("micro-batch {b}: max |accumulated - big-batch| gradient of fc1.weight = {error}, "
             "examples per forward pass {examples}").format(
        b=num(b, "2d"), error=num(err, ".1e"), examples=nums([entry["examples"] for entry in out["forward_log"]])))

# %%
# Train 3 steps with accumulation (micro-batch 4, k = 3) and without it (micro-batch 12, k = 1): the parameters must agree.
acc = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=4, lr=0.5)
big = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=12, lr=0.5)
for name in acc["params"]:
    diff = (acc["params"][name] - big["params"][name]).abs().max().item()
    print(tr("{name} max |difference| after 3 steps: {diff}").format(name=f"{name:10s}", diff=num(diff, ".1e")))

# The symptom the grader looks for: |accumulated gradient| / |big-batch gradient| at every step.
# Correct code sits at 1.0 for every k; bug (A) would sit at k, bug (B) would leave step 1 and drift after it.
micro_sizes = (1, 2, 3, 4, 6)
width = 0.8 / len(micro_sizes)
fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
top = 0.0
for i, b in enumerate(micro_sizes):  # one bar per k at each step, side by side, so equal ratios stay visible
    run = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=b, lr=0.5)
    ratios = [(g["fc1.weight"].norm() / G["fc1.weight"].norm()).item() for g, G in zip(run["grads"], big["grads"])]
    ax.bar(np.arange(1, 4) + (i - (len(micro_sizes) - 1) / 2) * width, ratios, width, label=f"k = {12 // b}")
    top = max(top, *ratios)
ax.axhline(1.0, color="k", ls=":", lw=1)
ax.set_xticks([1, 2, 3])  # optimizer steps are whole numbers
ax.set_ylim(0, max(2.0, 1.15 * top))
ax.set_xlabel(tr("optimizer step")); ax.set_ylabel(tr("|accumulated| / |big-batch|"))
ax.legend(title=tr("micro-batches per step"), ncols=len(micro_sizes), fontsize=7, title_fontsize=7, loc="upper center")
show()

# %%
grader.check("accumulation")

# %%
grader.check("accumulation_uneven")

# %% [markdown] tags=["en"]
# ## How to check and submit
#
# * Run the public tests on your working copy: `autograder check lab2` (a per-question table with hints; a few seconds). In this notebook, the `grader.check("...")` cells run the same public tests one question at a time; `grader.check_all()` runs them all.
# * The public tests compare with stored snapshots on fixed inputs. **Hidden tests run at grading**: they replay your update rules against `torch.optim` over many steps, check your trajectories, state counts, noise slope and schedule on fresh seeded inputs, and check gradient accumulation for the k× and stale-gradient bugs, for a short last micro-batch, and (from the model's own forward log) that no forward saw more than a micro-batch.
# * Build the file to upload with `autograder submit lab2`; it holds only `optimizers.py` and `accumulation.py`.

# %% [markdown] tags=["vi"]
# ## Cách kiểm tra và nộp bài
#
# * Chạy các bài kiểm thử công khai trên bản làm việc của bạn: `autograder check lab2` (một bảng theo từng câu hỏi, kèm gợi ý; mất vài giây). Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai đó, mỗi lần một câu hỏi; `grader.check_all()` chạy tất cả.
# * Các bài kiểm thử công khai so sánh với kết quả mẫu đã lưu (snapshot) trên những đầu vào cố định. **Các bài kiểm thử ẩn chạy khi chấm điểm**: chúng cho các quy tắc cập nhật của bạn chạy lại song song với `torch.optim` qua nhiều bước, kiểm tra quỹ đạo, số liệu trạng thái, hệ số góc của nhiễu và lịch tốc độ học của bạn trên các đầu vào mới với seed cố định, và kiểm tra tích luỹ gradient để phát hiện lỗi gấp k lần, lỗi gradient cũ (stale gradient), trường hợp micro-batch cuối ngắn hơn, cũng như (từ nhật ký lượt xuôi của chính mô hình) việc không lượt xuôi nào thấy nhiều hơn một micro-batch.
# * Tạo tệp để nộp bằng `autograder submit lab2`; tệp này chỉ chứa `optimizers.py` và `accumulation.py`.
