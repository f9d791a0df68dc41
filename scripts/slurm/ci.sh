#!/bin/bash
# CI proof of the Slurm sharding on a REAL single-node Slurm (slurm-wlm 22.05, munge) on this machine.
#
#   bash scripts/slurm/ci.sh            # GPDP=/path/to/gpdp (default: target/release/gpdp of the repo)
#
# Installs slurmctld/slurmd/slurm-client/munge with apt-get when missing (root), starts munged,
# slurmctld and slurmd on private sockets, ports and state under a temp dir, and for each study
# (STUDIES, default: mia-sweep excursion-1d excursion-2d) with small sizes:
#   1. the unsharded run into FULL (the arguments come from the .sbatch script's --print-args);
#   2. the .sbatch script as a 4-task array (sbatch --array=0-3) and merge.sh submitted with
#      --dependency=afterok:<array job>; diff -r FULL MERGED;
#   3. resume: shard 1 deleted, merge.sh must refuse; `sbatch --array=1,2` redoes 1 and skips 2;
#      merge again; diff -r FULL MERGED again;
#   4. `gpdp merge` must refuse missing, duplicate and mismatched shards, and corrupted shard files.
# Everything it started is stopped and the temp dir removed on any exit (KEEP_TMP=1 keeps the dir).
set -euo pipefail -o errtrace

