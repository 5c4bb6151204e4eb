#!/usr/bin/env bash
# Installs cropwalk as a systemd service on Debian, Ubuntu or a Jetson (Ubuntu), or upgrades it
# in place: run it again from a newer copy of the project. docs/appliance.md explains each step.
#
#   sudo scripts/install.sh                 install or upgrade, start, print where the admin token is
#   sudo scripts/install.sh --uninstall     stop and remove the service and program; keep the data
#   sudo scripts/install.sh --uninstall --purge   ... and remove the data, settings and user too
#
# Options: --prefix DIR (program, default /opt/cropwalk), --no-start (install, do not start),
# --node-modules-from DIR (copy a prepared node_modules instead of `npm ci`, for a box offline).
# DESTDIR=/some/root writes everything under that root instead of / (a staging root or a test):
# then nothing is started, and the user is made in DESTDIR/etc/passwd when that file exists.
set -euo pipefail

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX=/opt/cropwalk
START=1
UNINSTALL=0
PURGE=0
MODULES_FROM=""
DESTDIR="${DESTDIR:-}"
DESTDIR="${DESTDIR%/}"
NODE_MIN="20.12"

say() { printf '[install] %s\n' "$*"; }
die() { printf '[install] error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) PREFIX="${2:?--prefix needs a folder}"; shift 2 ;;
    --no-start) START=0; shift ;;
    --uninstall) UNINSTALL=1; shift ;;
    --purge) PURGE=1; shift ;;
    --node-modules-from) MODULES_FROM="${2:?--node-modules-from needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done
case "$PREFIX" in /*) ;; *) die "--prefix must be an absolute path" ;; esac
[ "$PURGE" = 1 ] && [ "$UNINSTALL" = 0 ] && die "--purge goes with --uninstall"

ROOT="$DESTDIR"
DATA="/var/lib/cropwalk"
ETC="/etc/cropwalk"
ENVFILE="$ETC/cropwalk.env"
UNIT="/etc/systemd/system/cropwalk.service"
DROPIN="/etc/systemd/system/cropwalk.service.d"
BIN="/usr/local/bin/cropwalk"
USER_NAME=cropwalk

# SYSTEMD_LIVE: systemd runs this box, so a running service is stopped before its program is
# replaced (with --no-start too); START_SYSTEMD: and it is started again at the end.
if [ -z "$DESTDIR" ]; then
  [ "$(id -u)" = 0 ] || die "run it as root: sudo $0 $*"
  SYSTEMD_LIVE=1
  [ -d /run/systemd/system ] || { say "systemd is not running here: the service is installed but not started"; SYSTEMD_LIVE=0; }
else
  SYSTEMD_LIVE=0
  say "installing under DESTDIR=$DESTDIR (nothing is started)"
fi
START_SYSTEMD=$SYSTEMD_LIVE
[ "$START" = 1 ] || START_SYSTEMD=0

have_user() {
  if [ -n "$DESTDIR" ]; then grep -q "^$USER_NAME:" "$ROOT/etc/passwd" 2>/dev/null; else getent passwd "$USER_NAME" >/dev/null; fi
}

# ---------------------------------------------------------------- uninstall
if [ "$UNINSTALL" = 1 ]; then
  if [ "$SYSTEMD_LIVE" = 1 ]; then
    systemctl disable --now cropwalk.service 2>/dev/null || true
  elif command -v systemctl >/dev/null; then
    systemctl --root="${ROOT:-/}" disable cropwalk.service 2>/dev/null || true
  fi
  rm -f "$ROOT$UNIT" "$ROOT$BIN"
  rm -rf "$ROOT$DROPIN" "$ROOT$PREFIX"
  [ "$SYSTEMD_LIVE" = 1 ] && systemctl daemon-reload
  if [ "$PURGE" = 1 ]; then
    rm -rf "$ROOT$DATA" "$ROOT$ETC"
    if have_user; then
      if [ -n "$DESTDIR" ]; then userdel --root "$ROOT" "$USER_NAME" || true; else userdel "$USER_NAME" || true; fi
    fi
    say "removed cropwalk, its data ($DATA), its settings ($ETC) and the user $USER_NAME"
  else
    say "removed the cropwalk program and service; kept the data in $DATA and the settings in $ETC"
    say "(sudo $0 --uninstall --purge removes them too; back up first: cropwalk backup)"
  fi
  exit 0
fi

# ---------------------------------------------------------------- what the box needs
if [ -r /etc/os-release ]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  case " ${ID:-} ${ID_LIKE:-} " in
    *" debian "*|*" ubuntu "*) ;;
    *) say "this is ${PRETTY_NAME:-an unknown system}, not Debian or Ubuntu: going on, but packages must be installed by hand" ;;
  esac
fi
JETSON=0
[ -e "$ROOT/etc/nv_tegra_release" ] && JETSON=1

node_ok() {
  command -v node >/dev/null || return 1
  node -e "const [a,b]=process.versions.node.split('.').map(Number); const [x,y]='$NODE_MIN'.split('.').map(Number); process.exit(a>x||(a===x&&b>=y)?0:1)"
}
apt_install() {
  [ -z "$DESTDIR" ] || { say "DESTDIR set: not installing the packages $* (install them in the target)"; return 0; }
  command -v apt-get >/dev/null || die "apt-get is missing: install $* by hand"
  say "installing the packages: $*"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

if ! node_ok; then
  candidate="$(apt-cache policy nodejs 2>/dev/null | sed -n 's/^ *Candidate: *\([0-9]*\.[0-9]*\).*/\1/p')"
  if [ -n "$candidate" ] && [ "$(printf '%s\n%s\n' "$NODE_MIN" "$candidate" | sort -V | head -1)" = "$NODE_MIN" ]; then
    apt_install nodejs npm
  fi
  node_ok || die "cropwalk needs Node.js $NODE_MIN or newer, and this system's packages do not have it (Debian 13 does; on Debian 12, Ubuntu or a Jetson install Node.js 20 or 22 from the Node.js project's packages first), then run this again"
