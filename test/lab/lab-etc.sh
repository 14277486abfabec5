# lab-etc.sh - sourced by lab.sh: the files each lab device's /etc overlay starts from (sshd, PAM, FRR, xinetd).
# Uses lab.sh's LAB, HERE and account().

# Written into dev/<name>/etc before the overlay is mounted there; they shadow the host's files.
seed_etc() { # seed_etc <name> <kind> <lan-ip> <hostname>
  local E=$LAB/dev/$1/etc user
  # test/lab/etc/<name>/ holds the device's own configs, the ones a backup should find
  [ -d "$HERE/etc/$1" ] && cp -r "$HERE/etc/$1/." "$E/"
  mkdir -p "$E/ssh" "$E/pam.d"
  echo "$4" >"$E/hostname"
  { cat /etc/hosts; echo "127.0.1.1 $4"; } >"$E/hosts"
  { cat /etc/shells; echo /usr/bin/vtysh; echo "$LAB/bin/birdsh"; } >"$E/shells"
  # A wrong password fails at once instead of after pam_unix's 2 s and login's 3 s: auth-failure tests stay fast.
  sed -E 's/^(auth.*pam_unix\.so.*)$/\1 nodelay/' /etc/pam.d/common-auth >"$E/pam.d/common-auth"
  sed -E 's/(pam_faildelay\.so +)delay=[0-9]+/\1delay=0/' /etc/pam.d/login >"$E/pam.d/login"
  printf '*** %s - confvault device lab - authorised access only ***\n' "$4" >"$E/issue.net"
  read -r user _ <<<"$(account "$2")"
  cat >"$E/ssh/sshd_config" <<EOF
# sshd of lab device $1 ($4), written by test/lab/lab.sh
ListenAddress $3
Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
HostKey /etc/ssh/ssh_host_ecdsa_key
HostKey /etc/ssh/ssh_host_rsa_key
PidFile /run/sshd.pid
AllowUsers $user
PermitRootLogin no
UsePAM yes
PasswordAuthentication yes
KbdInteractiveAuthentication yes
PubkeyAuthentication yes
AuthorizedKeysFile .ssh/authorized_keys
Banner /etc/issue.net
PrintMotd no
PrintLastLog no
UseDNS no
X11Forwarding no
AllowTcpForwarding no
# test suites open many sessions at once
MaxStartups 100:30:200
LogLevel VERBOSE
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
  case $2 in
    frr)
      sed -e 's/^bgpd=no/bgpd=yes/' /etc/frr/daemons >"$E/frr/daemons"
      echo 'service integrated-vtysh-config' >"$E/frr/vtysh.conf"
      # netops is in group frr: "write memory" works as on a real router
      chown -R frr:frr "$E/frr"
      chmod 0770 "$E/frr"
      chmod 0660 "$E/frr/"*
      # telnet: xinetd runs telnetd, telnetd runs /bin/login, login starts the user's shell (vtysh)
      cat >"$E/xinetd.conf" <<EOF
# xinetd of lab device $1: telnet on the LAN address, written by test/lab/lab.sh
defaults
{
  instances      = 20
  log_type       = FILE /var/log/xinetd.log
  log_on_success = HOST PID
  log_on_failure = HOST
}
service telnet
{
  type        = UNLISTED
  port        = 23
  bind        = $3
  socket_type = stream
  protocol    = tcp
  wait        = no
  user        = root
  server      = /usr/sbin/telnetd
  server_args = -h
}
EOF
      ;;
    bird)
      chown -R bird:bird "$E/bird"
      chmod 0750 "$E/bird"
      chmod 0640 "$E/bird/"*
      ;;
  esac
}
