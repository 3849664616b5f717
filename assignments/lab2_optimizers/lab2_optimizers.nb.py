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
# *Machine Learning Systems*, Vol. I, Ch. 8 "Model Training" (huấn luyện mô hình): §3.2 Optimization algorithms, §4.4.2 Batch size and parameter updates, §6.5 Gradient accumulation and checkpointing and §8 Fallacies and Pitfalls.
#
# In this lab you write the pieces of a training step that sit *after* the backward pass:
#
# 1. the **update rules** of SGD, momentum (động lượng), RMSprop and Adam, in NumPy, with the optimizer state (trạng thái) passed in and out explicitly;
# 2. their **trajectories** (quỹ đạo) on a 2-D loss surface (mặt mất mát);
# 3. the **memory of optimizer state**: how many times the parameter memory each optimizer takes, by the chapter's rule and on real `torch.optim` optimizers;
# 4. **AdamW**: decoupled weight decay, against `torch.optim.AdamW`, and why it is not Adam with L2;
# 5. **gradient noise** (nhiễu gradient): how the mini-batch gradient's noise falls as the batch grows;
# 6. **GPT-2 XL's learning-rate schedule** (lịch tốc độ học) and gradient clipping;
# 7. **the linear scaling rule** and warmup: the learning rate for a larger batch, and where the rule stops;
# 8. **gradient accumulation** (tích luỹ gradient): why each micro-batch's loss is divided by k; the chapter's two bugs, a missing 1/k and stale gradients from a `zero_grad()` missing between steps; and `zero_grad()` misplaced the other way, inside the micro-batch loop. You then write the missing 1/k and the `zero_grad()` inside the loop on purpose.
#
# Before four of the measurements you write down a prediction (kept in `predictions.json`, never graded for being right), and after each one a line of reflection.
#
# You edit `optimizers.py` and `accumulation.py`; their docstrings are the contract (every convention the grader uses is written there). `lab2_models.py` is given: a tiny seeded classifier and its data. The whole notebook runs on a CPU in well under a minute.
#
# Where the lab goes beyond the chapter (a rule's exact form, an experiment, a convention), the text says so and names its source, or lets you measure it.

# %% [markdown] tags=["vi"]
# # Lab 2: bộ tối ưu và batch (sổ tay thực hành)
#
# *Machine Learning Systems*, Tập I, Chương 8 "Model Training" (huấn luyện mô hình): §3.2 Thuật toán tối ưu (Optimization algorithms), §4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates), §6.5 Tích luỹ gradient và lưu điểm (Gradient accumulation and checkpointing) và §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls).
#
# Trong bài lab này, bạn viết các thành phần của một bước huấn luyện nằm *sau* lượt ngược:
#
# 1. **các quy tắc cập nhật** của SGD, động lượng (momentum), RMSprop và Adam, bằng NumPy, với trạng thái của bộ tối ưu được truyền vào và trả ra một cách tường minh;
# 2. **quỹ đạo** của chúng trên một mặt mất mát 2 chiều;
# 3. **bộ nhớ dành cho trạng thái bộ tối ưu**: mỗi bộ tối ưu chiếm bao nhiêu lần bộ nhớ của tham số, theo quy tắc của chương sách và trên các bộ tối ưu `torch.optim` thật;
# 4. **AdamW**: suy giảm trọng số tách rời (decoupled weight decay), so với `torch.optim.AdamW`, và vì sao nó không phải Adam với L2;
# 5. **nhiễu gradient**: nhiễu của gradient mini-batch giảm thế nào khi batch lớn lên;
# 6. **lịch tốc độ học của GPT-2 XL** và cắt gradient (gradient clipping);
# 7. **quy tắc tỉ lệ tuyến tính** (linear scaling rule) và khởi động (warmup): tốc độ học cho batch lớn hơn, và nơi quy tắc dừng đúng;
# 8. **tích luỹ gradient**: vì sao mất mát của mỗi micro-batch được chia cho k; hai lỗi mà chương sách cảnh báo, thiếu 1/k và gradient cũ do thiếu `zero_grad()` giữa hai bước; và `zero_grad()` đặt sai theo chiều ngược lại, bên trong vòng lặp micro-batch. Sau đó bạn cố ý tự viết lỗi thiếu 1/k và lỗi `zero_grad()` trong vòng lặp.
#
# Trước bốn phép đo, bạn ghi lại một dự đoán (giữ trong `predictions.json`, không bao giờ được chấm theo đúng hay sai), và sau mỗi phép đo là một dòng suy ngẫm.
#
# Bạn sửa `optimizers.py` và `accumulation.py`; docstring của chúng là bản hợp đồng (mọi quy ước mà bộ chấm sử dụng đều được ghi ở đó). `lab2_models.py` được cho sẵn: một bộ phân loại rất nhỏ với seed cố định, cùng dữ liệu của nó. Toàn bộ sổ tay chạy trên CPU, dưới 1 phút và còn dư nhiều thời gian.
#
# Chỗ nào bài lab đi xa hơn chương sách (dạng chính xác của một quy tắc, một thí nghiệm, một quy ước), văn bản nói rõ điều đó và nêu nguồn, hoặc để bạn tự đo.

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

torch.set_num_threads(1)  # tr: the models here are tiny: one thread is faster than two

import lab2_models
import optimizers
import accumulation
from autograder.grading.notebook_text import num, nums, show, tr  # tr: what the cells print and plot, in the notebook's language

# tr: How the plots name and draw each optimizer
LABEL = {"sgd": "SGD", "momentum": tr("momentum"), "rmsprop": "RMSprop", "adam": "Adam"}
STYLE = {"sgd": dict(color="tab:blue", ls="-", marker="o"), "momentum": dict(color="tab:orange", ls="--", marker="s"),
         "rmsprop": dict(color="tab:green", ls="-.", marker="^"), "adam": dict(color="tab:red", ls=":", marker="D")}

# %% [markdown] tags=["en"]
# ## 1. Update rules (bộ tối ưu): §3.2.2 Adaptive and momentum-based optimizers
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
# Adam's equations are the chapter's (§3.2.2.3 Adam optimization); the details the grader checks beyond them (the momentum buffer starting at the first gradient, weight decay added to the gradient) are PyTorch's defaults, and the docstrings state them.
#
# Implement `sgd_step`, `rmsprop_step` and `adam_step`. The cell below replays the same 50 gradients through your Adam and through `torch.optim.Adam`; the grader does the same for every rule, over many steps, to about 1e-6.

# %% [markdown] tags=["vi"]
# ## 1. Các quy tắc cập nhật (bộ tối ưu): §3.2.2 Bộ tối ưu thích nghi và dựa trên động lượng (Adaptive and momentum-based optimizers)
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
# Các phương trình của Adam là của chương sách (§3.2.2.3 Tối ưu bằng Adam (Adam optimization)); những chi tiết mà bộ chấm kiểm tra ngoài chúng (bộ đệm động lượng khởi đầu bằng gradient đầu tiên, suy giảm trọng số cộng vào gradient) là mặc định của PyTorch, và docstring nêu rõ.
#
# Hãy cài đặt `sgd_step`, `rmsprop_step` và `adam_step`. Ô bên dưới cho cùng 50 gradient chạy lại qua Adam của bạn và qua `torch.optim.Adam`; bộ chấm làm điều tương tự cho mọi quy tắc, qua nhiều bước, với sai lệch khoảng 1e-6.

# %%
with skip_if_unwritten():
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
# ## 2. Trajectories on a loss surface (quỹ đạo trên mặt mất mát): §3.2.2 Adaptive and momentum-based optimizers
#
# The chapter motivates momentum and adaptive rates with ill-conditioned landscapes, "where some dimensions are steep (requiring small steps) while others are shallow". Two named surfaces, the lab's choice, make that concrete (the formulas are in `loss_surface`'s docstring):
#
# * `"quadratic"`: $f = \tfrac12 x^2 + 10 y^2$, curvatures 1 and 20: an ill-conditioned bowl. The step size is limited by the steep direction: one SGD step multiplies $y$ by $1 - 20\eta$, which shrinks it only while $|1 - 20\eta| < 1$, i.e. $\eta < 2/20$; along the flat direction the same step multiplies $x$ by $1 - \eta > 0.9$, so progress there is slow.
# * `"rosenbrock"`: $f = (1-x)^2 + 100(y-x^2)^2$, a narrow curved valley with its minimum at (1, 1).
#
# Implement `loss_surface` and `trajectory`, then compare the four optimizers.
#
# A trajectory is a long chain of floating-point steps, and some settings amplify rounding: RMSprop at a large learning rate bounces across Rosenbrock's valley, and two correct implementations that round differently (the gradient written as $400x^3 - 400xy + 2x - 2$ instead of autograd's order) can end up far apart. The grader measures each case's own sensitivity to rounding and allows for it, so you need not match torch bit for bit.

