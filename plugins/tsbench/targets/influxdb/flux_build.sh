# shellcheck shell=bash
# Sourced by install.sh (InfluxDB 1.9+) and install_v2.sh (after scripts/lib.sh): what building Flux's
# Rust library (libflux, which Flux's cgo package finds through `pkg-config flux`) needs.
#
# flux_build_env BUILD_DIR PKG_CONFIG_VERSION : installs gcc, libc6-dev and pkg-config (apt), InfluxData's
# pkg-config at PKG_CONFIG_VERSION (the version the server's go.mod requires: it builds libflux with
# cargo from crates.io and delegates to the system pkg-config) into BUILD_DIR/bin, and exports
# PKG_CONFIG, RUSTUP_TOOLCHAIN and RUSTC_WRAPPER. Flux pins an old Rust (rust-toolchain.toml) that is
# not installed: RUSTUP_TOOLCHAIN selects another (INFLUXDB_RUST_TOOLCHAIN, default stable), and the
# wrapper adds `--cap-lints warn`, so lints newer compilers added do not fail Flux's `deny(...)`.
# Needs go and rustup (~/.cargo/bin is added to PATH when cargo is missing); go_build_env first.
flux_build_env() {
    local build_dir="$1" pkg_config_version="$2"
    apt_install gcc libc6-dev pkg-config
    command -v cargo >/dev/null || PATH="$HOME/.cargo/bin:$PATH"
    command -v rustup >/dev/null || die "rustup is not on PATH (needed to build Flux's Rust library)"
    export RUSTUP_TOOLCHAIN="${INFLUXDB_RUST_TOOLCHAIN:-stable}"
    rustc --version >/dev/null || die "rust toolchain '$RUSTUP_TOOLCHAIN' is not usable (rustup)"
    mkdir -p "$build_dir/bin"
    cat >"$build_dir/rustc-wrap.sh" <<'WRAP'
#!/bin/sh
# RUSTC_WRAPPER: rustc "$@" with --cap-lints warn, unless cargo already caps lints.
rustc="$1"
shift
for arg in "$@"; do
    [ "$arg" = "--cap-lints" ] && exec "$rustc" "$@"
done
exec "$rustc" "$@" --cap-lints warn
WRAP
    chmod +x "$build_dir/rustc-wrap.sh"
    export RUSTC_WRAPPER="$build_dir/rustc-wrap.sh"
    GOBIN="$build_dir/bin" go install "github.com/influxdata/pkg-config@$pkg_config_version" ||
        die "go install github.com/influxdata/pkg-config@$pkg_config_version failed"
    export PKG_CONFIG="$build_dir/bin/pkg-config"
}
