#!/usr/bin/env bash
# lab.sh - confvault's device lab: real FRRouting, BIRD and Linux CLIs behind OpenSSH and Telnet, one network namespace per device.
#
#   test/lab/lab.sh up             install missing packages, tear down whatever is left, start fresh
#   test/lab/lab.sh ensure         keep a healthy lab as it is, otherwise "up" (what the tests call)
#   test/lab/lab.sh down           stop everything, remove namespaces, bridge and /tmp/confvault-lab
#   test/lab/lab.sh status         devices and logins; exit status 0 only when every device is healthy
#   test/lab/lab.sh rekey DEVICE   new SSH host keys for DEVICE, its sshd restarted
#   test/lab/lab.sh packages [PKG] only install the missing Debian packages (the OpenLDAP test needs slapd)
#
# One device, r1 for example (paths under /tmp/confvault-lab):
#   network namespace cvlab-r1   eth0 on bridge cvlab0 (10.201.0.0/24); r1 and r2 also share a /30 on eth1
#   anchor (bin/device-init)     PID 1 of r1's own PID, mount and UTS namespaces: hostname r1-lab, and
#                                  /etc      overlay on the host's /etc, writes land in dev/r1/etc
#                                            (seeded from test/lab/etc/r1/ and generated files)
#                                  /run      dev/r1/run    (pid files, FRR and BIRD sockets, sshd privsep dir)
#                                  /var/log  dev/r1/log
#                                  /home     dev/r1/home
#   services                     started with nsenter into those namespaces: FRR (watchfrr), BIRD,
#                                sshd on <lan-ip>:22, xinetd + telnetd on <lan-ip>:23
#   loopback forwards            socat on 127.0.0.1:<port> -> <lan-ip>:22 or :23, in the root namespace
# Users exist only in the devices' /etc; the host's accounts are not touched. Nothing is routed off
# the machine: the namespaces have no default route and ip_forward is left alone.
set -euo pipefail
shopt -s nullglob

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LAB=/tmp/confvault-lab
LOCK=/tmp/confvault-lab.lock          # outside $LAB: "down" removes $LAB while others may wait on the lock
TESTS_LOCK=/tmp/confvault-lab-tests.lock   # held by the test file using the lab (acquireLabLock in lab.ts)
APT_LOCK=/tmp/confvault-apt.lock      # one apt-get at a time among the suite's installers (also test/helpers/browser.ts)
BRIDGE=cvlab0
BRIDGE_IP=10.201.0.1/24
LAB_NET_PREFIX=10.201.0.              # forwards into it are ours (used to recognise leftovers)
# slapd and ldap-utils: the OpenLDAP directory of test/web/ldap.test.ts (test/helpers/slapd.ts runs `lab.sh packages`).
PKGS=(frr openssh-server bird2 xinetd inetutils-telnetd socat iproute2 util-linux procps rsyslog slapd ldap-utils)
# Where the FRR devices' rsyslog forwards every message (RFC 5424, TCP, octet counting): the appliance's
# [events] syslog_listen in test/lab/events-lab.test.ts. Reachable from every device over the bridge.
LAB_SYSLOG_HOST=10.201.0.1
LAB_SYSLOG_PORT=5514

# name   kind   lan-ip       hostname    ssh   telnet
DEVICES=(
  "r1     frr    10.201.0.11  r1-lab      2422  2522"
  "r2     frr    10.201.0.12  r2-lab      2423  2523"
  "bird1  bird   10.201.0.13  bird1-lab   2424  -"
  "srv1   linux  10.201.0.14  srv1-lab    2425  -"
)

# account <kind>: "user password shell extra-groups" of the one login on devices of that kind
account() {
  case $1 in
    frr)   echo "netops   netops123   /usr/bin/vtysh     frr,frrvty" ;;
    bird)  echo "birdops  birdops123  $LAB/bin/birdsh   bird" ;;
    linux) echo "linuxops linuxops123 /bin/bash          -" ;;
  esac
}

T0=${EPOCHREALTIME/./}
log() { local ms=$(( (${EPOCHREALTIME/./} - T0) / 1000 )); printf '[lab %3d.%02ds] %s\n' $((ms / 1000)) $((ms % 1000 / 10)) "$*"; }
die() { echo "lab.sh: $*" >&2; exit 1; }