# %% [markdown] tags=["vi"]
# ## 2. Quỹ đạo trên mặt mất mát: §3.2.2 Bộ tối ưu thích nghi và dựa trên động lượng (Adaptive and momentum-based optimizers)
#
# Chương sách dẫn vào động lượng và tốc độ học thích nghi bằng các địa hình có điều kiện xấu, "nơi một số chiều dốc (cần bước nhỏ) còn các chiều khác thoải". Hai mặt được đặt tên, do bài lab chọn, cho thấy điều đó cụ thể (chọn theo tên; công thức nằm trong docstring của `loss_surface`):
#
# * `"quadratic"`: $f = \tfrac12 x^2 + 10 y^2$, độ cong 1 và 20: một cái bát có điều kiện xấu (ill-conditioned). Kích thước bước bị giới hạn bởi hướng dốc: một bước SGD nhân $y$ với $1 - 20\eta$, chỉ làm nó nhỏ đi khi $|1 - 20\eta| < 1$, tức $\eta < 2/20$; theo hướng thoải, cùng bước đó nhân $x$ với $1 - \eta > 0,9$, nên việc tiến theo hướng này diễn ra chậm.
# * `"rosenbrock"`: $f = (1-x)^2 + 100(y-x^2)^2$, một thung lũng hẹp và cong, có cực tiểu tại (1, 1).
#
# Hãy cài đặt `loss_surface` và `trajectory`, rồi so sánh bốn bộ tối ưu.
#
# Một quỹ đạo là một chuỗi dài các bước tính dấu phẩy động, và có những thiết lập khuếch đại sai số làm tròn: RMSprop với tốc độ học lớn nảy qua lại giữa hai vách thung lũng Rosenbrock, và hai cách cài đặt đúng nhưng làm tròn khác nhau (gradient viết thành $400x^3 - 400xy + 2x - 2$ thay vì theo thứ tự của autograd) có thể đi rất xa nhau. Bộ chấm đo độ nhạy với sai số làm tròn của từng trường hợp và chừa chỗ cho nó, nên bạn không cần khớp với torch đến từng bit.

# %%
with skip_if_unwritten():
    runs = {
        "quadratic": ((-2.0, 1.0), 50, (0.0, 0.0), {"sgd": {"lr": 0.09}, "momentum": {"lr": 0.02}, "rmsprop": {"lr": 0.05}, "adam": {"lr": 0.1}}),
        "rosenbrock": ((-1.5, 2.0), 1000, (1.0, 1.0), {"sgd": {"lr": 1e-3}, "momentum": {"lr": 2e-4}, "rmsprop": {"lr": 3e-3}, "adam": {"lr": 0.02}}),
    }
    paths = {surface: {name: optimizers.trajectory(surface=surface, optimizer=name, start=start, steps=steps, hparams=hp)
                       for name, hp in settings.items()}
             for surface, (start, steps, minimum, settings) in runs.items()}
    box = {"quadratic": ((-2.2, 2.2), (-1.2, 1.2)), "rosenbrock": ((-2.0, 2.0), (-0.6, 2.6))}  # tr: (x range, y range)
    title = {"quadratic": tr("quadratic"), "rosenbrock": "Rosenbrock"}

    def contours(ax, surface):
        (x0, x1), (y0, y1) = box[surface]
        X, Y = np.meshgrid(np.linspace(x0, x1, 200), np.linspace(y0, y1, 200))
        Z, _ = optimizers.loss_surface(surface=surface, xy=np.stack([X, Y], axis=-1))
        ax.contour(X, Y, np.log1p(Z), levels=25, cmap="Greys", linewidths=0.6)
        start, minimum = runs[surface][0], runs[surface][2]
        ax.plot(*start, "ko"); ax.plot(*minimum, "k*", ms=12)  # tr: where it starts, the minimum
        ax.set_xlim(x0, x1); ax.set_ylim(y0, y1)

    # tr: Top: the quadratic's four paths, then both surfaces' loss curves.
    # tr: Bottom: Rosenbrock's paths share one valley, so each optimizer gets its own panel (the others in grey).
    fig = plt.figure(figsize=(14, 8), layout="constrained")
    axd = fig.subplot_mosaic([["quadratic"] * 4 + ["loss quadratic"] * 4 + ["loss rosenbrock"] * 4,
                              [name for name in optimizers.OPTIMIZERS for _ in range(3)]])
    for surface, (start, steps, minimum, settings) in runs.items():
        ax_loss = axd[f"loss {surface}"]
        for name, path in paths[surface].items():
            loss, _ = optimizers.loss_surface(surface=surface, xy=path)  # tr: (steps + 1,)
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
        ax.plot(path[:, 0], path[:, 1], **{**STYLE[name], "ls": "-"}, lw=1.5, ms=4, markevery=100)  # tr: a marker every 100 steps
        ax.plot(*path[-1], marker=STYLE[name]["marker"], color=STYLE[name]["color"], ms=10, mec="k")  # tr: where it ends
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
# ### Predict first: Adam's memory against SGD's
#
# Training keeps the parameters and the optimizer's state. **Parameters plus state: Adam takes how many times the memory of plain SGD (no momentum)?** A multiple (x), from 0.5 to 10. Write it in place of `None` and run the cell. Your first answer is kept with its time in `predictions.json`; once the measurement has run, a change is recorded as a change and the prediction stays. Nothing here is graded for being right.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước: bộ nhớ của Adam so với SGD
#
# Huấn luyện giữ các tham số và trạng thái của bộ tối ưu. **Tham số cộng trạng thái: Adam chiếm bộ nhớ gấp bao nhiêu lần SGD thuần (không động lượng)?** Một bội số (x), từ 0,5 đến 10. Viết nó thay cho `None` rồi chạy ô. Câu trả lời đầu tiên của bạn được giữ lại cùng thời điểm trong `predictions.json`; khi phép đo đã chạy, mỗi lần sửa được ghi lại là một lần sửa và dự đoán vẫn giữ nguyên. Không có gì ở đây được chấm theo đúng hay sai.

# %%
guess = None  # tr: your prediction, a multiple (x) from 0.5 to 10, in place of None
predict("adam_vs_sgd_memory", guess)

# %% [markdown] tags=["en"]
# ## 3. Optimizer state (trạng thái) and its memory: §3.2.3 Optimization algorithm system implications
#
# Per parameter, SGD keeps nothing extra, momentum one buffer, RMSprop one square average, Adam two moments. Counting parameters plus state: **1×, 2×, 2×, 3×** the parameter memory (the chapter's table; gradients and activations are not counted). For 100M parameters in FP32, Adam's state alone is 800 MB (§3.2.2.3 Adam optimization). The work per parameter per step grows the same way: 2, 3, 4 and 5 operations, by the same table.
#
# Implement `optimizer_memory` (the rule) and `optimizer_state_footprint`, which builds a real `torch.optim` optimizer, takes one step, and counts what it actually keeps.

# %% [markdown] tags=["vi"]
# ## 3. Trạng thái bộ tối ưu và bộ nhớ của nó: §3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications)
#
# Với mỗi tham số, SGD không giữ thêm gì, động lượng giữ một bộ đệm, RMSprop một trung bình bình phương, Adam hai moment. Tính cả tham số lẫn trạng thái: **1×, 2×, 2×, 3×** bộ nhớ của tham số (bảng của chương; không tính gradient và giá trị kích hoạt). Với 100M tham số ở FP32, riêng trạng thái của Adam đã chiếm 800 MB (§3.2.2.3 Tối ưu bằng Adam (Adam optimization)). Khối lượng tính toán cho mỗi tham số ở mỗi bước cũng tăng theo cách tương tự: 2, 3, 4 và 5 phép toán, theo cùng bảng đó.
#
# Hãy cài đặt `optimizer_memory` (quy tắc) và `optimizer_state_footprint`; hàm sau tạo một bộ tối ưu `torch.optim` thật, thực hiện một bước, rồi đếm những gì nó thực sự lưu giữ.

# %%
with skip_if_unwritten():
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
adam = attempt(optimizers.optimizer_memory, num_params=100_000_000, optimizer="adam", bytes_per_value=4)
sgd = attempt(optimizers.optimizer_memory, num_params=100_000_000, optimizer="sgd", bytes_per_value=4)
reveal("adam_vs_sgd_memory", adam["multiple"] / sgd["multiple"] if adam and sgd else None)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your guess above or below the rule's multiple, and what does Adam keep per parameter that plain SGD does not?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn cao hơn hay thấp hơn bội số của quy tắc, và Adam giữ gì cho mỗi tham số mà SGD thuần không giữ?

# %% [markdown] tags=["en", "answer:reflections/adam_vs_sgd_memory"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/adam_vs_sgd_memory"]
# *Một dòng ở đây.*

