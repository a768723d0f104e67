"""fake_openai.py with every request body saved as $FAKE_BODIES/N.json
(the fake's own log has no contents): for the tests that look for a
secret in what reached the model server. Same command line."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_openai as f  # noqa: E402

out = os.environ["FAKE_BODIES"]
orig = f.Handler.answer


def answer(self, n, path, raw, entry):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "%d.json" % n), "wb") as o:
        o.write(raw)
    return orig(self, n, path, raw, entry)


f.Handler.answer = answer
sys.exit(f.main())
