#!/bin/sh
# meson install script of a build that must not be installed: says why.
echo "meson install: $1" >&2
exit 1
