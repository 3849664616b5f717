"""Otter test for question 'break_no_scaling' of lab2_optimizers: runs its public tests
(assignments/lab2_optimizers/tests) on the files in the notebook's folder; worth
2 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab2`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'break_no_scaling'


@test_case(name='public tests', points=2)
def public_tests():
    from autograder.grading.notebook import check

    check('lab2_optimizers', 'break_no_scaling')
