# Sourced by every script that runs go in this module: Gateway API v1.7.0 needs Go 1.27, and a
# machine with an older Go fetches this toolchain from the Go module proxy (once, about 10 s).
# The Makefile and .ci/run name the same one; the environment overrides it.
export GOTOOLCHAIN="${GOTOOLCHAIN:-go1.27.3}"
