# Sourced by bin/lib/venv.sh and bin/test (both run with `set -euo pipefail`): installs the project into
# .venv with all of pip's output in one log, never on the terminal (a pip configuration naming an
# index directory that is not there makes pip warn once per package, a screenful before the tests).
pip_log=.venv/pip-install.log

# pip_install SPEC [SED ARGUMENTS...]: `pip install -e SPEC`; the terminal gets only the lines that
# `sed -n SED ARGUMENTS` prints from pip's output (none without), and on failure one line naming
# pip's error and the log. Returns 0 when pip succeeded.
pip_install() {
    local spec=$1
    shift
    if .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off -e "$spec" 2>&1 |
        tee "$pip_log" | sed -un "${@:-}"; then
        return 0
    fi
    local error
    error="$(grep -E '^ERROR: ' "$pip_log" | tail -n 1 || true)"
    echo "The install of the project into .venv failed (${error:-pip exited with an error}); pip's log: $pip_log" >&2
    return 1
}
