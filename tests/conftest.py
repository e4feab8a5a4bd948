import importlib.util
import os
import tempfile

import pytest

# Keep test caches out of the user's home and independent of earlier runs.
os.environ.setdefault("LIBRA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "libra-test-cache"))

HAS_BFCL = importlib.util.find_spec("bfcl_eval") is not None
needs_bfcl = pytest.mark.skipif(not HAS_BFCL, reason="bfcl-eval not installed (make setup installs it)")
