"""Otter test for question 'warmup' of lab1_iron_law: runs its public tests
(assignments/lab1_iron_law/tests) on the files in the notebook's folder; worth
3 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab1`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'warmup'


@test_case(name='public tests', points=3)
def public_tests():
    from autograder.grading.notebook import check

    check('lab1_iron_law', 'warmup')
