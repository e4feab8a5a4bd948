"""The walk contract checking makes through the sandbox, by job: :mod:`.binding` (which observed value fills an
input), :mod:`.walk` (the pool of values by state, binding and running a template), :mod:`.retries` (what a
failed template is run again with) and :mod:`.checker` (passes over the pending templates, revision from each
tool's feedback). The entry point is :func:`libra.contracts.check.check_contracts`."""
