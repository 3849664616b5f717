# The hand-in cells of every lab notebook (autograder.authoring.notebooks appends them after the lab's own cells):
# a text cell per language (jupytext percent format, tagged "en" and "vi", as in a lab's source) and one code
# cell, the same in every lab.  In the text, {lab} becomes the lab's folder name and {short} its short name.
# The code cell is the student's to run: a headless run of the whole notebook (nbclient's "skip-execution")
# and otter's grading ("otter_ignore") pass it by.  It calls autograder.grading.notebook.submit with the
# names the setup cell defined (LAB, LANG).
# This comment, up to the first blank line, is not part of the cells.

# %% [markdown] tags=["en"]
# ## Hand in
#
# When you are done, run the cell below. It saves this notebook, runs the public tests once more and writes
# `{lab}-submission.zip` next to this notebook; on Colab your browser then downloads it. Upload that zip.
#
# The zip holds your lab files, this notebook with its outputs and your answers, your predictions
# (`predictions.json`, in a lab that asks for them) and `MANIFEST.json`, the size and SHA-256 hash of each file.
# Failing public tests do not stop it: a partial submission earns the points it has. After any change, run the
# cell again and upload the newest zip. In a terminal, `autograder submit {short}` writes the same zip, with this
# notebook as you last saved it.

# %% [markdown] tags=["vi"]
# ## Nộp bài
#
# Khi làm xong, hãy chạy ô bên dưới. Ô này lưu sổ tay, chạy lại các bài kiểm thử công khai một lần nữa và ghi tệp
# `{lab}-submission.zip` cạnh sổ tay này; trên Colab, trình duyệt của bạn sẽ tải tệp đó về. Hãy nộp tệp zip đó.
#
# Tệp zip chứa các tệp bài lab của bạn, sổ tay này cùng kết quả chạy và câu trả lời của bạn, các dự đoán của bạn
# (`predictions.json`, ở bài lab có yêu cầu dự đoán) và `MANIFEST.json`, kích thước và mã băm SHA-256 của từng tệp.
# Bài kiểm thử công khai không đạt không ngăn việc tạo tệp zip: bài nộp chưa hoàn chỉnh vẫn được những điểm nó
# đạt. Sau mỗi lần sửa, hãy chạy lại ô này và nộp tệp zip mới nhất. Trong terminal, lệnh
# `autograder submit {short}` tạo ra cùng tệp zip đó, với sổ tay này như lần lưu gần nhất của bạn.

# %% tags=["skip-execution", "otter_ignore"]
handed_in = notebook.submit(LAB, LANG)  # tr: writes the zip to upload (on Colab, downloads it too)
