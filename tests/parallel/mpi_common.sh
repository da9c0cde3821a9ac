# Sourced by the multi-rank tests: `mpirun` with what a CI container needs
# (root, more ranks than cores).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none  # containers often forbid cross-process memory access
if ! command -v mpirun >/dev/null; then
  echo "mpirun not found: run scripts/install_deps.sh (openmpi-bin)" >&2
  exit 1
fi
# A plain command line (not a function), so `$MPIRUN ... &` gives mpirun's own pid:
# signalling it ends every rank.
MPIRUN="mpirun --oversubscribe --bind-to none"

# The pid of rank 0 (the serving process) or of a worker rank of the job whose mpirun is $2.
rank_pid() {  # rank_pid 0|worker MPIRUN_PID
  local p
  for p in $(pgrep -P "$2"); do
    local rank
    rank=$(tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
    [ -n "$rank" ] || continue
    if { [ "$1" = 0 ] && [ "$rank" = 0 ]; } || { [ "$1" = worker ] && [ "$rank" != 0 ]; }; then
      echo "$p"
      return
    fi
  done
}
# Waits up to $2 s for process $1 to end; its exit status in $exit_status.
wait_exit() {
  local i
  for i in $(seq 1 $(($2 * 10))); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$1" 2>/dev/null && fail "process $1 still running after $2 s"
  exit_status=0
  wait "$1" 2>/dev/null || exit_status=$?
}
