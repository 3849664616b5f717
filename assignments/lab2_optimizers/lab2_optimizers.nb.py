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
# Bạn sửa `optimizers.py` và `accumulation.py`; docstring của chúng là bản hợp đồng (mọi quy ước mà trình chấm sử dụng đều được ghi ở đó). `lab2_models.py` được cho sẵn: một bộ phân loại rất nhỏ với seed cố định, cùng dữ liệu của nó. Toàn bộ sổ tay chạy trên CPU, dưới 1 phút và còn dư nhiều thời gian.

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
# Các thông báo do `grader.check` in ra sẽ bằng tiếng Việt khi biến môi trường `IRONLAW_LANG=vi` được đặt. Trong Jupyter,
# sổ tay này (`*.vi.ipynb`) tự chọn tiếng Việt; ở nơi khác (ví dụ Colab), hãy chạy `%env IRONLAW_LANG=vi` trước ô thiết lập.

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
# Hãy cài đặt `sgd_step`, `rmsprop_step` và `adam_step`. Ô bên dưới cho cùng 50 gradient chạy lại qua Adam của bạn và qua `torch.optim.Adam`; trình chấm làm điều tương tự cho mọi quy tắc, qua nhiều bước, với sai lệch khoảng 1e-6.

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

print("state keys:", sorted(state), " step:", state["step"])
print("max |yours - torch.optim| after 50 steps:", np.abs(theta - p.detach().numpy()).max())

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
# Một quỹ đạo là một chuỗi dài các bước tính dấu phẩy động, và có những thiết lập khuếch đại sai số làm tròn: RMSprop với tốc độ học lớn nảy qua lại giữa hai vách thung lũng Rosenbrock, và hai cách cài đặt đúng nhưng làm tròn khác nhau (gradient viết thành $400x^3 - 400xy + 2x - 2$ thay vì theo thứ tự của autograd) có thể đi rất xa nhau. Trình chấm đo độ nhạy với sai số làm tròn của từng trường hợp và chừa chỗ cho nó, nên bạn không cần khớp với torch đến từng bit.

# %%
runs = {
    "quadratic": ((-2.0, 1.0), 50, (0.0, 0.0), {"sgd": {"lr": 0.09}, "momentum": {"lr": 0.02}, "rmsprop": {"lr": 0.05}, "adam": {"lr": 0.1}}),
    "rosenbrock": ((-1.5, 2.0), 1000, (1.0, 1.0), {"sgd": {"lr": 1e-3}, "momentum": {"lr": 2e-4}, "rmsprop": {"lr": 3e-3}, "adam": {"lr": 0.02}}),
}
fig, axes = plt.subplots(2, 2, figsize=(12, 8))
for col, (surface, (start, steps, minimum, settings)) in enumerate(runs.items()):
    ax, ax_loss = axes[0, col], axes[1, col]
    X, Y = np.meshgrid(np.linspace(-2.2, 2.2, 200), np.linspace(-1.2, 2.5, 200))
    Z, _ = optimizers.loss_surface(surface=surface, xy=np.stack([X, Y], axis=-1))
    ax.contour(X, Y, np.log1p(Z), levels=25, cmap="Greys", linewidths=0.6)
    for name, hparams in settings.items():
        path = optimizers.trajectory(surface=surface, optimizer=name, start=start, steps=steps, hparams=hparams)
        loss, _ = optimizers.loss_surface(surface=surface, xy=path)  # (steps + 1,)
        ax.plot(path[:, 0], path[:, 1], ".-", ms=2, lw=1, alpha=0.8, label=f"{name} {hparams}")
        ax_loss.semilogy(loss, label=name)
    ax.plot(*start, "ko"); ax.plot(*minimum, "k*", ms=12)
    ax.set_title(f"{surface}: {steps} steps from {start}"); ax.legend(fontsize=7)
    ax_loss.set_xlabel("step"); ax_loss.set_ylabel("loss"); ax_loss.legend()
plt.tight_layout()
plt.show()

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
    print(f"{name:9s} rule: state {rule['state_bytes'] / 1e6:6.0f} MB for 100M FP32 params, {rule['multiple']}x"
          f"   | torch keeps {real['state_keys']}: {real['multiple']:.0f}x")
amsgrad = optimizers.optimizer_state_footprint(config=lab2_models.DEFAULT_CONFIG, optimizer="adam", hparams={"amsgrad": True})
print("adam with amsgrad keeps", amsgrad["state_keys"], f"-> {amsgrad['multiple']:.0f}x")

# %%
names = list(optimizers.OPTIMIZERS)
rule = [optimizers.optimizer_memory(num_params=100, optimizer=n, bytes_per_value=4)["multiple"] for n in names]
real = [optimizers.optimizer_state_footprint(config=lab2_models.DEFAULT_CONFIG, optimizer=n, hparams={})["multiple"]
        for n in names]
x = np.arange(len(names))
plt.figure(figsize=(5, 3))
plt.bar(x - 0.2, rule, 0.4, label="the rule")
plt.bar(x + 0.2, real, 0.4, label="what torch.optim keeps")
plt.xticks(x, names); plt.ylabel("memory / parameter memory"); plt.legend(); plt.show()

# %%
grader.check("optimizer_state")