T0=$(date +%s.%N)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/scripts/slurm
GPDP=${GPDP:-$ROOT/target/release/gpdp}
[[ $GPDP == /* ]] || GPDP=$ROOT/$GPDP
STUDIES=${STUDIES:-mia-sweep excursion-1d excursion-2d}
TASKS=4
JOB_TIMEOUT=${JOB_TIMEOUT:-150}
export PATH=$PATH:/usr/sbin:/sbin
# Nothing of an enclosing Slurm job (if any) may leak into ours.
for v in $(compgen -v SLURM_ || true); do unset "$v"; done
unset NSHARDS SHARDS MERGED MERGE_FORCE GPDP_SWEEP_CONFIG

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
say() { echo "slurm-ci: $*"; }
SUMMARY=()
FAILED=""
PASSED=0
fail() { FAILED=$*; echo "slurm-ci: FAIL: $*" >&2; exit 1; }

# ---------------------------------------------------------------- preconditions
[[ $(id -u) == 0 ]] || fail "must run as root (apt-get, daemons)"
[[ -x $GPDP ]] || fail "no gpdp binary at $GPDP (build it, or set GPDP=)"
for s in $STUDIES; do [[ -f $HERE/$s.sbatch ]] || fail "no $HERE/$s.sbatch"; done
# The shard-task block must be the same in the three .sbatch scripts.
block() { sed -n '/^# >>> shard task/,/^# <<< shard task/p' "$1"; }
for s in excursion-1d excursion-2d; do
  cmp -s <(block "$HERE/mia-sweep.sbatch") <(block "$HERE/$s.sbatch") ||
    fail "the '# >>> shard task' block of $s.sbatch differs from mia-sweep.sbatch's"
done
"$GPDP" merge --help > /dev/null 2>&1 || fail "$GPDP has no 'merge' command"
declare -A CMD=([mia-sweep]="mia sweep" [excursion-1d]="excursion 1d" [excursion-2d]="excursion 2d")
for s in $STUDIES; do
  h=$("$GPDP" ${CMD[$s]} --help 2>&1) || fail "'gpdp ${CMD[$s]} --help' failed"
  [[ $h == *--shard* ]] || fail "'gpdp ${CMD[$s]}' has no --shard option"
done

# ---------------------------------------------------------------- install
t=$(now)
if ! command -v slurmctld > /dev/null || ! command -v slurmd > /dev/null || ! command -v sbatch > /dev/null ||
  ! command -v munged > /dev/null; then
  say "installing slurmctld slurmd slurm-client munge (apt-get)"
  apt-get update -qq > /dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurmctld slurmd slurm-client munge > /dev/null
fi
SUMMARY+=("install check/apt-get: $(secs "$t" "$(now)") s (slurm $(dpkg-query -W -f '${Version}' slurmctld), munge $(dpkg-query -W -f '${Version}' munge))")

# ---------------------------------------------------------------- temp dir, cleanup
W=$(mktemp -d /tmp/gpdp-slurm-ci.XXXXXX)
chmod 711 "$W" # munged wants its socket's folder searchable by all
PIDS_SLURMD="" PIDS_CTLD="" PID_MUNGE=""
stop_pids() { # pid...: TERM all, wait; KILL what is left after 10 s
  local p i left
  for p in "$@"; do kill "$p" 2> /dev/null || true; done
  for ((i = 0; i < 100; i++)); do
    left=""
    for p in "$@"; do if kill -0 "$p" 2> /dev/null; then left+=" $p"; fi; done
    [[ -n $left ]] || return 0
    sleep 0.1
  done
  echo "slurm-ci: pid(s)$left ignored SIGTERM for 10 s; SIGKILL" >&2
  for p in $left; do kill -9 "$p" 2> /dev/null || true; done
}
cleanup() {
  local rc=$?
  set +e
  if ((rc != 0)); then
    if [[ -z $FAILED ]]; then
      if ((rc == 130)); then FAILED="interrupted"; else FAILED="exit $rc at line ${FAILED_LINE:-?} of $0"; fi
    fi
    for f in "$W"/logs/*; do
      [[ -s $f ]] || continue
      echo "----- $f" >&2; tail -n "$([[ $f == *.out ]] && echo 3 || echo 20)" "$f" >&2
    done
    for f in "$W"/slurmctld.log "$W"/slurmd.log "$W"/munged.log; do
      local errs
      errs=$(grep -iE 'error|fatal' "$f" 2> /dev/null | grep -viE 'pmix|state file|trying backup|hwloc|Domain socket' | tail -n 15)
      [[ -z $errs ]] || printf '%s\n' "----- $f (errors, last 15)" "$errs" >&2
    done
    echo "slurm-ci: FAIL: $FAILED" >&2
  fi
  local t
  t=$(now)
  # a daemon that failed before we read its pid file is still ours
  PIDS_CTLD=${PIDS_CTLD:-$(cat "$W/run/slurmctld.pid" 2> /dev/null)}
  PIDS_SLURMD=${PIDS_SLURMD:-$(cat "$W/run/slurmd.pid" 2> /dev/null)}
  PID_MUNGE=${PID_MUNGE:-$(cat "$W/munged.pid" 2> /dev/null)}
  if [[ -n $PIDS_CTLD ]] && kill -0 "$PIDS_CTLD" 2> /dev/null; then
    # cancel our jobs and let them end while slurmd and slurmctld still answer their steps
    scancel --quiet --user=root 2> /dev/null
    for ((i = 0; i < 100; i++)); do [[ -z $(squeue -h -o %i 2> /dev/null) ]] && break; sleep 0.1; done
  fi
  stop_pids $PIDS_SLURMD $PIDS_CTLD   # empty if never started
  stop_pids $PID_MUNGE
  # anything still working in the temp dir is one of our jobs' (e.g. an orphaned slurmstepd)
  local left=() d c
  for d in /proc/[0-9]*; do
    c=$(readlink "$d/cwd" 2> /dev/null) || continue
    [[ $c == "$W" || $c == "$W/"* ]] && [[ ${d#/proc/} != "$$" && ${d#/proc/} != "$BASHPID" ]] && left+=("${d#/proc/}")
  done
  if ((${#left[@]})); then echo "slurm-ci: stopping leftover job processes ${left[*]}" >&2; stop_pids "${left[@]}"; fi
  echo "slurm-ci: stopped slurmd, slurmctld, munged in $(secs "$t" "$(now)") s"
  if [[ ${KEEP_TMP:-0} == 1 ]]; then echo "slurm-ci: kept $W" >&2; else rm -rf "$W"; fi
  # the closing line, last: studies passed / failed
  if ((rc == 0)); then echo "slurm-ci: ${PASSED:-0} passed, 0 failed"; else echo "slurm-ci: ${PASSED:-0} passed, 1 failed"; fi
  exit $rc
}
trap 'FAILED_LINE=$LINENO' ERR
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$W/state" "$W/spool" "$W/logs" "$W/run"

# ---------------------------------------------------------------- munge
t=$(now)
dd if=/dev/urandom of="$W/munge.key" bs=1024 count=1 status=none
chmod 600 "$W/munge.key"
munged --socket="$W/munge.sock" --key-file="$W/munge.key" --pid-file="$W/munged.pid" \
  --log-file="$W/munged.log" --seed-file="$W/munged.seed" || fail "munged did not start (see $W/munged.log)"
PID_MUNGE=$(cat "$W/munged.pid")
munge --socket="$W/munge.sock" -n | unmunge --socket="$W/munge.sock" > /dev/null || fail "munge round trip failed"

# ---------------------------------------------------------------- slurm.conf
port_free() { ! (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }
PORT=""
for ((p = 16817; p < 17817; p += 2)); do
  if port_free "$p" && port_free $((p + 1)); then PORT=$p; break; fi
done
[[ -n $PORT ]] || fail "no free pair of TCP ports in 16817-17817"
# The node as slurmd sees it (CPUs, sockets, cores, threads, memory), renamed localhost.
NODE=$(slurmd -C | head -n 1 | sed -e 's/^NodeName=[^ ]*/NodeName=localhost NodeAddr=127.0.0.1/')
[[ $NODE == *CPUs=* ]] || fail "slurmd -C gave '$NODE'"
CPUS=$(sed -n 's/.*CPUs=\([0-9]*\).*/\1/p' <<< "$NODE")
export SLURM_CONF=$W/slurm.conf
cat > "$SLURM_CONF" << EOF
ClusterName=gpdpci
SlurmctldHost=localhost
SlurmUser=root
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$W/munge.sock
StateSaveLocation=$W/state
SlurmdSpoolDir=$W/spool
SlurmctldPidFile=$W/run/slurmctld.pid
SlurmdPidFile=$W/run/slurmd.pid
SlurmctldLogFile=$W/slurmctld.log
SlurmdLogFile=$W/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SchedulerParameters=kill_invalid_depend
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
$NODE State=UNKNOWN
PartitionName=ci Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF

# ---------------------------------------------------------------- daemons
wait_pidfile() { local i; for ((i = 0; i < 100; i++)); do [[ -s $1 ]] && { cat "$1"; return 0; }; sleep 0.1; done; return 1; }
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
PIDS_CTLD=$(wait_pidfile "$W/run/slurmctld.pid") || fail "slurmctld wrote no pid file"
slurmd -f "$SLURM_CONF" -N localhost || fail "slurmd did not start"
PIDS_SLURMD=$(wait_pidfile "$W/run/slurmd.pid") || fail "slurmd wrote no pid file"
state=""
for ((i = 0; i < 300; i++)); do
  state=$(sinfo -h -N -n localhost -o %T 2> /dev/null || true)
  [[ $state == idle ]] && break
  sleep 0.1
done
[[ $state == idle ]] || fail "node localhost not idle after 30 s (sinfo: '${state:-no answer}')"
SUMMARY+=("munged + slurmctld + slurmd up, node idle: $(secs "$t" "$(now)") s (ports $PORT/$((PORT + 1)), $CPUS CPUs)")
say "slurm up: $(sinfo -h -o '%P %a %D %T %N %c CPUs')"

# ---------------------------------------------------------------- helpers
job_states() { scontrol show job "$1" -o 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
wait_jobs() { # jobid...: until none is pending/running, at most JOB_TIMEOUT s
  local deadline=$(($(date +%s) + JOB_TIMEOUT)) j st
  while :; do
    st=""
    for j in "$@"; do st+=" $(job_states "$j" | tr '\n' ' ')"; done
    [[ -n ${st// /} ]] || fail "scontrol knows none of jobs $*"
    [[ $st =~ PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|SIGNALING|STAGE_OUT ]] || return 0
    (($(date +%s) < deadline)) || fail "jobs $* not done after $JOB_TIMEOUT s: $st"
    sleep 0.25
  done
}
all_completed() { # jobid [count]: every (array) task COMPLETED
  local st n
  st=$(job_states "$1")
  n=$(grep -c . <<< "$st")
  [[ -z ${2:-} || $n == "$2" ]] && ! grep -qv '^COMPLETED$' <<< "$st"
}
must_fail() { # what expected_substring command...: the command must exit non-zero, saying expected_substring
  local what=$1 want=$2 out
  shift 2
  if out=$("$@" 2>&1); then fail "$what: expected a refusal, but it succeeded"; fi
  [[ ${out,,} == *"${want,,}"* ]] || fail "$what: refused, but without '$want' in: $out"
  say "  ok: $what refused: $(tail -n 1 <<< "$out" | cut -c1-160)"
}

declare -A ENVS=(
  [mia-sweep]="MIA_SHADOW=400 MIA_EVAL=400 MIA_REPEATS=2 MIA_RIDGE=0.1,0.5,1,2 MIA_SCALE=0.5,1,inf MIA_DRAWS=1,3"
  [excursion-1d]="EX1D_NOISE=0.3,0.5 EX1D_N=50,100 EX1D_PAIRS=30 EX1D_VALIDATION_PAIRS=30 EX1D_DRAWS_PER_PAIR=5 EX1D_MESH_POINTS=200 EX1D_ROUNDS=1 EX1D_PRIVATE_ROUNDS=1"
  [excursion-2d]="EX2D_NOISE=0.1,0.3,0.5 EX2D_N=50 EX2D_SEARCH_WORLDS=4 EX2D_VALIDATION_WORLDS=4 EX2D_EVAL_WORLDS=8 EX2D_EVAL_GRID=20 EX2D_SEARCH_GRID=15 EX2D_PATH_GRID=15 EX2D_PATHS_PER_WORLD=5 EX2D_ROUNDS=1"
)
# Small CI node: one CPU and little memory per task, whatever the scripts ask for a real cluster.
SB=(--cpus-per-task=1 --mem=2G --time=10 --output="$W/logs/%x-%A_%a.out" --error="$W/logs/%x-%A_%a.err")

run_study() {
  local s=$1 d=$W/$1 t tf ta tr jid mjid rjid args
  local -a vars
  read -r -a vars <<< "${ENVS[$s]}"
  mkdir -p "$d"
  vars+=("GPDP=$GPDP" "SHARDS=$d/shards")
  say "$s: ${vars[*]}"
  # 1. unsharded, with exactly the script's arguments
  mapfile -t args < <(env "${vars[@]}" bash "$HERE/$s.sbatch" --print-args)
  t=$(now)
  "$GPDP" "${args[@]}" --out "$d/FULL" > "$W/logs/$s-full.log" 2>&1 || fail "$s: unsharded run failed (log: $W/logs/$s-full.log)"
  tf=$(secs "$t" "$(now)")
  # 2. array + merge after it
  t=$(now)
  jid=$(cd "$d" && env "${vars[@]}" sbatch --parsable "${SB[@]}" --array=0-$((TASKS - 1)) "$HERE/$s.sbatch") ||
    fail "$s: sbatch of the array failed"
  mjid=$(cd "$d" && env GPDP="$GPDP" sbatch --parsable "${SB[@]}" --output="$W/logs/%x-%j.out" --error="$W/logs/%x-%j.err" \
    --dependency=afterok:"$jid" --export="ALL,SHARDS=$d/shards,MERGED=$d/MERGED" "$HERE/merge.sh") ||
    fail "$s: sbatch of merge.sh failed"
  wait_jobs "$jid" "$mjid"
  all_completed "$jid" "$TASKS" || fail "$s: array job $jid: task states $(job_states "$jid" | tr '\n' ' ')"
  all_completed "$mjid" || fail "$s: merge job $mjid: $(job_states "$mjid")"
  ta=$(secs "$t" "$(now)")
  diff -r "$d/FULL" "$d/MERGED" > "$W/logs/$s-diff.txt" 2>&1 ||
    fail "$s: MERGED differs from FULL: $(head -c 600 "$W/logs/$s-diff.txt")"
  say "  ok: $TASKS-task array $jid + merge $mjid (afterok): diff -r FULL MERGED identical"
  # 3. resume one lost task; the complete one beside it skips
  rm -rf "$d/shards/shard-1" "$d/shards/.done/1"
  must_fail "$s: merge.sh with shard 1 missing" "--array=1" env GPDP="$GPDP" bash "$HERE/merge.sh" "$d/shards" "$d/MERGED2"
  t=$(now)
  rjid=$(cd "$d" && env "${vars[@]}" sbatch --parsable "${SB[@]}" --array=1,2 "$HERE/$s.sbatch") ||
    fail "$s: sbatch --array=1,2 failed"
  wait_jobs "$rjid"
  all_completed "$rjid" 2 || fail "$s: resume job $rjid: $(job_states "$rjid" | tr '\n' ' ')"
  grep -q "shard 2/$TASKS is complete" "$W/logs/gpdp-$s-${rjid}_2.out" || fail "$s: resumed task 2 did not skip"
  grep -q "shard 1/$TASKS done" "$W/logs/gpdp-$s-${rjid}_1.out" || fail "$s: resumed task 1 did not run"
  env GPDP="$GPDP" bash "$HERE/merge.sh" "$d/shards" "$d/MERGED2" > "$W/logs/$s-merge2.log" 2>&1 ||
    fail "$s: merge after the resume failed: $(cat "$W/logs/$s-merge2.log")"
  diff -r "$d/FULL" "$d/MERGED2" > /dev/null || fail "$s: MERGED after the resume differs from FULL"
  tr=$(secs "$t" "$(now)")
  say "  ok: resume (sbatch --array=1,2: task 1 re-ran, task 2 skipped), merge, diff -r identical"
  # 4. gpdp merge refuses bad shard sets
  local sh=$d/shards
  must_fail "$s: gpdp merge, shard 3 missing" "" "$GPDP" merge --out "$d/bad1" "$sh/shard-0" "$sh/shard-1" "$sh/shard-2"
  must_fail "$s: gpdp merge, shard 0 twice" "" "$GPDP" merge --out "$d/bad2" "$sh/shard-0" "$sh/shard-0" "$sh/shard-1" "$sh/shard-2" "$sh/shard-3"
  must_fail "$s: gpdp merge, shard 0 twice instead of 3" "" "$GPDP" merge --out "$d/bad3" "$sh/shard-0" "$sh/shard-1" "$sh/shard-2" "$sh/shard-0"
  local other=() k
  for ((k = 0; k < ${#args[@]}; k++)); do
    if [[ ${args[k]} == --seed ]]; then k=$((k + 1)); else other+=("${args[k]}"); fi
  done
  other+=(--seed 7)
  "$GPDP" "${other[@]}" --shard 3/$TASKS --out "$d/seed7-shard-3" > "$W/logs/$s-seed7.log" 2>&1 ||
    fail "$s: shard 3 with --seed 7 failed (log: $W/logs/$s-seed7.log)"
  must_fail "$s: gpdp merge, shard 3 of a run with another --seed" ".seed = 7, where the first has" "$GPDP" merge --out "$d/bad5" "$sh/shard-0" "$sh/shard-1" "$sh/shard-2" "$d/seed7-shard-3"
  # a corrupted shard file (one flipped bit in its last byte, inside the last value; then a
  # byte appended) is refused by its checksum, naming the file
  cp -r "$sh/shard-1" "$d/flipped-1"
  python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-1] ^= 1; open(p, "wb").write(b)' "$d/flipped-1/shard.cbor"
  must_fail "$s: gpdp merge, a flipped bit in shard 1" "flipped-1/shard.cbor: checksum mismatch" "$GPDP" merge --out "$d/bad6" "$sh/shard-0" "$d/flipped-1" "$sh/shard-2" "$sh/shard-3"
  cp -r "$sh/shard-1" "$d/appended-1"
  printf 'x' >> "$d/appended-1/shard.cbor"
  must_fail "$s: gpdp merge, a byte appended to shard 1" "trailing byte(s)" "$GPDP" merge --out "$d/bad7" "$sh/shard-0" "$d/appended-1" "$sh/shard-2" "$sh/shard-3"
  if [[ -n ${PREV_SHARDS:-} ]]; then
    must_fail "$s: gpdp merge, shard 3 of another study" "is a shard of" "$GPDP" merge --out "$d/bad4" "$sh/shard-0" "$sh/shard-1" "$sh/shard-2" "$PREV_SHARDS/shard-3"
  fi
  # a manifest mismatch (same SHARDS, other parameters) is refused by the task itself
  must_fail "$s: a task with other parameters on the same SHARDS" "another sweep" \
    env "${vars[@]}" SLURM_ARRAY_TASK_ID=0 MIA_SEED=7 EX1D_SEED=7 EX2D_SEED=7 bash "$HERE/$s.sbatch"
  PREV_SHARDS=$sh
  SUMMARY+=("$(printf '%-13s unsharded %5s s | %d-task array + merge %5s s | resume %5s s | diff -r FULL MERGED: identical (%d files)' \
    "$s" "$tf" "$TASKS" "$ta" "$tr" "$(find "$d/FULL" -type f | wc -l)")")
}

PREV_SHARDS=""
PASSED=0
for s in $STUDIES; do
  run_study "$s"
  PASSED=$((PASSED + 1))
done

echo
echo "slurm-ci summary ($(sinfo --version), node localhost, $CPUS CPUs, gpdp: $GPDP)"
for l in "${SUMMARY[@]}"; do echo "  $l"; done
echo "  total $(secs "$T0" "$(now)") s (before stopping the daemons)"
