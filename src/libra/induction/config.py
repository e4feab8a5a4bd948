"""Default build budgets, in a module light enough for the CLI to import when it renders ``--help``."""

DEFAULT_MAX_CALLS = 400_000  # executed invocations in total (memo hits are free)
DEFAULT_MAX_DEPTH = 3  # longest chain of state-changing calls from the fresh state
# Calls the retries of failed calls may execute, as a share of the build's max_calls, on top of it (see
# libra.induction.explore.retries). Why a hundredth: on a small catalog the retries never come near it; on a large one
# most failed calls fail for the state, not for the value, so retries find far fewer relations per call than the
# exploration, and they run between waves, where no other call overlaps them. A small share keeps what they add
# (the folder-or-file cases of the generalization suite) at a bounded cost; builds report their counters in
# stats.engine (calls_retries, retry_relations) so a user can raise it.
DEFAULT_RETRY_SHARE = 0.01