# %%
with skip_if_unwritten():
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
# ## 4. AdamW: decoupled weight decay (suy giảm trọng số tách rời): §3.2.3 Optimization algorithm system implications
#
# The chapter names AdamW as the variant that decouples "weight decay from the gradient update, improving generalization without increasing memory cost", and its footnote says why: in Adam, weight decay written as L2 regularization adds $\lambda\theta$ to the gradient, so it goes through the moments and is divided by $\sqrt{\hat v}$ like the rest of the gradient, and parameters with large historical gradients (large $v_t$) are barely regularized. The chapter gives no formula. The rule is Loshchilov and Hutter, *Decoupled Weight Decay Regularization* (ICLR 2019), beyond the chapter; `torch.optim.AdamW` writes it as
#
# $$\theta \leftarrow \theta\,(1 - \eta\lambda), \quad\text{then one Adam step on } g \text{ alone.}$$
#
# | | where the decay goes | divided by $\sqrt{\hat v}$? | state per parameter |
# |---|---|---|---|
# | Adam with L2, `adam_step(weight_decay=λ)` | $g \leftarrow g + \lambda\theta$ | yes | $m, v$ |
# | AdamW, `adamw_step(weight_decay=λ)` | $\theta \leftarrow \theta(1 - \eta\lambda)$ | no | $m, v$ |
#
# Two conventions are PyTorch's, and the docstring fixes them: the decay is multiplied by the learning rate η (the paper's Algorithm 2 multiplies its λ by the schedule multiplier only, so the paper's λ is ηλ here), and it uses the parameters from before this step. The state is Adam's, two arrays per parameter: AdamW still costs 3× the parameter memory, the "memory-neutral upgrade" the chapter describes.
#
# The chapter's GPT-2 XL configuration (part 6 below) says "Adam" with "weight decay 0.01" and does not say which of the two it means.
#
# Implement `adamw_step` (it is a decay and an `adam_step`). The first cell checks it against `torch.optim.AdamW`; the second shows the difference from L2 on three parameters that start at 1, with gradients that alternate in sign at sizes 0.01, 1 and 100: on average the loss pulls them nowhere, so only the decay moves them.

# %% [markdown] tags=["vi"]
# ## 4. AdamW: suy giảm trọng số tách rời (decoupled weight decay): §3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications)
#
# Chương sách nêu AdamW là biến thể tách "suy giảm trọng số khỏi bước cập nhật gradient, cải thiện khả năng tổng quát hoá mà không tăng bộ nhớ", và chú thích của nó giải thích vì sao: trong Adam, suy giảm trọng số viết dưới dạng điều chuẩn L2 cộng $\lambda\theta$ vào gradient, nên nó đi qua các moment và bị chia cho $\sqrt{\hat v}$ như phần còn lại của gradient, và các tham số có gradient lịch sử lớn ($v_t$ lớn) hầu như không được điều chuẩn. Chương sách không đưa công thức. Quy tắc là của Loshchilov và Hutter, *Decoupled Weight Decay Regularization* (ICLR 2019), ngoài phạm vi chương; `torch.optim.AdamW` viết nó thành
#
# $$\theta \leftarrow \theta\,(1 - \eta\lambda), \quad\text{rồi một bước Adam chỉ với } g.$$
#
# | | suy giảm đi vào đâu | bị chia cho $\sqrt{\hat v}$? | trạng thái mỗi tham số |
# |---|---|---|---|
# | Adam với L2, `adam_step(weight_decay=λ)` | $g \leftarrow g + \lambda\theta$ | có | $m, v$ |
# | AdamW, `adamw_step(weight_decay=λ)` | $\theta \leftarrow \theta(1 - \eta\lambda)$ | không | $m, v$ |
#
# Hai quy ước là của PyTorch, và docstring cố định chúng: suy giảm được nhân với tốc độ học η (Thuật toán 2 của bài báo chỉ nhân λ của nó với hệ số lịch, nên λ của bài báo ở đây là ηλ), và nó dùng tham số *trước* bước này. Trạng thái giống Adam, hai mảng cho mỗi tham số: AdamW vẫn tốn 3× bộ nhớ tham số, đúng là "nâng cấp không tốn thêm bộ nhớ" mà chương sách mô tả.
#
# Cấu hình GPT-2 XL của chương (phần 6 của sổ tay này) ghi "Adam" với "weight decay 0,01" và không nói là cách nào trong hai cách trên.
#
# Hãy cài đặt `adamw_step` (nó là một lần suy giảm và một `adam_step`). Ô đầu tiên so nó với `torch.optim.AdamW`; ô thứ hai cho thấy khác biệt với L2 trên ba tham số bắt đầu từ 1, với gradient đổi dấu luân phiên ở các độ lớn 0,01, 1 và 100: tính trung bình, mất mát không kéo chúng đi đâu cả, nên chỉ có suy giảm làm chúng thay đổi.

# %%
with skip_if_unwritten():
    theta, state = theta0, {}
    for g in grads:  # tr: the same 50 gradients as in part 1
        theta, state = optimizers.adamw_step(params=theta, grads=g, state=state, lr=1e-2, weight_decay=0.1)

    p = torch.tensor(theta0, requires_grad=True)
    opt = torch.optim.AdamW([p], lr=1e-2, weight_decay=0.1)
    for g in grads:
        p.grad = torch.tensor(g)
        opt.step()

    print(tr("max |yours - torch.optim.AdamW| after 50 steps: {error}").format(
        error=num(np.abs(theta - p.detach().numpy()).max(), ".1e")))
    arrays = [key for key, value in state.items() if np.shape(value) == theta0.shape]
    print(tr("AdamW's state keeps {keys}: {n} arrays of the parameters' shape, so parameters plus state are {multiple}x").format(
        keys=sorted(state), n=num(len(arrays)), multiple=num(1 + len(arrays))))

# %%
with skip_if_unwritten():
    # tr: Three parameters, all starting at 1; gradient sizes 0.01, 1 and 100, alternating in sign: no net pull from the loss.
    sizes, lr, decay, n = np.array([0.01, 1.0, 100.0]), 1e-2, 0.1, 300
    runs = {}
    for name, step_fn in (("AdamW", optimizers.adamw_step), (tr("Adam with L2"), optimizers.adam_step)):
        theta, state, path = np.ones(3), {}, [np.ones(3)]
        for t in range(n):
            theta, state = step_fn(params=theta, grads=sizes * (-1.0) ** t, state=state, lr=lr, weight_decay=decay)
            path.append(theta)
        runs[name] = np.array(path)  # tr: (n + 1, 3)

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True, layout="constrained")
    for ax, (name, path) in zip(axes, runs.items()):
        for i, (size, ls) in enumerate(zip(sizes, ("-", "--", ":"))):
            ax.plot(path[:, i], ls, label=tr("gradient size {size}").format(size=num(size, "g")))
        ax.plot((1 - lr * decay) ** np.arange(n + 1), color="0.6", lw=5, alpha=0.5, zorder=0, label="(1 − ηλ)^t")
        ax.set_title(name); ax.set_xlabel(tr("step")); ax.legend(fontsize=8)
    axes[0].set_ylabel(tr("parameter value")); show()
    for name, path in runs.items():
        print(tr("{method}: after {n} steps the parameters are {values}").format(
            method=f"{name:>13}", n=num(n), values=nums(path[-1], ".3f")))
    print(tr("decay alone, (1 - lr * weight_decay)^{n} = {value}").format(n=num(n), value=num((1 - lr * decay) ** n, ".3f")))

# %% [markdown] tags=["en"]
# With AdamW the three parameters shrink together, whatever their gradients, just below $(1-\eta\lambda)^t$: the small gap is Adam's own first steps on the alternating gradient, the same for all three because Adam's step $\hat m/\sqrt{\hat v}$ does not depend on the gradient's size. With L2 the decay term is divided by each parameter's own $\sqrt{\hat v}$: the parameter with small gradients is pushed to 0 within about two hundred steps, while the one with gradients of size 100 hardly moves. That is the footnote's "weakened regularization for parameters with large historical gradients", measured.

# %% [markdown] tags=["vi"]
# Với AdamW, ba tham số co lại cùng nhau, bất kể gradient của chúng, ngay dưới đường $(1-\eta\lambda)^t$: khoảng cách nhỏ là do vài bước Adam đầu tiên trên gradient đổi dấu, như nhau cho cả ba vì bước Adam $\hat m/\sqrt{\hat v}$ không phụ thuộc vào độ lớn của gradient. Với L2, số hạng suy giảm bị chia cho $\sqrt{\hat v}$ của riêng từng tham số: tham số có gradient nhỏ bị đẩy về 0 trong khoảng hai trăm bước, còn tham số có gradient cỡ 100 gần như không đổi. Đó chính là điều chú thích của chương gọi là "điều chuẩn bị yếu đi ở các tham số có gradient lịch sử lớn", được đo ra.

# %%
grader.check("adamw")