# Descriptors inherited from the caller would be inherited in turn by the daemons and outlive this
# script (a test runner's pipe would then never reach EOF). Keep stdio and bash's own script fd (255).
for fd in /proc/$$/fd/*; do
  fd=${fd##*/}
  case $fd in 0 | 1 | 2 | 255) ;; *) eval "exec $fd>&-" 2>/dev/null || true ;; esac
done
cd /

# ------------------------------------------------------------------------------------------ helpers
# Serialise up/ensure/down/rekey across processes. Every process started while the lock is held
# gets "9>&-": a daemon holding fd 9 would hold the lock for ever.
take_lock() { exec 9>>"$LOCK"; flock -w 900 9 || die "timed out waiting for $LOCK"; }
# "up" and "down" by hand or from test/run.sh wait until no test file (of this or another run) uses the lab.
# A test file that holds the tests lock itself and stops the lab says so, or it would wait for itself.
# "down" keeps the lock until it is done (it starts no daemon); "up" lets it go at once, as its daemons
# would inherit the descriptor and hold the lock for ever.
wait_for_tests() { # wait_for_tests keep|release
  [ "${CONFVAULT_LAB_TESTS_LOCK_HELD:-}" = 1 ] && return 0
  exec 8>>"$TESTS_LOCK"
  flock -w 900 8 || die "a test file still uses the lab ($(cat "$TESTS_LOCK" 2>/dev/null || true)); not stopping it"
  [ "$1" = keep ] || exec 8>&-
}

find_device() { # find_device <name>: prints the device's table line
  local l
  for l in "${DEVICES[@]}"; do [ "${l%% *}" = "$1" ] && { echo "$l"; return 0; }; done
  return 1
}

alive() { local s; s=$(ps -o stat= -p "$1" 2>/dev/null) && [ -n "$s" ] && [ "${s:0:1}" != Z ]; }   # zombies are dead: PID 1 here does not reap

anchor_pid() { # anchor_pid <name>: the device's PID 1 as the host sees it, when it is running
  local f=$LAB/dev/$1/anchor.pid p
  # a pid file that outlived its lab (no reboot cleanup of /tmp) may name someone else's process
  [ -s "$f" ] && p=$(<"$f") && alive "$p" && grep -qF "$LAB/bin/device-init" "/proc/$p/cmdline" 2>/dev/null && echo "$p"
}

in_device() { # in_device <name> cmd...: run inside the device's network, mount, UTS and PID namespaces
  local d=$1 pid; shift
  pid=$(anchor_pid "$d") || die "device $d is not running"
  nsenter -t "$pid" -n -m -u -p -- "$@" 9>&-
}

ssh_banner_ok() { # 127.0.0.1:<port> greets with an SSH identification string
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && head -c 8 <&3' "$1" 2>/dev/null | grep -q '^SSH-2.0-'
}
telnet_ok() { # 127.0.0.1:<port> opens with telnet option negotiation (IAC = 0xff)
  [ "$(timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && head -c 1 <&3' "$1" 2>/dev/null | od -An -tx1 | tr -d ' ')" = ff ]
}

