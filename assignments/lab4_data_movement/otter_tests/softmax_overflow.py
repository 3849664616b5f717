"""Otter test for question 'softmax_overflow' of lab4_data_movement: runs its public tests
(assignments/lab4_data_movement/tests) on the files in the notebook's folder; worth
4 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab4`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'softmax_overflow'


@test_case(name='public tests', points=4)
def public_tests():
    from autograder.grading.notebook import check

    check('lab4_data_movement', 'softmax_overflow')