# %% [markdown] tags=["en"]
# ### Predict first: the noise at 4x the batch
#
# **At 4 times the batch (128 examples instead of 32), the mini-batch gradient's noise (its standard deviation) is what multiple of today's?** A multiple (x), from 0.01 to 4. Write it in place of `None` and run the cell. Your first answer is kept with its time in `predictions.json`; once the measurement has run, a change is recorded as a change and the prediction stays. Nothing here is graded for being right.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước: nhiễu khi batch lớn gấp 4
#
# **Khi batch lớn gấp 4 lần (128 mẫu thay vì 32), nhiễu của gradient mini-batch (độ lệch chuẩn của nó) bằng bao nhiêu lần hiện nay?** Một bội số (x), từ 0,01 đến 4. Viết nó thay cho `None` rồi chạy ô. Câu trả lời đầu tiên của bạn được giữ lại cùng thời điểm trong `predictions.json`; khi phép đo đã chạy, mỗi lần sửa được ghi lại là một lần sửa và dự đoán vẫn giữ nguyên. Không có gì ở đây được chấm theo đúng hay sai.

# %%
guess = None  # tr: your prediction, a multiple (x) from 0.01 to 4, in place of None
predict("noise_4x", guess)

# %% [markdown] tags=["en"]
# ## 5. Gradient noise (nhiễu gradient): §3.2.1.2 Mini-batch processing
#
# The mini-batch gradient is a mean of B per-example gradients, so its standard deviation falls as $\sigma/\sqrt{B}$: on a log-log plot, a line of slope −0.5. The chapter states the 1/√B; it has no experiment for it, so the one here is the lab's (a fixed model, batches drawn with replacement from a pool). Implement `gradient_noise` exactly as its docstring describes (the grader replays it), then fit the slope.

# %% [markdown] tags=["vi"]
# ## 5. Nhiễu gradient: §3.2.1.2 Xử lý mini-batch (Mini-batch processing)
#
# Gradient mini-batch là trung bình của B gradient theo từng mẫu, nên độ lệch chuẩn của nó giảm theo $\sigma/\sqrt{B}$: trên đồ thị log-log, đó là một đường thẳng có hệ số góc −0,5. Chương sách nêu quy luật 1/√B nhưng không có thí nghiệm cho nó, nên thí nghiệm ở đây là của bài lab (một mô hình cố định, các batch rút có hoàn lại từ một tập mẫu). Hãy cài đặt `gradient_noise` đúng như docstring của nó mô tả (bộ chấm chạy lại đúng thí nghiệm đó), rồi khớp hệ số góc.

# %%
with skip_if_unwritten():
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

# %%
# tr: the noise at B = 128 divided by the noise at B = 32 (4 times the batch)
noise = attempt(optimizers.gradient_noise, config=optimizers.NOISE_CONFIG, batch_sizes=[32, 128], trials=50,
                pool_size=512, seed=0)
reveal("noise_4x", noise["std"][1] / noise["std"][0] if noise is not None else None)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was the measured multiple near your guess, and what does it say about how much larger a batch must be to halve the noise again?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): bội số đo được có gần dự đoán của bạn không, và nó nói gì về việc batch phải lớn thêm bao nhiêu để nhiễu lại giảm một nửa?

# %% [markdown] tags=["en", "answer:reflections/noise_4x"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/noise_4x"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# Quadrupling the batch only halves the noise. The chapter draws the consequence in §3.2.1.2 Mini-batch processing: beyond the critical batch size, "the noise reduction from larger batches no longer compensates for the reduced number of updates per epoch". Part 7 turns that into a learning rate.

# %% [markdown] tags=["vi"]
# Tăng batch lên gấp bốn chỉ làm nhiễu giảm một nửa. Chương sách rút ra hệ quả trong §3.2.1.2 Xử lý mini-batch (Mini-batch processing): vượt quá kích thước batch tới hạn (critical batch size), "mức giảm nhiễu nhờ batch lớn hơn không còn bù được số lần cập nhật ít đi trong mỗi epoch". Phần 7 biến điều đó thành một tốc độ học.

# %%
grader.check("gradient_noise")

# %% [markdown] tags=["en"]
# ## 6. GPT-2 XL's learning-rate schedule (lịch tốc độ học): §3.2.3 Optimization algorithm system implications, §3.2.5 Learning rate scheduling integration
#
# The chapter's GPT-2 XL configuration ("a representative GPT-2 XL training configuration", the callout in §3.2.3 Optimization algorithm system implications) uses Adam, β = (0.9, 0.999), weight decay 0.01 and gradient clipping at global norm 1.0. The learning rate warms up linearly from 0 to 2.5e-4 over 500 steps, then follows a cosine decay. The chapter states neither where the cosine ends nor its floor: the lab ends it at step 50,000, from the same callout's "converges in ~50K steps", and makes the floor a parameter (0 by default). A schedule is a state-free hook on η (§3.2.5 Learning rate scheduling integration): it changes the rate, never the optimizer's equations. Implement `lr_schedule` and `clip_grad_norm`.

# %% [markdown] tags=["vi"]
# ## 6. Lịch tốc độ học của GPT-2 XL: §3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications), §3.2.5 Tích hợp lịch tốc độ học (Learning rate scheduling integration)
#
# Cấu hình GPT-2 XL của chương ("một cấu hình huấn luyện GPT-2 XL tiêu biểu", khung trong §3.2.3 Hệ quả hệ thống của thuật toán tối ưu (Optimization algorithm system implications)) dùng Adam, β = (0,9; 0,999), suy giảm trọng số (weight decay) 0,01 và cắt gradient ở chuẩn toàn cục (global norm) 1,0. Tốc độ học khởi động (warmup): tăng tuyến tính từ 0 lên 2,5e-4 trong 500 bước, rồi giảm theo đường cosin. Chương sách không nêu đường cosin kết thúc ở đâu, cũng không nêu mức sàn: bài lab cho nó kết thúc tại bước 50.000, lấy từ câu "hội tụ sau ~50K bước" trong cùng khung đó, và để mức sàn là một tham số (mặc định 0). Lịch tốc độ học là một móc (hook) không trạng thái tác động lên η (§3.2.5 Tích hợp lịch tốc độ học (Learning rate scheduling integration)): nó đổi tốc độ học, không bao giờ đổi các phương trình của bộ tối ưu. Hãy cài đặt `lr_schedule` và `clip_grad_norm`.

# %%
with skip_if_unwritten():
    for key, value in optimizers.GPT2_XL.items():  # tr: the chapter's setup
        print(f"{key:>14} = {nums(value, ',g', brackets='()') if isinstance(value, tuple) else num(value, ',g')}")
    steps = np.arange(0, 55_001, 50)
    lrs = {tr("floor {lr}").format(lr=num(0)): np.asarray(optimizers.lr_schedule(steps=steps)),
           tr("floor {lr}").format(lr=num(2.5e-5, "g")): np.asarray(optimizers.lr_schedule(steps=steps, min_lr=2.5e-5))}
    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), layout="constrained")
    for ax, last, where in zip(axes, (55_000, 1_000), ("upper right", "lower right")):
        keep = steps <= last
        for (label, lr), ls in zip(lrs.items(), ("-", "--")):
            ax.plot(steps[keep], lr[keep], ls, label=label)
        ax.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))  # tr: 2.5 × 1e-4, not 0.00025
        ax.set_xlabel(tr("step")); ax.set_ylabel(tr("learning rate")); ax.legend(loc=where)
    axes[0].set_title(tr("the whole run")); axes[1].set_title(tr("the warmup: the first 1,000 steps")); show()
    key_steps = [0, 250, 500, 25_250, 50_000, 60_000]
    print(tr("learning rate at steps {steps}: {lrs}").format(
        steps=nums(key_steps), lrs=nums(optimizers.lr_schedule(steps=key_steps), "g")))
    clipped = optimizers.clip_grad_norm(grads=[np.array([3.0, 4.0])], max_norm=1.0)
    print(tr("clip {grads} to norm 1: {clipped}, norm before: {norm}").format(
        grads=nums([3, 4]), clipped=nums(clipped["grads"][0], "g"), norm=num(clipped["total_norm"], "g")))

# %%
grader.check("schedule")

# %% [markdown] tags=["en"]
# ### Predict first: the learning rate for a larger batch
#
# A learning rate was tuned at batch 32. **By the linear scaling rule, the rate for batch 256 is what multiple of it?** A multiple (x), from 0.1 to 100. Write it in place of `None` and run the cell. Your first answer is kept with its time in `predictions.json`; once the measurement has run, a change is recorded as a change and the prediction stays. Nothing here is graded for being right.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước: tốc độ học cho batch lớn hơn
#
# Một tốc độ học đã được tinh chỉnh ở batch 32. **Theo quy tắc tỉ lệ tuyến tính, tốc độ học cho batch 256 gấp bao nhiêu lần nó?** Một bội số (x), từ 0,1 đến 100. Viết nó thay cho `None` rồi chạy ô. Câu trả lời đầu tiên của bạn được giữ lại cùng thời điểm trong `predictions.json`; khi phép đo đã chạy, mỗi lần sửa được ghi lại là một lần sửa và dự đoán vẫn giữ nguyên. Không có gì ở đây được chấm theo đúng hay sai.