fi
NODE="$(command -v node)"
missing=()
command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || missing+=(ffmpeg)
command -v npm >/dev/null || missing+=(npm)
[ -z "$MODULES_FROM" ] && ! command -v g++ >/dev/null && missing+=(build-essential python3)
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# ---------------------------------------------------------------- user and folders
if ! have_user; then
  if [ -n "$DESTDIR" ]; then
    if [ -f "$ROOT/etc/passwd" ]; then
      useradd --root "$ROOT" --system --user-group --home-dir "$DATA" --no-create-home --shell /usr/sbin/nologin "$USER_NAME"
    else
      say "no $ROOT/etc/passwd: the user $USER_NAME is left to the target system"
    fi
  else
    say "creating the system user $USER_NAME"
    useradd --system --user-group --home-dir "$DATA" --no-create-home --shell /usr/sbin/nologin "$USER_NAME"
  fi
fi
# Serial scales are in the group dialout (the unit adds it as a supplementary group).
if [ -z "$DESTDIR" ] && getent group dialout >/dev/null; then usermod -a -G dialout "$USER_NAME"; fi

owner() {
  # chown by name where the user exists in the target, else leave root's.
  if have_user; then
    if [ -n "$DESTDIR" ]; then
      local uid gid
      uid="$(awk -F: -v u="$USER_NAME" '$1==u{print $3}' "$ROOT/etc/passwd")"
      gid="$(awk -F: -v u="$USER_NAME" '$1==u{print $4}' "$ROOT/etc/passwd")"
      chown "$1" "$uid:$gid" "${@:2}" 2>/dev/null || chown "$uid:$gid" "${@:2}"
    else
      chown "$1" "$USER_NAME:$USER_NAME" "${@:2}" 2>/dev/null || chown "$USER_NAME:$USER_NAME" "${@:2}"
    fi
  fi
}

install -d -m 0750 "$ROOT$DATA"
owner -h "$ROOT$DATA"
install -d -m 0750 "$ROOT$ETC"
if have_user; then
  if [ -n "$DESTDIR" ]; then chgrp "$(awk -F: -v u="$USER_NAME" '$1==u{print $4}' "$ROOT/etc/passwd")" "$ROOT$ETC"; else chgrp "$USER_NAME" "$ROOT$ETC"; fi
