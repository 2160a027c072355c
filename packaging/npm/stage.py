#!/usr/bin/env python3
"""Lays out the npm packages for `npm pack`, with one version stamped into each.

Usage: packaging/npm/stage.py VERSION PLATFORM BINARY OUT

  VERSION   Cargo.toml's version (scripts/package reads it with cargo metadata)
  PLATFORM  the platform package to lay out, a key of packaging/names.json's platforms
            (linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64, win32-arm64)
  BINARY    the release binary for that platform (on Windows, cli-agent-mcp.exe)
  OUT       a fresh directory: OUT/main/ gets the main package, OUT/PLATFORM/ the platform's

The main package is packaging/npm/package.json with the names of packaging/names.json, the
version, and every platform package as an optional dependency pinned to exactly that version:
npm installs only the one whose os, cpu and libc match the machine, and the launcher
(bin/cli-agent-mcp.js) finds it. No install script anywhere.
"""

import json
import os
import shutil
import stat
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = json.loads((HERE.parent / "names.json").read_text())
OS_TITLES = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}


def binary_file(platform):
    """The binary's file name in a platform package: Windows runs only a name with .exe."""
    return NAMES["binary"] + (".exe" if platform["os"] == "win32" else "")


def common_fields(version):
    repository = NAMES["repository"]
    return {
        "version": version,
        "license": "MIT OR Apache-2.0",
        "repository": {"type": "git", "url": f"git+{repository}.git"},
        "homepage": f"{repository}#readme",
    }


def main_manifest(version):
    template = json.loads((HERE / "package.json").read_text())
    manifest = {"name": NAMES["npm"], **common_fields(version), "mcpName": NAMES["mcpName"]}
    manifest.update({key: value for key, value in template.items() if key not in manifest})
    manifest["optionalDependencies"] = {
        platform["package"]: version for platform in NAMES["platforms"].values()
    }
    return manifest


def platform_manifest(version, platform):
    title = OS_TITLES[platform["os"]]
    libc = f" ({platform['libc']})" if "libc" in platform else ""
    manifest = {
        "name": platform["package"],
        **common_fields(version),
        "description": f"The {NAMES['binary']} binary for {title} {platform['cpu']}{libc}; "
        f"installed by the {NAMES['npm']} package, which runs it",
        "os": [platform["os"]],
        "cpu": [platform["cpu"]],
    }
    if "libc" in platform:
        manifest["libc"] = [platform["libc"]]
    manifest["files"] = [f"bin/{binary_file(platform)}"]
    manifest["preferUnplugged"] = True
    return manifest


def write_manifest(directory, manifest):
    directory.mkdir(parents=True)
    (directory / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")


def stage_main(version, out):
    main = out / "main"
    write_manifest(main, main_manifest(version))
    (main / "bin").mkdir()
    launcher = main / "bin" / f"{NAMES['binary']}.js"
    shutil.copyfile(HERE / "bin" / f"{NAMES['binary']}.js", launcher)
    launcher.chmod(0o755)
    shutil.copyfile(HERE / "README.md", main / "README.md")


def stage_platform(version, key, binary, out):
    platform = NAMES["platforms"][key]
    directory = out / key
    write_manifest(directory, platform_manifest(version, platform))
    (directory / "bin").mkdir()
    target = directory / "bin" / binary_file(platform)
    shutil.copyfile(binary, target)
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (directory / "README.md").write_text(
        f"# {platform['package']}\n\nThe prebuilt `{NAMES['binary']}` for "
        f"{OS_TITLES[platform['os']]} {platform['cpu']}. Install `{NAMES['npm']}` instead "
        f"(`npx -y {NAMES['npm']}`): it depends on this package and runs the binary.\n"
    )


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    version, key, binary, out = argv[1], argv[2], Path(argv[3]), Path(argv[4])
    if key not in NAMES["platforms"]:
        known = ", ".join(NAMES["platforms"])
        print(f"stage.py: unknown platform {key!r} (known: {known})", file=sys.stderr)
        return 2
    if not os.access(binary, os.R_OK):
        print(f"stage.py: no binary at {binary}", file=sys.stderr)
        return 1
    if out.exists():
        shutil.rmtree(out)
    stage_main(version, out)
    stage_platform(version, key, binary, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