# %%
guess = None  # tr: your prediction, a multiple (x) from 0.1 to 100, in place of None
predict("lr_batch_256", guess)

# %% [markdown] tags=["en"]
# ## 7. The linear scaling rule and warmup (quy tắc tỉ lệ tuyến tính và khởi động): §3.2.1.2 Mini-batch processing, §4.4.2 Batch size and parameter updates, §8 Fallacies and Pitfalls
#
# A batch k times larger gives k times fewer updates per epoch. The linear scaling rule (Goyal et al., *Accurate, Large Minibatch SGD*, 2017, which the chapter cites) makes up for it with k times the learning rate:
#
# $$\eta_\text{new} = \eta_\text{base}\cdot\frac{B_\text{new}}{B_\text{base}}.$$
#
# The chapter's numbers: batch 32 → 256 takes 8× the learning rate (§4.4.2 Batch size and parameter updates, its figure of three loss curves); batch 512 → 4,096 takes 0.1 → 0.8, and large-scale training "also requires warmup schedules" (§8 Fallacies and Pitfalls, the second fallacy, "Hyperparameters transfer directly from small-scale experiments to large-scale training"). And a ceiling: the rule "holds only up to the critical batch size", near 8,192 for ResNet-50 on ImageNet (§3.2.1.2 Mini-batch processing); beyond it, accuracy degrades "even with perfectly scaled learning rates".
#
# Implement `linear_scaling_rule` (None beyond the critical batch; 8,192 is the default, but a critical batch belongs to its workload) and `scaled_lr_schedule`, the warmup and cosine of part 6 with the scaled rate as the peak (reuse `lr_schedule`). The chapter gives no warmup length for a scaled batch, so it is a parameter; the lab warms up from 0, as GPT-2 XL's schedule does, where Goyal et al. start from η_base and warm up over 5 epochs (beyond the chapter).

# %% [markdown] tags=["vi"]
# ## 7. Quy tắc tỉ lệ tuyến tính và khởi động (warmup): §3.2.1.2 Xử lý mini-batch (Mini-batch processing), §4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates), §8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls)
#
# Batch lớn gấp k lần thì số lần cập nhật mỗi epoch ít đi k lần. Quy tắc tỉ lệ tuyến tính (Goyal và cộng sự, *Accurate, Large Minibatch SGD*, 2017, được chương sách trích dẫn) bù lại bằng tốc độ học gấp k lần:
#
# $$\eta_\text{new} = \eta_\text{base}\cdot\frac{B_\text{new}}{B_\text{base}}.$$
#
# Các con số của chương: batch 32 → 256 cần tốc độ học gấp 8 (§4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates), hình ba đường mất mát); batch 512 → 4.096 nghĩa là 0,1 → 0,8, và huấn luyện quy mô lớn "còn cần lịch khởi động (warmup)" (§8 Ngộ nhận và cạm bẫy (Fallacies and Pitfalls), ngộ nhận thứ hai, "Hyperparameters transfer directly from small-scale experiments to large-scale training"). Và một giới hạn trên: quy tắc "chỉ đúng đến kích thước batch tới hạn", khoảng 8.192 với ResNet-50 trên ImageNet (§3.2.1.2 Xử lý mini-batch (Mini-batch processing)); vượt quá đó, độ chính xác giảm "kể cả khi tốc độ học được tỉ lệ hoàn hảo".
#
# Hãy cài đặt `linear_scaling_rule` (trả về None khi vượt batch tới hạn; mặc định là 8.192, nhưng batch tới hạn thuộc về từng bài toán) và `scaled_lr_schedule`: warmup và cosin của phần 6 với đỉnh là tốc độ học đã tỉ lệ (dùng lại `lr_schedule`). Chương sách không nêu độ dài warmup cho batch đã tỉ lệ, nên đó là một tham số; bài lab khởi động từ 0 như lịch của GPT-2 XL, còn Goyal và cộng sự bắt đầu từ η_base và khởi động trong 5 epoch (ngoài phạm vi chương).

# %%
with skip_if_unwritten():
    for base_batch, new_batch, base_lr in ((32, 256, 1.0), (512, 4096, 0.1), (256, 8192, 0.1), (512, 16_384, 0.1)):
        lr = optimizers.linear_scaling_rule(base_lr=base_lr, base_batch=base_batch, new_batch=new_batch)
        print(tr("batch {base} -> {new}, base rate {base_lr}: {lr}").format(
            base=num(base_batch), new=num(new_batch), base_lr=num(base_lr, "g"),
            lr=tr("the rule does not hold (None)") if lr is None else num(lr, "g")))

    steps = np.arange(0, 5_001, 10)
    schedule = optimizers.scaled_lr_schedule(steps=steps, base_lr=0.1, base_batch=512, new_batch=4096,
                                             warmup_steps=500, total_steps=5_000)
    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    ax.plot(steps, schedule, label=tr("batch 4,096: warmup to the scaled rate, then cosine"))
    ax.axhline(0.1, color="0.5", ls=":", label=tr("batch 512's rate"))
    ax.set_xlabel(tr("step")); ax.set_ylabel(tr("learning rate")); ax.legend(fontsize=8); show()

# %%
scaled = attempt(optimizers.linear_scaling_rule, base_lr=1.0, base_batch=32, new_batch=256)
reveal("lr_batch_256", scaled)

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your guess the rule's multiple, and why does the rule scale the rate with the batch and not with its square root?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): dự đoán của bạn có đúng bội số của quy tắc không, và vì sao quy tắc tỉ lệ tốc độ học theo batch chứ không theo căn bậc hai của nó?

# %% [markdown] tags=["en", "answer:reflections/lr_batch_256"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/lr_batch_256"]
# *Một dòng ở đây.*

# %% [markdown] tags=["en"]
# You measure it: the lab's own experiment, on `lab2_models` with a fixed seed (8 epochs of 4,096 examples, plain SGD). Batch 32 at η = 0.1 is the baseline; batch 256 at the same η; batch 256 at the rate the rule gives; and batch 4,096 at the rule's rate too.

# %% [markdown] tags=["vi"]
# Bạn tự đo: thí nghiệm riêng của bài lab, trên `lab2_models` với seed cố định (8 epoch trên 4.096 mẫu, SGD thuần). Batch 32 với η = 0,1 là mốc; batch 256 với cùng η; batch 256 với tốc độ học mà quy tắc cho; và batch 4.096, cũng với tốc độ học của quy tắc.

# %%
with skip_if_unwritten():
    train_config = {**lab2_models.DEFAULT_CONFIG, "d_hidden": 32}
    data = lab2_models.make_batch(train_config, n=4096, seed=1)

    def train(batch_size, lr, epochs=8):
        # tr: plain SGD over shuffled batches of the same 4,096 examples; the training loss after each epoch
        model = lab2_models.build_model(train_config)
        sgd = torch.optim.SGD(model.parameters(), lr=lr)
        order = torch.Generator().manual_seed(0)
        losses = []
        for _epoch in range(epochs):
            perm = torch.randperm(4096, generator=order)
            for i in range(0, 4096, batch_size):
                idx = perm[i : i + batch_size]
                sgd.zero_grad()
                lab2_models.loss_fn(model, {"x": data["x"][idx], "y": data["y"][idx]}).backward()
                sgd.step()
            with torch.no_grad():
                losses.append(lab2_models.loss_fn(model, data).item())
        return losses

    runs = {}
    for batch_size, rule in ((32, False), (256, False), (256, True), (4096, True)):
        lr = optimizers.linear_scaling_rule(base_lr=0.1, base_batch=32, new_batch=batch_size) if rule else 0.1
        runs[tr("batch {b}, lr {lr}").format(b=num(batch_size), lr=num(lr, "g"))] = train(batch_size, lr)
    fig, ax = plt.subplots(figsize=(6, 3.4), layout="constrained")
    for (label, losses), style in zip(runs.items(), ("-o", "--s", ":^", "-.D")):
        ax.semilogy(range(1, 9), losses, style, ms=4, label=label)
    ax.set_xlabel(tr("epoch")); ax.set_ylabel(tr("training loss")); ax.legend(fontsize=8); show()

# %% [markdown] tags=["en"]
# At batch 256 the unchanged rate lags behind: 8× fewer updates, each the same size. With 8× the rate, batch 256 follows batch 32 epoch for epoch, as the chapter's figure in §4.4.2 Batch size and parameter updates draws it. At 4,096 the function (with ResNet-50's critical batch) still answers 12.8, and training blows up: this model's limit is far below 8,192. Here the scaled rate is more than the loss surface tolerates, as SGD on the quadratic of part 2 diverged above η = 2/20; the chapter's critical batch is another limit (larger batches stop paying for fewer updates), but both say the same thing: the linear rule has a ceiling, and it belongs to the workload, which is why the critical batch is a parameter and why large batches warm up.

