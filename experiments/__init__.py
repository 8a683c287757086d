"""The book's models and experiments, as plain functions returning plain data.

Nothing here knows about pytest or claimbook's verdicts: claim tests in
``tests/claims`` call these functions and assert on what they return.
"""
