"""Otter test for question 'accumulation' of lab2_optimizers: runs its public tests
(assignments/lab2_optimizers/tests) on the files in the notebook's folder; worth
7 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab2`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'accumulation'


@test_case(name='public tests', points=7)
def public_tests():
    from autograder.grading.notebook import check

    check('lab2_optimizers', 'accumulation')