# %% [markdown] tags=["vi"]
# Ở batch 256, tốc độ học giữ nguyên bị tụt lại: số lần cập nhật ít đi 8 lần, mỗi lần vẫn cùng độ lớn. Với tốc độ học gấp 8, batch 256 bám theo batch 32 qua từng epoch, đúng như hình của chương trong §4.4.2 Kích thước batch và cập nhật tham số (Batch size and parameter updates). Ở batch 4.096, hàm (với batch tới hạn của ResNet-50) vẫn trả lời 12,8, và việc huấn luyện bùng nổ: giới hạn của mô hình này thấp hơn 8.192 rất nhiều. Ở đây tốc độ học đã tỉ lệ vượt quá mức mà mặt mất mát chịu được, giống như SGD trên mặt bậc hai ở phần 2 phân kỳ khi η vượt 2/20; batch tới hạn của chương là một giới hạn khác (batch lớn hơn không còn bù được số lần cập nhật ít đi), nhưng cả hai cùng nói một điều: quy tắc tuyến tính có giới hạn trên, và giới hạn đó thuộc về bài toán; vì vậy batch tới hạn là một tham số, và batch lớn cần khởi động (warmup).

# %%
grader.check("lr_scaling")

# %% [markdown] tags=["en"]
# ### Predict first: the gradient without the 1/k
#
# Part 8 builds a big batch's gradient from k micro-batches: each micro-batch's mean loss goes to `backward()`, and the gradients add up in `.grad`. The correct accumulation first divides each mean loss by k (the 1/k; part 8 says why). **A batch of 12 in k = 4 equal micro-batches of 3, accumulated without the 1/k: the gradient is what multiple of the big-batch gradient?** A multiple (x), from 0.1 to 20. Write it in place of `None` and run the cell. Your first answer is kept with its time in `predictions.json`; once the measurement (at the end of part 8) has run, a change is recorded as a change and the prediction stays. Nothing here is graded for being right.

# %% [markdown] tags=["vi"]
# ### Dự đoán trước: gradient khi thiếu 1/k
#
# Phần 8 dựng gradient của một batch lớn từ k micro-batch: mất mát trung bình của mỗi micro-batch được đưa vào `backward()`, và các gradient cộng dồn trong `.grad`. Cách tích luỹ đúng chia mỗi mất mát trung bình cho k trước (1/k; phần 8 giải thích vì sao). **Một batch 12 mẫu chia thành k = 4 micro-batch bằng nhau, mỗi micro-batch 3 mẫu, tích luỹ mà không có 1/k: gradient gấp bao nhiêu lần gradient của batch lớn?** Một bội số (x), từ 0,1 đến 20. Viết nó thay cho `None` rồi chạy ô. Câu trả lời đầu tiên của bạn được giữ lại cùng thời điểm trong `predictions.json`; khi phép đo (ở cuối phần 8) đã chạy, mỗi lần sửa được ghi lại là một lần sửa và dự đoán vẫn giữ nguyên. Không có gì ở đây được chấm theo đúng hay sai.

# %%
guess = None  # tr: your prediction, a multiple (x) from 0.1 to 20, in place of None
predict("no_scaling_multiple", guess)

# %% [markdown] tags=["en"]
# ## 8. Gradient accumulation (tích luỹ gradient): §6.5.1.1 Gradient accumulation, §6.5.4 Practical considerations
#
# When a batch of B examples does not fit, run k micro-batches of b examples, calling `backward()` on each so the gradients add up in `.grad`, then step once. GPT-2's setup: micro-batch 16 × 4 accumulation steps × 8 GPUs = an effective batch of 512 (§6.5.3 Memory and computational benefits).
#
# **Why 1/k.** The loss is a *mean* over the examples of a batch, and so is the big-batch loss the accumulation must reproduce. With k micro-batches of b examples (B = k·b), the mean over all B examples is the mean of the k micro-batch means, the chapter's equation in §6.5.1.1 Gradient accumulation:
# $$\nabla L_B = \frac1B \sum_{i=1}^{B} \nabla \ell_i = \frac1k \sum_{j=1}^{k} \Big(\frac1b \sum_{i \in j} \nabla \ell_i\Big).$$
# So each micro-batch's mean loss is divided by k before `backward()` (the chapter's listing writes `loss = model(micro_batch) / 4`, and its figure's "Sum" adds gradients of losses already divided), and then "the learning rate needs no adjustment" (§6.5.4 Practical considerations). Summing without the 1/k gives k times the gradient. A sum is right in three cases: the chapter's other convention, sum and divide the learning rate by k instead (plain SGD then takes the same step, but the accumulated gradient is k× the mean, and §6.5.4 Practical considerations calls the choice "a common source of subtle bugs"); a loss that is a *sum* over examples; and a weighted sum, when the micro-batches are unequal. The chapter's equation assumes equal micro-batches; with a short last one, 1/k gives it too much weight, and the mean over all examples weights each micro-batch by its share of the examples, $b_j/B$ (which is 1/k when the sizes are equal):
# $$\nabla L_B = \sum_{j} \frac{b_j}{B}\,\nabla\Big(\frac{1}{b_j}\sum_{i \in j} \ell_i\Big).$$
# This function keeps the learning rate and reports the gradient, so it scales each loss by $b_j/B$.
#
# Time: the chapter writes the time per update as $k\,T_\text{micro} + (k-1)\,T_\text{sync}$ (§6.5.1.1 Gradient accumulation). In data-parallel training every `backward()` all-reduces the gradients; the $k-1$ synchronizations of the intermediate micro-batches are wasted work, and in the chapter's GPT-2 accumulation (§6.5.3 Memory and computational benefits) `no_sync()` suppresses them, so that the AllReduce "fires only once per effective batch".
#
# The chapter names two bugs, and the hidden tests check `accumulate_and_step` for both:
#
# * **(A)** summing the micro-batch gradients without dividing by k, while keeping the learning rate: the gradient is k× too large (§6.5.4 Practical considerations);
# * **(B)** stale gradients: no `zero_grad()` between two optimizer steps, so the previous step's gradient leaks into the next (§3.2.4 Framework optimizer interface and scheduling: `zero_grad()` "marks the boundary between one update and the next", and clearing the gradients "prevents stale gradients from contaminating the next batch").
#
# `zero_grad()` can also be misplaced the other way, which the chapter does not describe: called inside the micro-batch loop, before each micro-batch's backward, it throws away what the earlier micro-batches added, and only the last one is left (the chapter's listing in §6.5.3 Memory and computational benefits clears once, before its 4 micro-batches). The hidden tests check for it too, and you write it on purpose at the end of this part.
#
# And a case beyond the chapter's equation, the lab's own step: with a short last micro-batch, averaging the micro-batch means with weight 1/k is not the mean over examples.
#
# And the point of it all: the model must never see the whole big batch at once, or no memory was saved. Putting all B examples through one forward gives exactly the big-batch gradient, so the numbers cannot show it. The shipped model shows it instead: it records every forward it runs (`model.forward_log`: how many examples, and a fingerprint of which), `accumulate_and_step` returns that log as `"forward_log"`, and the grader compares it with the micro-batches it expects.
#
# Implement `split_batch` and `accumulate_and_step`, then compare with the big-batch gradient.