# ------------------------------------------------------------------------------------------ packages
install_packages() { # install_packages [PKG...]: the missing ones of those named, or of PKGS
  local missing=() p own_policy=0 rc=0 want=("$@")
  [ ${#want[@]} = 0 ] && want=("${PKGS[@]}")
  for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  log "installing ${missing[*]}"
  # Exit 101 = "action forbidden": the postinst scripts must not start sshd, frr, bird or xinetd on the host.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own_policy=1
  fi
  # One apt at a time among the suite's installers (test/helpers/browser.ts takes the same lock for chromium): two
  # test files that each found a package missing on a bare machine ran apt-get at once, and the second one failed on
  # dpkg's lock. DPkg::Lock::Timeout waits for any other apt on the host (unattended upgrades).
  (
    flock -w 1800 7 || { echo "timed out waiting for $APT_LOCK"; exit 1; }
    apt-get -o DPkg::Lock::Timeout=600 update -qq &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}"
  ) 7>>"$APT_LOCK" >"$LAB/apt.log" 2>&1 || rc=$?
  [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || { tail -n 30 "$LAB/apt.log"; die "apt-get failed (exit $rc)"; }
}

# ------------------------------------------------------------------------------------------ tear down
netns_pids() { local ns; for ns; do ip netns pids "$ns" 2>/dev/null || true; done; }

stop_forwards() { # the socat listening on one of our loopback ports and forwarding into the lab net
  local l port pid child
  for l in "${DEVICES[@]}"; do
    set -- $l
    for port in "$5" "$6"; do
      [ "$port" = - ] && continue
      for pid in $(ss -Hltnp "sport = :$port" 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do
        tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "^socat .*TCP:$LAB_NET_PREFIX" || continue
        for child in $(ps -o pid= --ppid "$pid"); do kill "$child" 2>/dev/null || true; done
        kill "$pid" 2>/dev/null || true
      done
    done
  done
}

down() {
  local nss ns pids l p i
  stop_forwards
  # An anchor's end takes its whole device with it (PID namespace); then whatever else is left in our
  # network namespaces (all of it started by the lab) gets TERM and, after 3 s, KILL.
  for l in "${DEVICES[@]}"; do p=$(anchor_pid "${l%% *}") && kill -TERM "$p" 2>/dev/null || true; done
  nss=$(ip netns list | awk '$1 ~ /^cvlab-/ { print $1 }')
  for i in $(seq 10); do [ -z "$(netns_pids $nss)" ] && break; sleep 0.05; done
  pids=$(netns_pids $nss)
  if [ -n "$pids" ]; then
    kill -TERM $pids 2>/dev/null || true
    for i in $(seq 30); do pids=$(netns_pids $nss); [ -z "$pids" ] && break; sleep 0.1; done
    if [ -n "$pids" ]; then
      kill -KILL $pids 2>/dev/null || true
      for i in $(seq 20); do [ -z "$(netns_pids $nss)" ] && break; sleep 0.1; done
    fi
  fi
  for ns in $nss; do ip netns del "$ns" 2>/dev/null || true; done   # takes the veth pairs with it
  ip link del "$BRIDGE" 2>/dev/null || true
  [ "$(readlink /dev/log 2>/dev/null)" = /run/devlog ] && rm -f /dev/log
  # The overlays and bind mounts lived only in the anchors' mount namespaces, gone with their last process.
  rm -rf "$LAB"
}

# ------------------------------------------------------------------------------------------ seed files
# seed_etc <name> <kind> <lan-ip> <hostname>: the device's /etc files, in lab-etc.sh
# shellcheck source=lab-etc.sh
source "$HERE/lab-etc.sh"

# ------------------------------------------------------------------------------------------ bring up
make_lab_keys() {
  mkdir -p "$LAB/keys"
  ssh-keygen -q -t ed25519 -N '' -C confvault-lab -f "$LAB/keys/lab_ed25519"
  ssh-keygen -q -t ed25519 -N labpass -C confvault-lab-passphrase -f "$LAB/keys/lab_ed25519_enc"
  cat "$LAB/keys/lab_ed25519.pub" "$LAB/keys/lab_ed25519_enc.pub" >"$LAB/keys/authorized_keys"
}

make_network() {
  local l
  ip link add "$BRIDGE" type bridge
  ip addr add "$BRIDGE_IP" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  for l in "${DEVICES[@]}"; do
    set -- $l
    ip netns add "cvlab-$1"
    ip link add "cvlab-$1" type veth peer name "cvlab-$1-n"
    ip link set "cvlab-$1-n" netns "cvlab-$1"
    ip -n "cvlab-$1" link set "cvlab-$1-n" name eth0
    ip -n "cvlab-$1" addr add "$3/24" dev eth0
    ip -n "cvlab-$1" link set lo up
    ip -n "cvlab-$1" link set eth0 up
    ip link set "cvlab-$1" master "$BRIDGE" up
  done
  # r1 eth1 <-> r2 eth1: a point-to-point link; FRR sets its addresses (they are part of the config)
  ip link add cvlab-r1r2 type veth peer name cvlab-r2r1
  ip link set cvlab-r1r2 netns cvlab-r1
  ip link set cvlab-r2r1 netns cvlab-r2
  ip -n cvlab-r1 link set cvlab-r1r2 name eth1 up
  ip -n cvlab-r2 link set cvlab-r2r1 name eth1 up
}

start_anchor() { # start_anchor <name> <hostname>
  # The anchor is PID 1 of the device's own PID namespace: daemons that detach are adopted and reaped
  # by it (not by the host's PID 1, which may reap nothing), "ps" on a device shows that device only,
  # and when the anchor ends the kernel kills everything left in the device.
  local D=$LAB/dev/$1 i
  setsid -f ip netns exec "cvlab-$1" unshare --mount --uts --pid --fork --propagation private \
    "$LAB/bin/device-init" "$2" "$D" </dev/null >"$D/anchor.log" 2>&1 9>&-
  for i in $(seq 100); do anchor_pid "$1" >/dev/null && return 0; sleep 0.05; done
  cat "$D/anchor.log" >&2
  die "$1: anchor process did not start"
}

create_account() { # create_account <name> <kind>: the device's login, with password and both lab keys
  local user pass shell groups
  read -r user pass shell groups <<<"$(account "$2")"
  in_device "$1" bash -c '
      set -e
      u=$1 pass=$2 shell=$3 groups=$4 keys=$5
      # the user may already exist on the host (and so in the lower /etc): then only adjust it
      if id "$u" >/dev/null 2>&1; then usermod -s "$shell" -d "/home/$u" "$u"; else useradd -s "$shell" -d "/home/$u" "$u"; fi
      [ "$groups" = - ] || usermod -aG "$groups" "$u"
      echo "$u:$pass" | chpasswd
      mkdir -p "/home/$u/.ssh"
      cp -rT /etc/skel "/home/$u"
      cp "$keys" "/home/$u/.ssh/authorized_keys"
      touch "/home/$u/.hushlogin"
      chown -R "$u:" "/home/$u"
      chmod 700 "/home/$u/.ssh"' create-account "$user" "$pass" "$shell" "$groups" "$LAB/keys/authorized_keys"
}

make_host_keys() { # make_host_keys <name> <hostname>: written through the running device's overlay, as "rekey" needs
  in_device "$1" bash -c '
      set -e
      rm -f /etc/ssh/ssh_host_*
      ssh-keygen -q -t ed25519 -N "" -C "root@$0" -f /etc/ssh/ssh_host_ed25519_key
      ssh-keygen -q -t ecdsa -N "" -C "root@$0" -f /etc/ssh/ssh_host_ecdsa_key
      ssh-keygen -q -t rsa -b 2048 -N "" -C "root@$0" -f /etc/ssh/ssh_host_rsa_key' "$2"
}

start_sshd() { in_device "$1" /usr/sbin/sshd -E /var/log/sshd.log; }

start_device() { # start_device <name> <kind> <lan-ip> <hostname>
  local d=$1 kind=$2 D=$LAB/dev/$1 i
  log "$d: starting ($kind, $4, $3)"
  mkdir -p "$D/etc" "$D/work" "$D/run/sshd" "$D/log" "$D/home"
  seed_etc "$@"
  case $kind in
    frr)
      install -d -o frr -g frr -m 0755 "$D/run/frr"
      install -d -o frr -g frr -m 0750 "$D/log/frr" ;;
    bird)
      install -d -o bird -g bird -m 0775 "$D/run/bird"
      install -d -o bird -g bird -m 0750 "$D/log/bird" ;;
  esac
  start_anchor "$d" "$4"
  create_account "$d" "$kind"
  make_host_keys "$d" "$4"
  case $kind in
    frr)
      # A line FRR rejects would be dropped silently and make watchfrr wait ~5 s: check the seed first.
      in_device "$d" vtysh --dryrun --inputfile /etc/frr/frr.conf || die "$d: FRR rejects the seeded frr.conf"
      # watchfrr starts zebra, bgpd and staticd, then vtysh -b loads the integrated frr.conf
      in_device "$d" /usr/lib/frr/frrinit.sh start >"$D/log/frrinit.log" 2>&1 \
        || { cat "$D/log/frrinit.log"; die "$d: FRR did not start"; }
      in_device "$d" /usr/sbin/xinetd -pidfile /run/xinetd.pid
      start_rsyslog "$d" ;;
    bird)
      in_device "$d" /usr/sbin/bird -u bird -g bird -c /etc/bird/bird.conf -P /run/bird/bird.pid
      for i in $(seq 50); do [ -S "$D/run/bird/bird.ctl" ] && break; sleep 0.1; done ;;
  esac
  start_sshd "$d"
  log "$d: started"
}

