"""Grading one submission: staging its files, the pytest run in a grader
process, the warm grader pool, and the students' local check, notebook
check and submit."""