# %% [markdown] tags=["vi"]
# ## 8. Tích luỹ gradient: §6.5.1.1 Tích luỹ gradient (Gradient accumulation), §6.5.4 Lưu ý thực tế (Practical considerations)
#
# Khi một batch gồm B mẫu không vừa bộ nhớ, hãy chạy k micro-batch, mỗi micro-batch b mẫu, gọi `backward()` trên từng micro-batch để các gradient cộng dồn vào `.grad`, rồi cập nhật một lần. Cấu hình của GPT-2: micro-batch 16 × 4 bước tích luỹ × 8 GPU = batch hiệu dụng 512 (§6.5.3 Lợi ích về bộ nhớ và tính toán (Memory and computational benefits)).
#
# **Vì sao 1/k.** Mất mát là *trung bình* trên các mẫu của một batch, và mất mát của batch lớn mà việc tích luỹ phải tái tạo cũng vậy. Với k micro-batch, mỗi micro-batch b mẫu (B = k·b), trung bình trên cả B mẫu bằng trung bình của k giá trị trung bình micro-batch, đúng phương trình của chương trong §6.5.1.1 Tích luỹ gradient (Gradient accumulation):
# $$\nabla L_B = \frac1B \sum_{i=1}^{B} \nabla \ell_i = \frac1k \sum_{j=1}^{k} \Big(\frac1b \sum_{i \in j} \nabla \ell_i\Big).$$
# Vì vậy mất mát trung bình của mỗi micro-batch được chia cho k trước `backward()` (đoạn mã của chương viết `loss = model(micro_batch) / 4`, và chữ "Sum" trong hình của chương cộng các gradient của những mất mát đã được chia), và khi đó "tốc độ học không cần điều chỉnh" (§6.5.4 Lưu ý thực tế (Practical considerations)). Cộng mà không chia cho k thì gradient lớn gấp k lần. Tổng là đúng trong ba trường hợp: quy ước còn lại của chương, cộng rồi chia tốc độ học cho k (SGD thuần khi đó đi đúng bước như vậy, nhưng gradient tích luỹ gấp k lần trung bình, và §6.5.4 Lưu ý thực tế (Practical considerations) gọi lựa chọn này là "một nguồn lỗi tinh vi thường gặp"); mất mát là *tổng* theo mẫu; và tổng có trọng số, khi các micro-batch không bằng nhau. Phương trình của chương giả định các micro-batch bằng nhau; khi micro-batch cuối ngắn hơn, trọng số 1/k cho nó quá nhiều ảnh hưởng, còn trung bình trên mọi mẫu thì gán cho mỗi micro-batch trọng số bằng phần mẫu của nó, $b_j/B$ (bằng 1/k khi các kích thước bằng nhau):
# $$\nabla L_B = \sum_{j} \frac{b_j}{B}\,\nabla\Big(\frac{1}{b_j}\sum_{i \in j} \ell_i\Big).$$
# Hàm của bài lab giữ nguyên tốc độ học và trả về gradient, nên nó nhân mất mát của mỗi micro-batch với $b_j/B$.
#
# Thời gian: chương sách viết thời gian cho mỗi lần cập nhật là $k\,T_\text{micro} + (k-1)\,T_\text{sync}$ (§6.5.1.1 Tích luỹ gradient (Gradient accumulation)). Trong huấn luyện song song dữ liệu (data-parallel), mỗi lần `backward()` đều all-reduce các gradient; $k-1$ lần đồng bộ của các micro-batch trung gian là công sức lãng phí, và trong cách tích luỹ GPT-2 của chương (§6.5.3 Lợi ích về bộ nhớ và tính toán (Memory and computational benefits)), `no_sync()` chặn các lần đó, để AllReduce "chỉ chạy một lần cho mỗi batch hiệu dụng".
#
# Chương sách nêu tên hai lỗi, và các bài kiểm thử ẩn kiểm tra `accumulate_and_step` để phát hiện cả hai:
#
# * **(A)** cộng các gradient của micro-batch mà không chia cho k trong khi giữ nguyên tốc độ học: gradient lớn gấp k lần (§6.5.4 Lưu ý thực tế (Practical considerations));
# * **(B)** gradient cũ (stale gradient): không gọi `zero_grad()` giữa hai bước cập nhật, nên gradient của bước trước rò sang bước sau (§3.2.4 Giao diện bộ tối ưu của framework và lập lịch (Framework optimizer interface and scheduling): `zero_grad()` "đánh dấu ranh giới giữa lần cập nhật này và lần sau", và xoá gradient "ngăn gradient cũ làm nhiễm bẩn batch tiếp theo").
#
# `zero_grad()` cũng có thể bị đặt sai theo chiều ngược lại, điều mà chương sách không mô tả: gọi bên trong vòng lặp micro-batch, trước backward của mỗi micro-batch, nó xoá mất phần mà các micro-batch trước đã cộng vào, và chỉ còn lại micro-batch cuối (đoạn mã của chương ở §6.5.3 Lợi ích về bộ nhớ và tính toán (Memory and computational benefits) chỉ xoá một lần, trước 4 micro-batch của nó). Các bài kiểm thử ẩn cũng kiểm tra lỗi này, và bạn sẽ cố ý viết nó ở cuối phần này.
#
# Và một trường hợp vượt ra ngoài phương trình của chương, bước riêng của bài lab: khi micro-batch cuối ngắn hơn, lấy trung bình các giá trị trung bình của từng micro-batch với trọng số 1/k không cho ra giá trị trung bình trên các mẫu.
#
# Và mục đích của tất cả: mô hình không bao giờ được thấy cả batch lớn cùng một lúc, nếu không thì chẳng tiết kiệm được chút bộ nhớ nào. Đưa cả B mẫu qua một lượt xuôi cho đúng gradient của batch lớn, nên các con số không thể cho thấy lỗi này. Mô hình được cho sẵn cho thấy điều đó: nó ghi lại mọi lượt xuôi nó chạy (`model.forward_log`: bao nhiêu mẫu, và dấu vân tay của những mẫu nào), `accumulate_and_step` trả về nhật ký đó dưới khoá `"forward_log"`, và bộ chấm so nó với các micro-batch mà bộ chấm mong đợi.
#
# Hãy cài đặt `split_batch` và `accumulate_and_step`, rồi so sánh với gradient của batch lớn.

# %%
with skip_if_unwritten():
    print(tr("GPT-2's effective batch: {batch}").format(batch=num(16 * 4 * 8)))
    config = {**lab2_models.DEFAULT_CONFIG, "dtype": "float64"}
    init = lab2_models.build_model(config).state_dict()
    batches = [lab2_models.make_batch(config, n=12, seed=t) for t in range(3)]

    def big_batch_gradient(state_dict, batch):
        model = lab2_models.build_model(config)
        model.load_state_dict(state_dict)
        lab2_models.loss_fn(model, batch).backward()
        return model.fc1.weight.grad

    for b in (12, 4, 3, 5):  # tr: k = 1, 3, 4, and 3 with a short last micro-batch (5, 5, 2)
        out = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches[:1], micro_batch_size=b, lr=0.5)
        err = (out["grads"][0]["fc1.weight"] - big_batch_gradient(init, batches[0])).abs().max().item()
        print(tr("micro-batch {b}: max |accumulated - big-batch| gradient of fc1.weight = {error}, "
                 "examples per forward pass {examples}").format(
            b=num(b, "2d"), error=num(err, ".1e"), examples=nums([entry["examples"] for entry in out["forward_log"]])))

# %%
with skip_if_unwritten():
    # tr: Train 3 steps with accumulation (micro-batch 4, k = 3) and without it (micro-batch 12, k = 1): the parameters must agree.
    acc = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=4, lr=0.5)
    big = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=12, lr=0.5)
    for name in acc["params"]:
        diff = (acc["params"][name] - big["params"][name]).abs().max().item()
        print(tr("{name} max |difference| after 3 steps: {diff}").format(name=f"{name:10s}", diff=num(diff, ".1e")))

    # tr: The symptom the grader looks for: |accumulated gradient| / |big-batch gradient| at every step.
    # tr: Correct code sits at 1.0 for every k; bug (A) would sit at k, bug (B) would leave step 1 and drift after it.
    micro_sizes = (1, 2, 3, 4, 6)
    width = 0.8 / len(micro_sizes)
    fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
    top = 0.0
    for i, b in enumerate(micro_sizes):  # tr: one bar per k at each step, side by side, so equal ratios stay visible
        run = accumulation.accumulate_and_step(config=config, state_dict=init, batches=batches, micro_batch_size=b, lr=0.5)
        ratios = [(g["fc1.weight"].norm() / G["fc1.weight"].norm()).item() for g, G in zip(run["grads"], big["grads"])]
        ax.bar(np.arange(1, 4) + (i - (len(micro_sizes) - 1) / 2) * width, ratios, width, label=f"k = {12 // b}")
        top = max(top, *ratios)
    ax.axhline(1.0, color="k", ls=":", lw=1)
    ax.set_xticks([1, 2, 3])  # tr: optimizer steps are whole numbers
    ax.set_ylim(0, max(2.0, 1.15 * top))
    ax.set_xlabel(tr("optimizer step")); ax.set_ylabel(tr("|accumulated| / |big-batch|"))
    ax.legend(title=tr("micro-batches per step"), ncols=len(micro_sizes), fontsize=7, title_fontsize=7, loc="upper center")
show()

# %%
grader.check("accumulation")

# %%
grader.check("accumulation_uneven")

# %% [markdown] tags=["en"]
# ### Break it on purpose: two bugs, written by you
#
# Now write two accumulation bugs on purpose, beside your correct `accumulate_and_step` in `accumulation.py`: the chapter's bug (A), and the misplaced `zero_grad()` that the chapter does not describe (the chapter's bug (B), stale gradients, is the one the hidden tests look for in your `accumulate_and_step`). Both take the same arguments and return the same dict; each differs from the correct function in **one** place (their docstrings fix which):
#
# * `accumulate_without_scaling`: each micro-batch's mean loss goes to `backward()` as it is, without the 1/k (the $b_j/B$): bug (A);
# * `accumulate_with_zero_grad_inside`: the loss is scaled as it should be, but `zero_grad()` is called before *every* micro-batch's backward instead of once per big batch: cleared too often, where bug (B) clears too seldom.
#
# The hidden tests check that each one shows exactly its symptom on batches they choose (the gradient k times too large; only the last micro-batch's gradient left, from the first step on), and that your correct function shows neither. A "broken" function that is accidentally right, or broken another way (stale gradients instead of the last micro-batch alone, say), loses its points.