# %% [markdown] tags=["en"]
# ## 4. Gradient noise (nhiễu gradient), section 3
#
# The mini-batch gradient is a mean of B per-example gradients, so its standard deviation falls as $\sigma/\sqrt{B}$: on a log-log plot, a line of slope −0.5. Implement `gradient_noise` exactly as its docstring describes (the grader replays it), then fit the slope.

# %% [markdown] tags=["vi"]
# ## 4. Nhiễu gradient, mục 3
#
# Gradient mini-batch là trung bình của B gradient theo từng mẫu, nên độ lệch chuẩn của nó giảm theo $\sigma/\sqrt{B}$: trên đồ thị log-log, đó là một đường thẳng có hệ số góc −0.5. Hãy cài đặt `gradient_noise` đúng như docstring của nó mô tả (trình chấm chạy lại đúng thí nghiệm đó), rồi khớp hệ số góc.

# %%
batch_sizes = [1, 2, 4, 8, 16, 32, 64, 128]
noise = optimizers.gradient_noise(config=optimizers.NOISE_CONFIG, batch_sizes=batch_sizes, trials=50, pool_size=512, seed=0)
B = np.array(batch_sizes)
plt.figure(figsize=(5, 4))
plt.loglog(B, noise["std"], "o", label="measured std of the mini-batch gradient")
plt.loglog(B, np.exp(noise["intercept"]) * B ** noise["slope"], "-", label=f"fit: slope {noise['slope']:.3f}")
plt.loglog(B, noise["std"][0] / np.sqrt(B), ":", label="1/sqrt(B)")
plt.xlabel("batch size B"); plt.ylabel("gradient noise (std)"); plt.legend(); plt.show()

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
# GPT-2 XL được huấn luyện bằng Adam, β = (0.9, 0.999), suy giảm trọng số (weight decay) 0.01 và cắt gradient ở chuẩn toàn cục (global norm) 1.0. Tốc độ học tăng tuyến tính (warmup) từ 0 lên 2.5e-4 trong 500 bước, rồi giảm theo đường cosin xuống một mức sàn (mặc định là 0; chương sách không nêu mức này) tại bước 50,000. Hãy cài đặt `lr_schedule` và `clip_grad_norm`.

# %%
print(optimizers.GPT2_XL)
steps = np.arange(0, 55_001, 50)
fig, axes = plt.subplots(1, 2, figsize=(12, 3.5))
for ax, last in zip(axes, (55_000, 1_000)):
    s = steps[steps <= last]
    ax.plot(s, optimizers.lr_schedule(steps=s), label="floor 0")
    ax.plot(s, optimizers.lr_schedule(steps=s, min_lr=2.5e-5), "--", label="floor 2.5e-5")
    ax.set_xlabel("step"); ax.set_ylabel("learning rate"); ax.legend()
axes[0].set_title("the whole run"); axes[1].set_title("the warmup")
plt.show()
print("key points:", optimizers.lr_schedule(steps=[0, 250, 500, 25_250, 50_000, 60_000]))
clipped = optimizers.clip_grad_norm(grads=[np.array([3.0, 4.0])], max_norm=1.0)
print("clip [3, 4] to norm 1:", clipped["grads"][0], " norm before:", clipped["total_norm"])

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
# Và mục đích của tất cả: mô hình không bao giờ được thấy cả batch lớn cùng một lúc, nếu không thì chẳng tiết kiệm được chút bộ nhớ nào. Đưa cả B mẫu qua một lượt xuôi cho đúng gradient của batch lớn, nên các con số không thể cho thấy lỗi này. Mô hình được cho sẵn cho thấy điều đó: nó ghi lại mọi lượt xuôi nó chạy (`model.forward_log`: bao nhiêu mẫu, và dấu vân tay của những mẫu nào), `accumulate_and_step` trả về nhật ký đó dưới khoá `"forward_log"`, và trình chấm so nó với các micro-batch mà trình chấm mong đợi.
#
# Hãy cài đặt `split_batch` và `accumulate_and_step`, rồi so sánh với gradient của batch lớn.

# %%
print("GPT-2 effective batch:", 16 * 4 * 8)
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
    print(f"micro-batch {b:2d}: max |accumulated - big-batch| gradient of fc1.weight = {err:.1e}, "
          f"examples per forward {[entry['examples'] for entry in out['forward_log']]}")

# %%
# Train 3 steps with accumulation (micro-batch 4, k = 3) and without it (micro-batch 12, k = 1): the parameters must agree.
acc = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=4, lr=0.5)
big = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=12, lr=0.5)
for name in acc["params"]:
    print(f"{name:10s} max |difference| after 3 steps: {(acc['params'][name] - big['params'][name]).abs().max().item():.1e}")

# The symptom the grader looks for: |accumulated gradient| / |big-batch gradient| at every step.
# Correct code sits at 1.0 for every k; bug (A) would sit at k, bug (B) would leave step 1 and drift after it.
plt.figure(figsize=(5, 3))
for b in (1, 2, 3, 4, 6):
    run = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=b, lr=0.5)
    ratios = [(g["fc1.weight"].norm() / G["fc1.weight"].norm()).item() for g, G in zip(run["grads"], big["grads"])]
    plt.plot([1, 2, 3], ratios, "o-", label=f"k = {12 // b}")
plt.ylim(0, 2); plt.xlabel("optimizer step"); plt.ylabel("|accumulated| / |big-batch|"); plt.legend(fontsize=7); plt.show()

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
