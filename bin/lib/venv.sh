# Sourced by bin/demo and bin/serve (both run with `set -euo pipefail`): the project's .venv,
# created and installed on first use. Reinstalls only when pyproject.toml changed since the last
# install, so a re-run starts at once. The install names each package as pip fetches it, so a first
# run on a fresh machine is never silent for minutes (docs/demo.md §4); pip's full output goes to a log.
py=.venv/bin/python
if [ ! -x "$py" ]; then
    echo "Creating a Python virtual environment in .venv ..."
    python3 -m venv .venv
fi
# shellcheck source=bin/lib/pip.sh
. bin/lib/pip.sh
stamp=.venv/.mobkit-console-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "Installing the console and its dependencies into .venv (the first time takes a minute or two; pip's log: $pip_log) ..."
    pip_install . -e 's/^Collecting \([A-Za-z0-9._-]*\).*/  fetching \1/p' \
                  -e 's/^Installing collected packages.*/  installing the fetched packages .../p' || exit 1
    touch "$stamp"
    echo "Installed."
fi
