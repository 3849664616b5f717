"""What a lab's tests import: the pytest plugin and its fixtures,
assertions that explain a mismatch, message templates and snapshots."""
