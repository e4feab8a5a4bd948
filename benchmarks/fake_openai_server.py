"""A deterministic OpenAI-compatible endpoint that answers contract requests with valid contracts.

Why: ``libra build bfcl --proposer llm --llm-base-url http://127.0.0.1:PORT/v1 --llm-model M`` should be runnable
end to end without a model. Every reply is derived from the request's own ``public_tool_metadata`` (the offline
proposer's contract; the offline reviser's result for a revision), so it exercises the whole LLM path -- prompts,
HTTP, parsing, validation, cache, revisions -- with reproducible answers.

    python benchmarks/fake_openai_server.py --port 0      # prints the base URL, serves until Ctrl-C
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from libra.contracts.llm.stub_server import OfflineResponder, OpenAIStubServer  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    ap.add_argument("--port", type=int, default=0, help="port (0 = pick a free one; the URL is printed)")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds to wait before each reply (simulates latency)")
    args = ap.parse_args(argv)
    server = OpenAIStubServer(OfflineResponder(), host=args.host, port=args.port, delay=args.delay)
    print(server.url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        print(f"served {server.count} request(s)", file=sys.stderr)


if __name__ == "__main__":
    main()
