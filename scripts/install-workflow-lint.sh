#!/usr/bin/env bash
# Installs the GitHub workflow linters, pinned, into the git-ignored venv .tools/workflow-lint/,
# where tests/packaging/workflows.rs looks: check-jsonschema (with its built-in schema of GitHub
# workflows) and zizmor (the security audits of GitHub Actions). Both run offline. Their
# dependencies are pinned too, as pip constraints (they apply only to what is installed, so a
# Python that needs fewer or other backports still resolves).
set -euo pipefail
cd "$(dirname "$0")/.."
dest=.tools/workflow-lint
tools=(check-jsonschema==0.39.0 zizmor==1.32.0)
constraints=(
    attrs==26.1.0
    certifi==2026.10.19.post1
    charset-normalizer==3.5.3
    click==8.5.1
    idna==3.20
    jsonschema==4.26.0
    jsonschema-specifications==2025.9.1
    referencing==0.37.0
    regress==2026.9.1
    requests==2.34.2
    rpds-py==2026.9.1
    ruamel.yaml==0.19.1
    typing_extensions==4.16.0
    urllib3==2.8.0
)
pins=$(printf '%s\n' "${tools[@]}" "${constraints[@]}")
stamp=$dest/installed-from.txt
if [ "$(cat "$stamp" 2>/dev/null)" = "$pins" ] \
    && [ -x "$dest/bin/check-jsonschema" ] && [ -x "$dest/bin/zizmor" ]; then
    echo "the workflow linters already installed in $dest"
    exit 0
fi
command -v python3 >/dev/null || { echo "installing the workflow linters: python3 (with venv) is needed" >&2; exit 1; }
python3 -m venv "$dest"
printf '%s\n' "${constraints[@]}" > "$dest/constraints.txt"
"$dest/bin/pip" install --quiet --disable-pip-version-check \
    --constraint "$dest/constraints.txt" "${tools[@]}"
printf '%s\n' "$pins" > "$stamp"
echo "$("$dest/bin/check-jsonschema" --version) and $("$dest/bin/zizmor" --version) in $dest"
