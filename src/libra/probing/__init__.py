"""What contract checking and the exploration share when they walk the sandbox: the memo of calls by state, the
states reached, the values a failed call is retried with, one spelling for paths."""
