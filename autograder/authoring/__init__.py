"""What instructors build from the repository: the student bundle and its
leak scan, message catalogs, notebooks, otter and Gradescope zips, verify
candidates and mutants."""