# A real syslog daemon in the device: FRR's `log syslog` goes to /dev/log, which is a symlink to /run/devlog, and /run
# is the device's own; rsyslog listens there and forwards everything to the appliance's syslog receiver.
start_rsyslog() {
  local D=$LAB/dev/$1
  # Devices start in parallel: a second `ln` losing the race finds the link the first one made.
  [ -e /dev/log ] || [ -L /dev/log ] || ln -s /run/devlog /dev/log 2>/dev/null || [ -L /dev/log ]
  cat >"$D/etc/rsyslog-lab.conf" <<CONF
global(workDirectory="/run")
module(load="imuxsock" SysSock.Name="/run/devlog")
*.* action(type="omfwd" target="$LAB_SYSLOG_HOST" port="$LAB_SYSLOG_PORT" protocol="tcp" TCP_Framing="octet-counted"
           template="RSYSLOG_SyslogProtocol23Format" action.resumeRetryCount="-1" action.resumeInterval="1"
           queue.type="LinkedList" queue.size="10000")
CONF
  in_device "$1" /usr/sbin/rsyslogd -f /etc/rsyslog-lab.conf -i /run/rsyslogd.pid
}

start_forward() { # start_forward <loopback-port> <lan-ip> <port>
  local busy
  busy=$(ss -Hltnp "sport = :$1")
  [ -z "$busy" ] || die "127.0.0.1:$1 is already in use: $busy"
  setsid -f socat "TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork,backlog=64" "TCP:$2:$3,connect-timeout=5,retry=40,interval=0.05" \
    </dev/null >>"$LAB/forwards.log" 2>&1 9>&-
}

