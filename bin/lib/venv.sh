# Sourced by bin/demo and bin/serve (both run with `set -euo pipefail`): the project's .venv,
# created and installed on first use. Reinstalls only when pyproject.toml changed since the last
# install, so a re-run starts at once. The install names each package as pip fetches it, so a first
# run on a fresh machine is never silent for minutes (docs/demo.md §4); pip's full output goes to a log.
py=.venv/bin/python
if [ ! -x "$py" ]; then
    echo "Creating a Python virtual environment in .venv ..."
    python3 -m venv .venv
fi
stamp=.venv/.mobkit-console-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    install_log=.venv/install.log
    echo "Installing the console and its dependencies into .venv (the first time takes a minute or two; pip's log: $install_log) ..."
    if ! "$py" -m pip install --disable-pip-version-check --progress-bar off -e . 2>&1 | tee "$install_log" |
        sed -un -e 's/^Collecting \([A-Za-z0-9._-]*\).*/  fetching \1/p' \
                -e 's/^Installing collected packages.*/  installing the fetched packages .../p'; then
        echo "The install failed; the end of $install_log:" >&2
        tail -n 20 "$install_log" >&2
        exit 1
    fi
    touch "$stamp"
    echo "Installed."
fi
