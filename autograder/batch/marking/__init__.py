"""The marking page (``autograder mark LAB OUT``): TAs mark written answers in a browser.

One question at a time, one student at a time: the rubric, the student's answer (part by
part), their prediction and its result beside a reflection, their own notebook with its
outputs, a mark and a comment.  Marks go to the assignment's record through
``batch/record.py``'s one writer, as a marks file's do, so the next ``grade`` applies them and
two TAs marking at once never lose each other's marks (``docs/marking.md``).

- ``app.py``: the Flask application (routes, the save, the security headers).
- ``render.py``: a student's notebook and Markdown as inert HTML.
- ``templates/``, ``static/``: the page, its script and style, served from here (no CDN: the
  page works offline).
"""