fi
if [ ! -e "$ROOT$ENVFILE" ]; then
  say "writing the settings file $ENVFILE (mode 0640)"
  install -m 0640 /dev/null "$ROOT$ENVFILE"
  cat >"$ROOT$ENVFILE" <<'EOF'
# cropwalk settings: KEY=value, one a line; `sudo systemctl restart cropwalk` after a change.
# Every setting and its default: docs/appliance.md. The admin token is made on first start and
# kept in /var/lib/cropwalk/admin-token unless ADMIN_TOKEN is set here.
PORT=8080
# SCHEDULE_TIME_ZONE=Europe/Amsterdam
# SCHEDULE_BACKUP=15 3 * * *
# BACKUP_DIR=/media/cropwalk-backup
# BACKUP_KEEP=14
# SCALE_PORT=/dev/ttyUSB0
# SCALE_BAUD=9600
# SCALE_FRAMING=8N1
# UPSTREAM_URL=
# UPSTREAM_KEY=
# CLIMATE_WATCH_DIR=
LOG_LEVEL=info
EOF
else
  say "keeping the settings in $ENVFILE"
fi
chmod 0640 "$ROOT$ENVFILE"
if have_user; then
  if [ -n "$DESTDIR" ]; then chgrp "$(awk -F: -v u="$USER_NAME" '$1==u{print $4}' "$ROOT/etc/passwd")" "$ROOT$ENVFILE"; else chgrp "$USER_NAME" "$ROOT$ENVFILE"; fi
fi

# ---------------------------------------------------------------- the program
UPGRADE=0
[ -e "$ROOT$PREFIX/package.json" ] && UPGRADE=1
WAS_RUNNING=0
if [ "$SYSTEMD_LIVE" = 1 ] && systemctl is-active --quiet cropwalk.service; then
  say "stopping the running service for the upgrade"
  systemctl stop cropwalk.service
  WAS_RUNNING=1
fi
say "copying the program to $PREFIX"
install -d -m 0755 "$ROOT$PREFIX"
# The project's files, not its data, its modules or its history; files gone from the new version go.
rm -rf "$ROOT$PREFIX.new.$$"
install -d -m 0755 "$ROOT$PREFIX.new.$$"
tar -C "$SRC" --exclude=./node_modules --exclude=./data --exclude=./.git --exclude=./.tap -cf - . | tar -C "$ROOT$PREFIX.new.$$" -xf -
if [ -d "$ROOT$PREFIX/node_modules" ]; then mv "$ROOT$PREFIX/node_modules" "$ROOT$PREFIX.new.$$/node_modules"; fi
rm -rf "$ROOT$PREFIX"
mv "$ROOT$PREFIX.new.$$" "$ROOT$PREFIX"
chown -R root:root "$ROOT$PREFIX" 2>/dev/null || true

lock="$ROOT$PREFIX/package-lock.json"
marker="$ROOT$PREFIX/node_modules/.package-lock.json"
if [ -n "$MODULES_FROM" ]; then
  [ -f "$MODULES_FROM/.package-lock.json" ] || die "$MODULES_FROM is not a node_modules folder made by npm"
  say "copying node modules from $MODULES_FROM"
  rm -rf "$ROOT$PREFIX/node_modules"
  cp -al "$MODULES_FROM" "$ROOT$PREFIX/node_modules" 2>/dev/null || cp -a "$MODULES_FROM" "$ROOT$PREFIX/node_modules"
elif [ ! -f "$marker" ] || ! cmp -s <(node -e "console.log(JSON.stringify(require('$lock').packages))") \
                                   <(node -e "console.log(JSON.stringify(require('$marker').packages))" 2>/dev/null); then
  say "installing node modules (npm ci; better-sqlite3 may build from source, a few minutes)"
  (cd "$ROOT$PREFIX" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --omit=dev --no-audit --no-fund)
else
  say "node modules are up to date"
