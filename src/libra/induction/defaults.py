"""Default build budgets, in a module light enough for the CLI to import when it renders ``--help``."""

DEFAULT_MAX_CALLS = 400_000  # executed invocations in total (memo hits are free)
DEFAULT_MAX_DEPTH = 3  # longest chain of state-changing calls from the fresh state
# Calls the retries of failed calls may execute, as a share of the build's max_calls, on top of it (see
# libra.induction.retries): a tenth keeps a full build's extra cost bounded and small.
DEFAULT_RETRY_SHARE = 0.1
