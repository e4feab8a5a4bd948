"""Default build budgets, in a module light enough for the CLI to import when it renders ``--help``."""

DEFAULT_MAX_CALLS = 400_000  # executed invocations in total (memo hits are free)
DEFAULT_MAX_DEPTH = 3  # longest chain of state-changing calls from the fresh state
# Calls the retries of failed calls may execute, as a share of the build's max_calls, on top of it (see
# libra.induction.retries). Why a hundredth: on a small catalog the retries never come near it; on a large one
# (AppWorld's full build) they spent every call of a tenth for a handful of relations, far fewer per call than the
# exploration finds, and because they run between waves they lengthened the build's wall time out of proportion
# (benchmarks/results/build-appworld.json records the retry counters of the default build).
DEFAULT_RETRY_SHARE = 0.01
