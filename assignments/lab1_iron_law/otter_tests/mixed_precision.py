"""Otter test for question 'mixed_precision' of lab1_iron_law: runs its public tests
(assignments/lab1_iron_law/tests) on the files in the notebook's folder; worth
4 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab1`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'mixed_precision'


@test_case(name='public tests', points=4)
def public_tests():
    from autograder.grading.notebook import check

    check('lab1_iron_law', 'mixed_precision')
