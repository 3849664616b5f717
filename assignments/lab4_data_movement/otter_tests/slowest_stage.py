"""Otter test for question 'slowest_stage' of lab4_data_movement: runs its public tests
(assignments/lab4_data_movement/tests) on the files in the notebook's folder; worth
9 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab4`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'slowest_stage'


@test_case(name='public tests', points=9)
def public_tests():
    from autograder.grading.notebook import check

    check('lab4_data_movement', 'slowest_stage')