fi
# The staff app served at / (web/dist, git-ignored) is built here: the service runs main.ts, not
# setup.mjs, and cannot write under the program (ProtectSystem=strict).
if ! (cd "$ROOT$PREFIX" && "$NODE" scripts/build-web.mjs); then
  say "warning: the staff app did not build: the API runs, and / answers that the app is not built"
fi
chown -R root:root "$ROOT$PREFIX/web" 2>/dev/null || true

# ---------------------------------------------------------------- the service
say "installing the systemd unit $UNIT"
install -d -m 0755 "$ROOT/etc/systemd/system"
sed -e "s#/opt/cropwalk#$PREFIX#g" -e "s#^ExecStart=/usr/bin/node #ExecStart=$NODE #" "$SRC/systemd/cropwalk.service" >"$ROOT$UNIT"
chmod 0644 "$ROOT$UNIT"
if [ "$JETSON" = 1 ]; then
  # The Jetson's GPU (for an ONNX detector on CUDA) is a set of devices the unit's closed device list does not name.
  say "Jetson: letting the service reach the GPU devices"
  install -d -m 0755 "$ROOT$DROPIN"
  printf '[Service]\nDevicePolicy=auto\nSupplementaryGroups=video render\n' >"$ROOT$DROPIN/jetson.conf"
fi

say "installing the command $BIN"
install -d -m 0755 "$ROOT/usr/local/bin"
cat >"$ROOT$BIN" <<EOF
#!/bin/sh
# cropwalk backup | backups | restore FILE: run as the service's user, with the service's settings.
set -a
[ -r $ENVFILE ] && . $ENVFILE
DATA_DIR=$DATA
set +a
if [ "\$(id -u)" = 0 ]; then exec runuser -u $USER_NAME -- $NODE $PREFIX/scripts/cropwalk.mjs "\$@"; fi
exec $NODE $PREFIX/scripts/cropwalk.mjs "\$@"
EOF
chmod 0755 "$ROOT$BIN"

if [ -n "$DESTDIR" ]; then
  systemctl --root="$ROOT" enable cropwalk.service >/dev/null 2>&1 || {
    install -d "$ROOT/etc/systemd/system/multi-user.target.wants"
    ln -sf "$UNIT" "$ROOT/etc/systemd/system/multi-user.target.wants/cropwalk.service"
  }
elif [ "$SYSTEMD_LIVE" = 1 ]; then
  systemctl daemon-reload
  systemctl enable cropwalk.service >/dev/null
else
  systemctl enable cropwalk.service >/dev/null 2>&1 || true
fi

if [ "$START_SYSTEMD" = 1 ]; then
  say "starting cropwalk"
  systemctl restart cropwalk.service
  port="$(sed -n 's/^PORT=\([0-9]*\).*/\1/p' "$ENVFILE" | tail -1)"
  port="${port:-8080}"
  for _ in $(seq 1 60); do
    if node -e "fetch('http://127.0.0.1:$port/api/health').then(r=>process.exit(r.status<500?0:1),()=>process.exit(1))"; then break; fi
    sleep 1
  done
  systemctl is-active --quiet cropwalk.service || die "the service did not start: journalctl -u cropwalk -n 50"
  say "cropwalk is running on port $port (http://$(hostname -I 2>/dev/null | awk '{print $1}'):$port/api/docs)"
elif [ "$SYSTEMD_LIVE" = 1 ]; then
  [ "$WAS_RUNNING" = 1 ] && say "the service was running before the upgrade and is stopped now"
  say "not started (--no-start): sudo systemctl start cropwalk starts it (it is enabled, so it starts at boot)"
fi

[ "$UPGRADE" = 1 ] && say "upgraded in place: the data in $DATA is kept, migrations run at start"
if grep -q '^ADMIN_TOKEN=.' "$ROOT$ENVFILE"; then
  say "the admin token is the ADMIN_TOKEN in $ENVFILE (sudo grep ADMIN_TOKEN $ENVFILE)"
else
  say "the admin token is in $DATA/admin-token, made at first start (sudo cat $DATA/admin-token)"
fi
say "backups: nightly into $DATA/backups (cropwalk backup makes one now); schedules: GET /api/schedules"
