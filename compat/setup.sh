#!/usr/bin/env bash
# Installs the real tools that judge what evalferry writes, outside evalferry's own dependencies:
# the npm ones (agentv, promptfoo, the langsmith client, @huggingface/hub) from compat/package-lock.json,
# and the Python ones (datasets, pyarrow, pandas, huggingface_hub, langsmith, PyYAML) into compat/.venv.
set -euo pipefail
cd "$(dirname "$0")"

# The locked versions, by npm install: npm ci refuses this lock, since npm leaves out of it the
# other platforms' builds that @openai/codex (a dependency of agentv) names under aliases.
npm install --no-save --no-audit --no-fund --loglevel=error

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c 'import datasets, pyarrow, pandas, huggingface_hub, langsmith, yaml' 2>/dev/null; then
  python3 -m venv .venv
  # No retries: where the default index cannot be reached, pip goes on at once to the configured mirrors.
  # pip's notes on mirror folders it passes over are noise here; a failed install shows in the import below.
  .venv/bin/python -m pip install --quiet --retries 0 --timeout 20 --disable-pip-version-check -r requirements.txt 2>&1 | grep -v 'is ignored: it is neither' || true
fi
.venv/bin/python -c 'import datasets, pyarrow, pandas, huggingface_hub, langsmith, yaml'
