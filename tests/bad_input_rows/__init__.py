"""The rows of the bad-input table, one module per area; tests/test_bad_inputs.py joins them in a fixed order."""
