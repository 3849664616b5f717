"""Otter test for question 'fp16_master' of lab3_memory: runs its public tests
(assignments/lab3_memory/tests) on the files in the notebook's folder; worth
2 point(s), all of them when every public test of the question passes.

Written by `autograder otter-tests lab3`; do not edit.
"""

from otter.test_files import test_case

OK_FORMAT = False
name = 'fp16_master'


@test_case(name='public tests', points=2)
def public_tests():
    from autograder.grading.notebook import check

    check('lab3_memory', 'fp16_master')