# %% [markdown] tags=["vi"]
# ### Cố ý làm hỏng: hai lỗi, do chính bạn viết
#
# Giờ hãy cố ý viết hai lỗi tích luỹ, bên cạnh hàm `accumulate_and_step` đúng của bạn trong `accumulation.py`: lỗi (A) của chương sách, và cách đặt sai `zero_grad()` mà chương sách không mô tả (lỗi (B) của chương, gradient cũ, là lỗi mà các bài kiểm thử ẩn tìm trong hàm `accumulate_and_step` của bạn). Cả hai nhận cùng các đối số và trả về cùng dict; mỗi hàm khác hàm đúng ở **một** chỗ (docstring của chúng nêu rõ chỗ nào):
#
# * `accumulate_without_scaling`: mất mát trung bình của mỗi micro-batch được đưa vào `backward()` nguyên vẹn, không có 1/k ($b_j/B$): lỗi (A);
# * `accumulate_with_zero_grad_inside`: mất mát được nhân đúng như cần, nhưng `zero_grad()` được gọi trước backward của *mỗi* micro-batch thay vì một lần cho mỗi batch lớn: xoá quá thường xuyên, trong khi lỗi (B) xoá quá ít.
#
# Các bài kiểm thử ẩn kiểm tra rằng mỗi hàm cho thấy đúng triệu chứng của nó trên các batch do bộ chấm chọn (gradient lớn gấp k lần; chỉ còn gradient của micro-batch cuối, ngay từ bước đầu tiên), và hàm đúng của bạn không có triệu chứng nào. Một hàm "hỏng" mà vô tình đúng, hoặc hỏng theo kiểu khác (chẳng hạn gradient cũ thay vì chỉ còn micro-batch cuối), mất điểm của nó.

# %%
G = big_batch_gradient(init, batches[0])
kwargs = dict(config=config, state_dict=init, batches=batches[:1], micro_batch_size=3, lr=0.5)  # tr: k = 4


def size_ratio(out):  # tr: |gradient of fc1.weight| / |big-batch gradient|; None while the function is not written
    return None if out is None else (out["grads"][0]["fc1.weight"].norm() / G.norm()).item()


unscaled = attempt(accumulation.accumulate_without_scaling, **kwargs)
reveal("no_scaling_multiple", size_ratio(unscaled))

# tr: What survives zero_grad() inside the loop: the last micro-batch's own gradient, weighted by 3 / 12.
model = lab2_models.build_model(config)
model.load_state_dict(init)
(lab2_models.loss_fn(model, {key: v[-3:] for key, v in batches[0].items()}) * (3 / 12)).backward()
last = model.fc1.weight.grad
inside = attempt(accumulation.accumulate_with_zero_grad_inside, **kwargs)
if inside is not None:
    g = inside["grads"][0]["fc1.weight"]
    print(tr("zero_grad() inside the loop: max |gradient - big-batch gradient| = {big}, "
             "max |gradient - last micro-batch's share| = {last}").format(
        big=num((g - G).abs().max().item(), ".1e"), last=num((g - last).abs().max().item(), ".1e")))

# %%
# tr: |gradient| / |big-batch gradient| of the three versions, for k = 1 to 6 micro-batches of a batch of 12
versions = {"accumulate_and_step": accumulation.accumulate_and_step,
            "accumulate_without_scaling": accumulation.accumulate_without_scaling,
            "accumulate_with_zero_grad_inside": accumulation.accumulate_with_zero_grad_inside}
ks = (1, 2, 3, 4, 6)
fig, ax = plt.subplots(figsize=(6, 3.2), layout="constrained")
for (name, fn), style in zip(versions.items(), ("-o", "--s", ":^")):
    with skip_if_unwritten():
        ratios = [size_ratio(fn(**{**kwargs, "micro_batch_size": 12 // k})) for k in ks]
        ax.plot(ks, ratios, style, label=name)
ax.plot(ks, ks, color="0.7", lw=4, alpha=0.5, zorder=0, label="k")
ax.set_xlabel(tr("micro-batches per step (k)")); ax.set_ylabel(tr("|gradient| / |big-batch|"))
ax.set_xticks(ks); ax.legend(fontsize=7); show()

# %% [markdown] tags=["en"]
# Without the 1/k the gradient grows exactly as k: each micro-batch mean counts fully. With `zero_grad()` inside the loop the size falls as k grows: only the last of the k micro-batches is left, weighted by its share of the examples, so the step ignores the rest of the batch. The correct function stays at 1 for every k.

# %% [markdown] tags=["vi"]
# Khi thiếu 1/k, gradient tăng đúng theo k: mỗi giá trị trung bình micro-batch được tính trọn. Khi `zero_grad()` nằm trong vòng lặp, độ lớn giảm khi k tăng: chỉ còn micro-batch cuối trong k micro-batch, nhân với phần mẫu của nó, nên bước cập nhật bỏ qua phần còn lại của batch. Hàm đúng luôn ở mức 1 với mọi k.

# %% [markdown] tags=["en"]
# **Reflect** (one line, marked by hand with the other reflections): was your multiple right, and what would the learning rate have to be for plain SGD to take the right step with this gradient?

# %% [markdown] tags=["vi"]
# **Suy ngẫm** (một dòng, chấm tay cùng các suy ngẫm khác): bội số của bạn có đúng không, và tốc độ học phải bằng bao nhiêu để SGD thuần đi đúng bước với gradient này?

# %% [markdown] tags=["en", "answer:reflections/no_scaling_multiple"]
# *One line here.*

# %% [markdown] tags=["vi", "answer:reflections/no_scaling_multiple"]
# *Một dòng ở đây.*

# %%
grader.check("break_no_scaling")

# %%
grader.check("break_zero_grad_inside")

# %% [markdown] tags=["en"]
# ## How to check and submit
#
# * Run the public tests on your working copy: `autograder check lab2` (a per-question table with hints; a few seconds). In this notebook, the `grader.check("...")` cells run the same public tests one question at a time; `grader.check_all()` runs them all.
# * The public tests compare with stored snapshots on fixed inputs. **Hidden tests run at grading**: they replay your update rules and AdamW against `torch.optim` over many steps, check your trajectories, state counts, noise slope, schedule and scaled learning rates on fresh seeded inputs (and the chapter's worked numbers), check gradient accumulation for the chapter's k× and stale-gradient bugs and for `zero_grad()` inside the micro-batch loop, for a short last micro-batch, and (from the model's own forward log) that no forward saw more than a micro-batch, and check that each of your two broken functions shows exactly its own symptom.
# * Build the zip to upload with the hand-in cell below or `autograder submit lab2`: it holds `optimizers.py` and `accumulation.py`, this notebook with its outputs and your answers, your predictions (`predictions.json`) and `MANIFEST.json`. Your reflections are marked by hand, your predictions never for being right.

# %% [markdown] tags=["vi"]
# ## Cách kiểm tra và nộp bài
#
# * Chạy các bài kiểm thử công khai trên bản làm việc của bạn: `autograder check lab2` (một bảng theo từng câu hỏi, kèm gợi ý; mất vài giây). Trong sổ tay này, các ô `grader.check("...")` chạy cùng các bài kiểm thử công khai đó, mỗi lần một câu hỏi; `grader.check_all()` chạy tất cả.
# * Các bài kiểm thử công khai so sánh với kết quả mẫu đã lưu (snapshot) trên những đầu vào cố định. **Các bài kiểm thử ẩn chạy khi chấm điểm**: chúng cho các quy tắc cập nhật và AdamW của bạn chạy lại song song với `torch.optim` qua nhiều bước, kiểm tra quỹ đạo, số liệu trạng thái, hệ số góc của nhiễu, lịch tốc độ học và tốc độ học đã tỉ lệ của bạn trên các đầu vào mới với seed cố định (cùng các con số mẫu của chương), kiểm tra tích luỹ gradient để phát hiện hai lỗi của chương (gấp k lần, gradient cũ) và lỗi `zero_grad()` trong vòng lặp micro-batch, trường hợp micro-batch cuối ngắn hơn, cũng như (từ nhật ký lượt xuôi của chính mô hình) việc không lượt xuôi nào thấy nhiều hơn một micro-batch, và kiểm tra rằng mỗi hàm cố ý hỏng của bạn cho thấy đúng triệu chứng của nó.
# * Tạo tệp zip để nộp bằng ô nộp bài bên dưới hoặc `autograder submit lab2`: tệp chứa `optimizers.py` và `accumulation.py`, sổ tay này cùng kết quả chạy và câu trả lời của bạn, các dự đoán của bạn (`predictions.json`) và `MANIFEST.json`. Các suy ngẫm được chấm tay; các dự đoán không bao giờ được chấm theo đúng hay sai.