health() { # health <name>: prints nothing and succeeds when the device answers, else prints why not
  local l pid
  l=$(find_device "$1")
  set -- $l
  pid=$(anchor_pid "$1") || { echo "$1: not running"; return 1; }
  ssh_banner_ok "$5" || { echo "$1: no SSH banner on 127.0.0.1:$5"; return 1; }
  [ "$6" = - ] || telnet_ok "$6" || { echo "$1: no telnet negotiation on 127.0.0.1:$6"; return 1; }
  case $2 in
    frr) timeout 5 nsenter -t "$pid" -n -m -u -p -- vtysh -c 'show version' >/dev/null 2>&1 9>&- \
           || { echo "$1: vtysh does not answer"; return 1; } ;;
    bird) timeout 5 nsenter -t "$pid" -n -m -u -p -- birdc show status >/dev/null 2>&1 9>&- \
           || { echo "$1: birdc does not answer"; return 1; } ;;
  esac
}

lab_version() { # digest of the files a lab is built from: a lab started from other ones is not reused
  (cd "$HERE" && find lab.sh lab-etc.sh bin etc -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -c1-16
}

lab_health() { # prints the reasons and fails when any device is unhealthy
  local l ok=0
  for l in "${DEVICES[@]}"; do set -- $l; health "$1" || ok=1; done
  return $ok
}

up() {
  local l pids=() i d failed=0 why
  mkdir -p "$LAB"
  install_packages   # first: even iproute2 and procps may be missing on a bare machine
  ip netns add cvlab-probe 2>/dev/null && ip netns del cvlab-probe \
    || die "cannot create network namespaces (needs root with CAP_NET_ADMIN and CAP_SYS_ADMIN)"
  log "tearing down what is left"
  down
  mkdir -p "$LAB"
  make_lab_keys
  install -D -m 0755 -t "$LAB/bin" "$HERE/bin/birdsh" "$HERE/bin/device-init"
  make_network
  # devices start in parallel: most of the time goes into FRR's and sshd's start-up and host keys
  for l in "${DEVICES[@]}"; do
    set -- $l
    mkdir -p "$LAB/dev/$1"
    ( start_device "$1" "$2" "$3" "$4" ) >"$LAB/dev/$1/start.log" 2>&1 &
    pids+=("$!:$1")
  done
  for i in "${pids[@]}"; do
    d=${i#*:}
    if ! wait "${i%%:*}"; then
      failed=1
      echo "--- $d failed, last lines of $LAB/dev/$d/start.log:"
      tail -n 20 "$LAB/dev/$d/start.log"
    fi
  done
  [ $failed = 0 ] || die "device start failed"
  for l in "${DEVICES[@]}"; do
    set -- $l
    start_forward "$5" "$3" 22
    [ "$6" = - ] || start_forward "$6" "$3" 23
  done
  log "waiting for the devices to answer"
  for i in $(seq 100); do
    why=$(lab_health) && break
    sleep 0.2
  done
  [ -z "$why" ] || die "lab did not become healthy: $why"
  lab_version >"$LAB/version"
  log "lab is up"
}

ensure() {
  local why l running=0
  if [ -f "$LAB/version" ] && [ "$(<"$LAB/version")" != "$(lab_version)" ]; then
    log "lab was started from other lab files, restarting it"
    up
    return
  fi
  if why=$(lab_health); then log "lab is up and healthy, reusing it"; return 0; fi
  for l in "${DEVICES[@]}"; do anchor_pid "${l%% *}" >/dev/null && running=1; done
  if [ $running = 1 ]; then
    # a second look before restarting a lab that other test processes may be using
    sleep 1
    if why=$(lab_health); then log "lab is up and healthy, reusing it"; return 0; fi
  fi
  log "lab not healthy ($(echo $why)), starting it"
  up
}

rekey() { # rekey <name>
  local l i
  l=$(find_device "${1:-}") || die "usage: lab.sh rekey DEVICE (one of: $(printf '%s ' "${DEVICES[@]%% *}"))"
  set -- $l
  anchor_pid "$1" >/dev/null || die "device $1 is not running"
  make_host_keys "$1" "$4"
  # only the listener: sessions already open keep running, like on a real device
  in_device "$1" bash -c 'pid=$(</run/sshd.pid); kill "$pid"; for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done; exit 1' \
    || die "$1: sshd did not stop"
  start_sshd "$1"
  for i in $(seq 50); do ssh_banner_ok "$5" && break; sleep 0.1; done
  ssh_banner_ok "$5" || die "$1: sshd did not come back after rekey"
  log "$1: new host keys, sshd restarted"
}

status() {
  local l user pass shell st rc=0
  printf '%-6s %-6s %-10s %-16s %-16s %-16s %-28s %s\n' DEVICE KIND HOSTNAME SSH TELNET LAN LOGIN STATE
  for l in "${DEVICES[@]}"; do
    set -- $l
    read -r user pass shell _ <<<"$(account "$2")"
    if st=$(health "$1"); then st=up; else st="DOWN (${st#*: })"; rc=1; fi
    printf '%-6s %-6s %-10s %-16s %-16s %-16s %-28s %s\n' "$1" "$2" "$4" "127.0.0.1:$5" \
      "$([ "$6" = - ] && echo - || echo "127.0.0.1:$6")" "$3:22" "$user/$pass -> ${shell##*/}" "$st"
  done
  echo "keys: $LAB/keys/lab_ed25519, $LAB/keys/lab_ed25519_enc (passphrase labpass)"
  echo "root shell in a device: nsenter -t \$(cat $LAB/dev/r1/anchor.pid) -n -m -u -p vtysh"
  return $rc
}

[ "$(id -u)" = 0 ] || die "must run as root"
case "${1:-}" in
  up) wait_for_tests release; take_lock; up; status ;;
  ensure) take_lock; ensure ;;
  down) wait_for_tests keep; take_lock; down; log "lab is down" ;;
  status) status ;;
  rekey) take_lock; rekey "${2:-}" ;;
  packages) shift; take_lock; mkdir -p "$LAB"; install_packages "$@" ;;
  *) die "usage: lab.sh up|ensure|down|status|rekey DEVICE|packages" ;;
esac
