# shellcheck shell=bash
# Part of scripts/lib.sh, which sources it: Debian's packages (protoc, Chromium) and Node's (npm ci, quiet runs).

# ---------------------------------------------------------------------------
# protoc (the Temporal SDK's protos crate needs it at build time)
# ---------------------------------------------------------------------------

# apt_install PACKAGE: install one Debian package (as root, or with sudo).
apt_install() {
    local package="$1" sudo=""
    if [[ $EUID -ne 0 ]]; then
        command -v sudo >/dev/null 2>&1 || die "$package is missing and we are not root: install it"
        sudo="sudo"
    fi
    log "installing Debian's $package"
    # `update` first: on a fresh machine the package lists are empty or stale.
    if [[ -z "${_ACP_APT_UPDATED:-}" ]]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq
        _ACP_APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$package" >/dev/null
}

# protoc and the well-known types it imports (google/protobuf/*.proto): the
# latter come with libprotobuf-dev, which protobuf-compiler only recommends.
ensure_protoc() {
    local wkt=/usr/include/google/protobuf/field_mask.proto
    command -v protoc >/dev/null 2>&1 && [[ -f $wkt ]] && return 0
    log "protoc or its well-known types not found"
    command -v protoc >/dev/null 2>&1 || apt_install protobuf-compiler
    [[ -f $wkt ]] || apt_install libprotobuf-dev
    command -v protoc >/dev/null 2>&1 || die "protoc still missing after installing protobuf-compiler"
    [[ -f $wkt ]] || die "$wkt still missing after installing libprotobuf-dev"
}

# Headless Chromium for the Swagger UI browser test: Debian's package, never a
# download by a test tool. Exports ACP_CHROMIUM.
ensure_chromium() {
    local bin
    bin="$(command -v chromium || true)"
    if [[ -z "$bin" ]]; then
        log "chromium not found"
        apt_install chromium
        bin="$(command -v chromium || true)"
        [[ -n "$bin" ]] || die "chromium still missing after installing it"
    fi
    export ACP_CHROMIUM="$bin"
}


# ---------------------------------------------------------------------------
# Node packages (clients/typescript, console): npm ci from a lockfile, and
# tools whose warnings fail the run
# ---------------------------------------------------------------------------

# A line of tool output that is a warning or an error (npm's "npm warn",
# openapi-typescript's ⚠ and ✘, tsc's "error TS", vite's warnings).
NODE_WARNING_RE='(⚠|✘|\bwarn(ing)?\b|\berror\b|\bdeprecated\b)'

# run_quiet WHAT CMD...: run CMD, echoing its output; fail if it fails or if
# any line of its output is a warning.
run_quiet() {
    local what="$1" out rc=0
    shift
    out="$("$@" 2>&1)" || rc=$?
    if [[ -n "$out" ]]; then
        printf '%s\n' "$out" | sed "s/^/  [$what] /" >&2
    fi
    ((rc == 0)) || die "$what failed (exit $rc)"
    if printf '%s\n' "$out" | grep -qiE "$NODE_WARNING_RE"; then
        die "$what printed warnings (treated as failures): $(printf '%s\n' "$out" | grep -iE "$NODE_WARNING_RE" | head -n 5)"
    fi
}

require_node() {
    command -v node >/dev/null 2>&1 || die "node not found (Node 20 or newer is needed)"
    command -v npm >/dev/null 2>&1 || die "npm not found"
    local major
    major="$(node -p 'process.versions.node.split(".")[0]')"
    ((major >= 20)) || die "Node $(node --version) is too old: 20 or newer is needed"
}

# npm_ci_in DIR [always]: install DIR/node_modules from DIR's lockfile when it
# is missing or was installed from another lockfile (or always). No install
# scripts: none of the pinned packages needs one, and playwright-core must
# not fetch a browser.
npm_ci_in() {
    local dir="$1" stamp="$1/node_modules/.acp-lock-digest" digest
    require_node
    digest="$(sha256sum "$dir/package-lock.json" "$dir/package.json" | sha256sum | cut -d' ' -f1)"
    if [[ "${2:-}" != always && -f "$stamp" && "$(cat "$stamp")" == "$digest" ]]; then
        return 0
    fi
    log "npm ci in ${dir#"$ACP_ROOT"/} ($(node --version), npm $(npm --version))"
    run_quiet "npm ci" npm ci --prefix "$dir" --no-audit --no-fund --ignore-scripts
    printf '%s\n' "$digest" >"$stamp"
}
