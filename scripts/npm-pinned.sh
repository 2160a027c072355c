# Sourced by the install scripts: one way to install a pinned npm tree into a git-ignored folder
# of this checkout, never globally and nothing under the user's home: npm's cache and logs, and
# the headers node-gyp builds native modules against, go to .tools/npm/ too.
export npm_config_cache=$PWD/.tools/npm/cache npm_config_devdir=$PWD/.tools/npm/node-gyp
export npm_config_update_notifier=false

# with_scratch_home COMMAND... runs COMMAND with a throwaway home and XDG dirs, removed after, so
# that what it starts (the packages' install scripts, a CLI's --version) writes nothing under the
# user's; npm still reads the user's ~/.npmrc (a registry, a proxy).
with_scratch_home() {
    local scratch status=0
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/cam-install.XXXXXX")
    env npm_config_userconfig="${npm_config_userconfig:-$HOME/.npmrc}" HOME="$scratch" \
        XDG_CONFIG_HOME="$scratch/config" XDG_CACHE_HOME="$scratch/cache" \
        XDG_DATA_HOME="$scratch/data" XDG_STATE_HOME="$scratch/state" "$@" || status=$?
    rm -rf "$scratch"
    return "$status"
}

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
    with_scratch_home npm "$command" --prefix "$dest" --no-audit --no-fund --loglevel=error \
        || { echo "installing $what into $dest failed" >&2; exit 1; }
    if [ $# -gt 0 ]; then
        "$@" || { echo "finishing $what in $dest failed" >&2; exit 1; }
    fi
    cp "$pins/package-lock.json" "$stamp"
}
