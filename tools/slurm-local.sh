#!/bin/bash
# A private one-node SLURM on this machine, for testing the batch scripts
# in jobs/ (docs/running.md).  Everything lives in DIR: a munge key
# and socket of its own, slurm.conf, state, logs and pid files, so it does
# not touch a system munge or SLURM.  Needs root and Debian's slurm-wlm
# and munge packages (tools/deps.sh installs them).  The node
# offers FAKE_GPUS (default: one per CPU) GPUs as a counted resource, so
# that scripts asking for --gpus-per-task run here unchanged.
#
#   tools/slurm-local.sh start DIR   # prints "export SLURM_CONF=DIR/slurm.conf"
#   tools/slurm-local.sh stop DIR    # stops only the daemons it started
set -euo pipefail
cmd=${1:?usage: slurm-local.sh start|stop DIR}
D=$(realpath -m "${2:?usage: slurm-local.sh start|stop DIR}")

stop() {
  for f in slurmd slurmctld munged; do
    if [ -s "$D/$f.pid" ]; then
      pid=$(cat "$D/$f.pid")
      kill "$pid" 2> /dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
      rm -f "$D/$f.pid"
    fi
  done
}

start() {
  [ "$(id -u)" -eq 0 ] || { echo "slurm-local.sh: needs root" >&2; exit 77; }
  for p in munged slurmctld slurmd sbatch; do
    command -v $p > /dev/null || { echo "slurm-local.sh: $p is not installed (tools/deps.sh)" >&2; exit 77; }
  done
  mkdir -p "$D/state" "$D/spool" "$D/log" "$D/munge"
  chmod 700 "$D/munge"
  host=$(hostname -s)
  cpus=$(nproc)
  gpus=${FAKE_GPUS:-$cpus}
  mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
  # munge: its own key and socket.
  dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 status=none
  chmod 400 "$D/munge/munge.key"
  munged --force --key-file="$D/munge/munge.key" --socket="$D/munge/sock" --pid-file="$D/munged.pid" \
         --log-file="$D/log/munged.log" --seed-file="$D/munge/seed"
  for _ in $(seq 50); do [ -S "$D/munge/sock" ] && break; sleep 0.1; done
  cat > "$D/slurm.conf" <<CONF
ClusterName=fcbolocal
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmctldPort=$((6817 + 10 + RANDOM % 1000))
SlurmdPort=$((7817 + 10 + RANDOM % 1000))
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
GresTypes=gpu
NodeName=$host CPUs=$cpus RealMemory=$mem Gres=gpu:$gpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  # Stand-in GPUs: SLURM wants a device file per GPU and only checks that
  # it exists, so job scripts that ask for --gpus-per-task run unchanged on
  # a machine without GPUs (SLURM then sets CUDA_VISIBLE_DEVICES per task).
  : > "$D/gres.conf"
  for g in $(seq 0 $((gpus - 1))); do
    touch "$D/fakegpu$g"
    echo "NodeName=$host Name=gpu File=$D/fakegpu$g" >> "$D/gres.conf"
  done
  export SLURM_CONF=$D/slurm.conf
  slurmctld -f "$SLURM_CONF"
  slurmd -f "$SLURM_CONF"
  for _ in $(seq 100); do
    if sinfo -h -o %t 2> /dev/null | grep -q idle; then
      echo "export SLURM_CONF=$SLURM_CONF"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm-local.sh: the node did not become idle; logs in $D/log" >&2
  sinfo >&2 || true
  stop
  exit 1
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) echo "usage: slurm-local.sh start|stop DIR" >&2; exit 2 ;;
esac
