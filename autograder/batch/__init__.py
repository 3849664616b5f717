"""Grading a class: the bulk run over an export, the gradebook, feedback
files, the summary, the roster and the runner on Gradescope."""
