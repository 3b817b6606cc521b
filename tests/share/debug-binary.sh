# Sourced by the share tests' scripts (with REPO set): TLPARSE_BUILD is the debug build of this
# checkout, built now, unless TLPARSE_BUILD is set already. These tests time nothing, and a
# release build is a long compile.
BUILT="${CARGO_TARGET_DIR:-$REPO/target}/debug/tlparse-build"
export TLPARSE_BUILD="${TLPARSE_BUILD:-$BUILT}"
if [ "$TLPARSE_BUILD" = "$BUILT" ]; then
  (cd "$REPO" && cargo build --quiet)
fi
