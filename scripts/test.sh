#!/usr/bin/env bash
# Runs every test (unit, property-based, and the real jar as a process) after installing what
# they need when it is missing. README.md's test command; .ci/run calls it too.
set -euo pipefail
cd "$(dirname "$0")/.."

have() { command -v "$1" >/dev/null 2>&1; }

apt_install() {
  if have apt-get && [ "$(id -u)" = 0 ]; then
    echo "scripts/test.sh: installing $* with apt-get" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
  else
    echo "scripts/test.sh: the tests need $*; install it (apt-get as root can, here it cannot)" >&2
    exit 1
  fi
}

java_major() {
  java -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit}'
}

# What is missing is installed in one apt-get run (one package index update, not one per package).
missing=()
if ! have java || [ "$(java_major)" -lt 17 ]; then
  missing+=(openjdk-17-jdk-headless)
fi
have mvn || missing+=(maven)
have node && have npm || missing+=(nodejs npm)
# Projects give each thread a git worktree: the project tests run the real git program.
have git || missing+=(git)
# Agents run in a bubblewrap sandbox; the sandbox tests need it.
have bwrap || missing+=(bubblewrap)
# The launcher and cluster tests signal the gateway's JVMs (SIGINT, SIGSTOP, SIGCONT) with kill(1).
[ -x /usr/bin/kill ] || [ -x /bin/kill ] || missing+=(procps)
# The cluster fault suite darkens nodes' links with nft (nftables) and cuts them with ss -K
# (iproute2); both need root.
have ss || missing+=(iproute2)
have nft || missing+=(nftables)
# The web chat's browser tests drive Debian's Chromium through Debian's chromedriver.
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || missing+=(chromium chromium-driver)
# The jar tests make class-data archives with scripts/cds-archive.sh, which asks the page with curl.
have curl || missing+=(curl)
have unzip || missing+=(unzip)
if [ ${#missing[@]} -gt 0 ]; then
  if have mvn && have java && [ "$(java_major)" -ge 17 ]; then
    # Maven compiles while apt-get installs the rest: on a fresh machine Chromium's download is the
    # longest step before the tests. A failure of either stops here.
    apt_install "${missing[@]}" &
    installing=$!
    mvn -B -ntp -q test-compile || { wait "$installing" || true; exit 1; }
    wait "$installing"
  else
    apt_install "${missing[@]}"
  fi
fi

# The real ACP agents the tests drive (versions pinned in src/test/peers/package-lock.json).
peers=src/test/peers
if [ ! -f "$peers/node_modules/.package-lock.json" ] || ! cmp -s "$peers/package-lock.json" "$peers/.installed-lock"; then
  echo "scripts/test.sh: installing the npm test peers in $peers" >&2
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error) || {
    echo "scripts/test.sh: npm ci failed in $peers; the agent tests need those packages" >&2
    exit 1
  }
  cp "$peers/package-lock.json" "$peers/.installed-lock"
fi

# The page's pure modules (its reducer, its words, its keyed list) with Node's own test runner: no
# packages, and a failure stops here, before the long Maven run.
node --test src/test/js/

exec mvn -B -ntp verify "$@"
