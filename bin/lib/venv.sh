# Sourced by bin/demo and bin/serve: the project's .venv, created and installed on first use.
# Reinstalls only when pyproject.toml changed since the last install, so a re-run starts at once.
py=.venv/bin/python
if [ ! -x "$py" ]; then
    echo "Creating .venv ..."
    python3 -m venv .venv
fi
stamp=.venv/.mobkit-console-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "Installing the console into .venv (the first time takes a minute or two) ..."
    "$py" -m pip install -q --disable-pip-version-check -e .
    touch "$stamp"
fi
