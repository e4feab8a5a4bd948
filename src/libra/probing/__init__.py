"""What contract checking and the exploration share when they walk the sandbox: the memo of calls by state and the
calls made through it, the states reached and the pool of values produced on the way to each, the values a failed
call is retried with, one spelling for paths."""
