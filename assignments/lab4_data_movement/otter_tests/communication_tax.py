"""Otter test for question 'communication_tax' of lab4_data_movement: runs its public tests
(assignments/lab4_data_movement/tests) on the files in the notebook's folder; worth
5 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab4`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'communication_tax'


@test_case(name='public tests', points=5)
def public_tests():
    from autograder.grading.notebook import check

    check('lab4_data_movement', 'communication_tax')
