# Sourced by the install scripts: one way to install a pinned npm tree into a git-ignored folder
# of this checkout, never globally.
#
# npm_pinned PINS DEST WHAT COMMAND [AFTER...] installs PINS/package.json with its lockfile into
# DEST by `npm COMMAND` (ci or install), then runs AFTER (a command finishing the tree), unless
# DEST was last installed from exactly that lockfile; then it says so and returns 1. A failed
# install or AFTER exits the calling script.
npm_pinned() {
    local pins=$1 dest=$2 what=$3 command=$4
    shift 4
    local stamp="$dest/installed-from.json"
    if cmp -s "$pins/package-lock.json" "$stamp" && [ -d "$dest/node_modules" ]; then
        echo "$what already installed in $dest"
        return 1
    fi
    command -v npm >/dev/null || { echo "installing $what: npm is needed (Node.js 20 or newer)" >&2; exit 1; }
    mkdir -p "$dest"
    rm -f "$stamp"
    cp "$pins/package.json" "$pins/package-lock.json" "$dest/"
    # Called as `npm_pinned … || exit 0`, where `set -e` does not act: a failed install must
    # stop here, not leave a stamp that says it succeeded.
    npm "$command" --prefix "$dest" --no-audit --no-fund --loglevel=error \
        || { echo "installing $what into $dest failed" >&2; exit 1; }
    if [ $# -gt 0 ]; then
        "$@" || { echo "finishing $what in $dest failed" >&2; exit 1; }
    fi
    cp "$pins/package-lock.json" "$stamp"
}
