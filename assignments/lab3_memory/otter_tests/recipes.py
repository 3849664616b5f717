"""Otter test for question 'recipes' of lab3_memory: runs its public tests
(assignments/lab3_memory/tests) on the files in the notebook's folder; worth
4 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab3`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'recipes'


@test_case(name='public tests', points=4)
def public_tests():
    from autograder.grading.notebook import check

    check('lab3_memory', 'recipes')
