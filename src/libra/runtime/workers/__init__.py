"""Where tool calls run: the executor and its transports (isolated worker processes, another Python interpreter, Ray
actors), the per-call guard, and the OS-level sandbox every worker starts in."""
